"""Retrieval over real documentation folders: how often the passage that answers a question is found, per method.

    python bench/documents_retrieval.py --split dev [--methods bm25,bm25_focus,dense,hybrid] [--words 200,300]

For each question of the split's sets (bench/labels/documents/questions/), the answering passage is the chunk of a
source file that holds its evidence (the writer's verbatim sentences: at least 60% of their stemmed words, or every
key string); a cross-file question needs both of its evidence parts. Per method and chunk size: recall@1/5/10 of
the answering chunk among the chunks the documents composer retrieves (augmenter.documents.composer, as the agent
runs it), and, for the passages the prompt carries (augmenter.documents.passages), how often they hold the answer
and how many words they are. Methods: `bm25` (title, headings and text, over the whole folder), `bm25_focus` (the
earlier behaviour: a question word that is a document's title confines the search to that document), `bm25_parts`
(the default: also each part of a question that asks two things, the rankings interleaved), `dense` (MiniLM,
embeddings cached by content hash), `hybrid` (rank fusion of BM25 and dense), each of the last two with the parts.
Writes bench/results/documents_retrieval-<split>.json.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from documents_qa import DOCSETS, load_questions

OUT = ROOT / "bench" / "results"
METHODS = {
    "bm25": ["retriever=bm25s", "knowledge.answer.split_questions=false"],
    "bm25_focus": ["retriever=bm25s", "knowledge.answer.split_questions=false", "knowledge.answer.focus_titles=true"],
    "bm25_parts": ["retriever=bm25s"],
    "dense": ["retriever=dense"],
    "hybrid": ["retriever=hybrid"],
}


def _words(text: str) -> set[str]:
    from augmenter.knowledge.retrievers import tokenize

    return set(tokenize(text))


def holds(evidence: str, keys: list[str], text: str) -> bool:
    """Whether `text` holds the evidence part (60% of its stemmed words) or every key string of the question."""
    want = _words(evidence)
    if want and len(want & _words(text)) >= 0.6 * len(want):
        return True

    def norm(s):
        return " ".join(re.sub(r"[`*\"']", "", s.lower()).split())

    specific = [norm(k) for k in keys if norm(k) not in ("yes", "no")]
    return bool(specific) and all(k in norm(text) for k in specific)


def parts_of(question: dict) -> list[tuple[set[str], str]]:
    """(the files, the evidence) of each part the answer needs."""
    files = {s["file"] for s in question["sources"]}
    pieces = [p.strip() for p in question["evidence"].split("||") if p.strip()]
    return [(files, p) for p in pieces]


def found_at(question: dict, ranked: list) -> list[int | None]:
    """Per evidence part, the rank (from 1) of the first chunk that holds it, or None."""
    out = []
    for files, evidence in parts_of(question):
        rank = next(
            (
                i + 1
                for i, s in enumerate(ranked)
                if s.location and s.location.path in files and holds(evidence, question["keys"], s.text)
            ),
            None,
        )
        out.append(rank)
    return out


def build(folder: Path, index_dir: str, words: int, method: str, k: int):
    from augmenter.config import compose, instantiate

    overrides = [
        "knowledge=docs",
        f"knowledge.path={folder}",
        f"knowledge.index_dir={index_dir}",
        f"knowledge.words={words}",
        f"knowledge.overlap={words // 5}",
        f"knowledge.answer.chunks={k}",
        "consolidator.opinions=false",
        *METHODS[method],
    ]
    cfg = compose("chat", overrides)
    knowledge = instantiate(cfg.knowledge, "knowledge")
    retriever = instantiate(cfg.retriever, "retriever")
    consolidator = instantiate(cfg.consolidator, "consolidator", knowledge=knowledge, retriever=retriever)
    return consolidator, knowledge.composer()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=["dev", "report"], required=True)
    parser.add_argument("--methods", default="bm25,bm25_focus,bm25_parts,dense,hybrid")
    parser.add_argument("--words", default="200")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    from augmenter.memory import WorkingMemory

    questions = [q for q in load_questions(args.split, []) if q["kind"] != "unanswerable"]
    sets = sorted({q["set"] for q in questions})
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for words in [int(w) for w in args.words.split(",")]:
            for method in args.methods.split(","):
                rows, seconds = [], []
                for name in sets:
                    consolidator, composer = build(
                        DOCSETS / args.split / name, f"{tmp}/{name}-{words}", words, method, args.k
                    )
                    for q in [q for q in questions if q["set"] == name]:
                        start = time.perf_counter()
                        mem = WorkingMemory(q=q["question"])
                        mem.entities = consolidator.link(q["question"])
                        ranked = composer.retrieve(mem, consolidator)
                        seconds.append(time.perf_counter() - start)
                        ranks = found_at(q, ranked)
                        composer.chunks = 6  # the passages come from the first six, as the agent's default
                        passages = composer.selector.select(q["question"], composer.retrieve(mem, consolidator))
                        composer.chunks = args.k
                        joined = "\n".join(p.text for p in passages)
                        in_passages = [holds(e, q["keys"], joined) for _, e in parts_of(q)]
                        rows.append(
                            {
                                "id": q["id"],
                                "kind": q["kind"],
                                "ranks": ranks,
                                "passages": in_passages,
                                "passage_words": len(joined.split()),
                            }
                        )

                def full(r, k):
                    return all(x is not None and x <= k for x in r["ranks"])

                summary = {f"recall@{k}": round(sum(full(r, k) for r in rows) / len(rows), 3) for k in (1, 5, 10)}
                for kind in ("single", "cross"):
                    part = [r for r in rows if r["kind"] == kind]
                    summary[f"{kind}_recall@5"] = round(sum(full(r, 5) for r in part) / len(part), 3)
                summary["passages_hold_answer"] = round(sum(all(r["passages"]) for r in rows) / len(rows), 3)
                summary["passage_words_median"] = statistics.median(r["passage_words"] for r in rows)
                summary["search_ms_median"] = round(1000 * statistics.median(seconds), 2)
                results[f"{method}-{words}"] = {"summary": summary, "rows": rows}
                print(method, words, json.dumps(summary), file=sys.stderr, flush=True)
    out = OUT / f"documents_retrieval-{args.split}.json"
    out.write_text(
        json.dumps(
            {
                "command": "python bench/documents_retrieval.py " + " ".join(sys.argv[1:]),
                "questions": len(questions),
                "summary": {k: v["summary"] for k, v in results.items()},
                "rows": {k: v["rows"] for k, v in results.items()},
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
