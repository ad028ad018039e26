"""Recall@k of the passage holding the answer, for chunk sizes of 100, 200 and 400 words (what the default chunk
size is chosen on).

    python bench/documents_recall.py [--sizes 100,200,400] [--distractors 1000] [--work /tmp/augmenter-docs-bench]

The questions are the sample handbook's answerable ones (augmenter/documents/handbook.py, QUESTIONS: 14 that one
file answers, 4 that need two). The handbook is indexed alone and again beside a SYNTHETIC folder of
`--distractors` policy documents of other organisations (bench/documents_corpus.py), whose words compete with
the handbook's. Retrieval is what the agent runs: the Knowledge Consolidator (entity linking, BM25 over title,
headings and text) for the question alone. A single-file question is found at k when one of the top k chunks comes
from its file (and page) and holds its answer; a two-file question counts the share of its two files among the top
k chunks' files. The handbook's sections are short (most under 100 words), so its chunks hardly change with the
size; the second measure, `synthetic`, asks about the distractors' longer sections: 300 sentences drawn at random
(seeded) from the synthetic documents, each asked as a question made of the document's title and the sentence with
its numbers left out (the number is the answer); found at k when a top-k chunk of that document holds the
sentence. Overlap is a fifth of the chunk size. Writes bench/results/documents_recall.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
OUT = ROOT / "bench" / "results" / "documents_recall.json"
KS = (1, 3, 5)


def recall(kb, questions, focus: bool = True) -> dict:
    from augmenter.knowledge import BM25sRetriever, KnowledgeConsolidator

    consolidator = KnowledgeConsolidator(kb, BM25sRetriever(), k=max(KS), focus_entities=focus, opinions=False)
    single = {k: 0 for k in KS}
    cross = {k: 0.0 for k in KS}
    n_single = n_cross = 0
    for question in questions:
        _, hits = consolidator.retrieve(question["q"], (), consolidator.link(question["q"]))
        places = [(h.location.path.removeprefix("handbook/"), h.location.page, h.text.lower()) for h in hits]
        if question["kind"] == "single":
            n_single += 1
            ((rel, page),) = question["sources"]
            for k in KS:
                single[k] += any(
                    p == rel and (page is None or pg == page) and any(a.lower() in text for a in question["answer"])
                    for p, pg, text in places[:k]
                )
        else:
            n_cross += 1
            files = {rel for rel, _ in question["sources"]}
            for k in KS:
                cross[k] += len(files & {p for p, _, _ in places[:k]}) / len(files)
    return {
        "single": {f"recall@{k}": round(single[k] / n_single, 3) for k in KS},
        "cross": {f"files@{k}": round(cross[k] / n_cross, 3) for k in KS},
        "chunks": len(kb.snippets),
        "questions": {"single": n_single, "cross": n_cross},
    }


def synthetic_recall(kb, n: int = 300, seed: int = 0) -> dict:
    """Recall@k of sentences of the synthetic documents, asked with their numbers removed (see the docstring)."""
    import random
    import re

    from augmenter.knowledge import BM25sRetriever, KnowledgeConsolidator
    from augmenter.verification.splitter import split_sentences

    rng = random.Random(seed)
    rows = [s for s in kb.snippets if s.location.path.startswith("distractors/")]
    consolidator = KnowledgeConsolidator(kb, BM25sRetriever(), k=max(KS), opinions=False)
    found = {k: 0 for k in KS}
    for _ in range(n):
        chunk = rng.choice(rows)
        sentence = rng.choice(split_sentences(chunk.text))
        question = f"{chunk.location.heading[0]}: {re.sub(r'[0-9]+', ' ', sentence)}"
        _, hits = consolidator.retrieve(question, (), consolidator.link(question))
        for k in KS:
            found[k] += any(h.location.path == chunk.location.path and sentence in h.text for h in hits[:k])
    return {f"recall@{k}": round(found[k] / n, 3) for k in KS}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,200,400")
    parser.add_argument("--distractors", type=int, default=1000)
    parser.add_argument("--work", default="/tmp/augmenter-docs-bench")
    args = parser.parse_args()
    from documents_corpus import make_corpus

    from augmenter.documents import load_documents, update_index
    from augmenter.documents.handbook import QUESTIONS, handbook_dir

    questions = [q for q in QUESTIONS if q["kind"] != "none"]
    work = Path(args.work)
    mixed = work / f"handbook-plus-{args.distractors}"
    if not (mixed / "handbook").exists():
        make_corpus(mixed / "distractors", args.distractors, seed=42)
        shutil.copytree(handbook_dir(), mixed / "handbook")
    rows = []
    for words in [int(s) for s in args.sizes.split(",")]:
        for name, folder in (("handbook", handbook_dir()), (f"handbook + {args.distractors} documents", mixed)):
            with tempfile.TemporaryDirectory() as index:
                update_index([folder], index, words=words, overlap=words // 5, progress=False, warn=lambda line: None)
                kb = load_documents(str(folder), index, update=False)
                for focus in (True, False):
                    row = {
                        "words": words,
                        "overlap": words // 5,
                        "corpus": name,
                        "focus_entities": focus,
                        **recall(kb, questions, focus),
                    }
                    if focus and folder == mixed:
                        row["synthetic"] = synthetic_recall(kb)
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    OUT.write_text(
        json.dumps({"command": "python bench/documents_recall.py " + " ".join(sys.argv[1:]), "rows": rows}, indent=1)
        + "\n"
    )
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
