"""How the drafting prompt and the checks for documents were chosen, on the development questions only.

    python bench/documents_prompts.py drafts --prompt bench/prompts/documents/plain.yaml --tag plain [--verify]
    python bench/documents_prompts.py yes-no [--variant A|B]
    python bench/documents_prompts.py summary

`drafts`: for each dev question, the passages the documents composer gathers, the first token's log-probs of the
prompt (the refusal probability: how likely the answer starts with "NOT"), the greedy draft, the check's verdict
(augmenter.documents.check) and, with `--verify`, the probability the model gives "Yes" when asked whether its draft
is stated in the passages (one more scoring pass, its prefix shared). Writes
bench/results/documents_prompts/<tag>.json. The prompts compared (bench/prompts/documents/): `yes_no` asks for
"Yes"/"No" first, `plain` (shipped) does not, `examples` adds four made-up examples, `last` puts the instruction
after the question.
`yes-no`: the yes/no questions of the dev set asked for one word, Yes, No or Unknown, read from the first token's
log-probs: how often the model says "No" where the documents say no.
`summary`: the drafts against the development labels (bench/labels/documents/dev-drafts: each distinct draft of
`yes_no`, `plain` and `examples` labelled right, partial, wrong, refused or nonanswer by a helper who read the
reference answers), per prompt; how well the refusal probability, the self-verification and the check's sentence
support tell right drafts from the rest (ROC AUC); and what the check keeps at each sentence-support threshold.
Writes bench/results/documents_prompts/summary.json.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from documents_qa import DOCSETS, load_questions

OUT = ROOT / "bench" / "results" / "documents_prompts"
LABELS = ROOT / "bench" / "labels" / "documents" / "dev-drafts"
VERIFY = "Is the answer above stated in the passages? Reply Yes or No."
YES_NO = {
    "A": "Read the passages and answer the question with one word: Yes, No, or Unknown when the passages do not say.",
    "B": "Decide from the passages whether the answer to the question is yes or no. If the passages do not "
    "settle it, answer Unknown. Reply with one word: Yes, No or Unknown.",
}


def _share(top: dict, words: set[str]) -> float:
    return sum(math.exp(v) for k, v in top.items() if k.strip().lower() in words)


def _sets(questions: list[dict]):
    """(set name, its questions, its consolidator and composer, built as the agent builds them)."""
    from augmenter.config import compose, instantiate

    for name in sorted({q["set"] for q in questions}):
        cfg = compose("chat", ["knowledge=docs", f"knowledge.path={DOCSETS / 'dev' / name}"])
        knowledge = instantiate(cfg.knowledge, "knowledge")
        consolidator = instantiate(
            cfg.consolidator, "consolidator", knowledge=knowledge, retriever=instantiate(cfg.retriever, "retriever")
        )
        yield name, [q for q in questions if q["set"] == name], consolidator, knowledge.composer(), cfg


def drafts(args) -> None:
    from augmenter.config import build_llm
    from augmenter.documents.check import DocumentCheck
    from augmenter.llm.base import SamplingParams
    from augmenter.memory import WorkingMemory
    from augmenter.prompts.engine import PromptTemplate

    prompt, check, llm, out = PromptTemplate.load(args.prompt), DocumentCheck(), None, []
    scoring = SamplingParams(max_tokens=1, temperature=0.0, logprobs=20)
    for _name, questions, consolidator, composer, cfg in _sets(load_questions("dev", [])):
        llm = llm or build_llm(cfg)
        for q in questions:
            mem = WorkingMemory(q=q["question"])
            mem.entities = consolidator.link(q["question"])
            _, mem.e = composer.gather(mem, consolidator)
            messages = prompt.render(
                q=mem.q, history=[], evidence=[s.render() for s in mem.e], feedback=None, previous=None
            )
            start = time.perf_counter()
            first = llm.complete(messages, scoring).top_logprobs[0]
            draft = prompt.cut(llm.complete(messages, llm.params).text.strip())
            row = {
                "id": q["id"],
                "kind": q["kind"],
                "draft": draft,
                "refusal": composer.refusal(first),
                "first": {k: round(math.exp(v), 4) for k, v in sorted(first.items(), key=lambda kv: -kv[1])[:6]},
                "seconds": round(time.perf_counter() - start, 2),
            }
            if args.verify:
                asked = [*messages, {"role": "assistant", "content": draft}, {"role": "user", "content": VERIFY}]
                row["verify_yes"] = _share(llm.complete(asked, scoring).top_logprobs[0], {"yes"})
            found = check.inspect(mem, draft)
            row.update(
                passed=found.passed,
                refused=found.refused,
                feedback=found.feedback(),
                support=found.coverage,
                evidence=[{"id": s.id, "text": s.text, "score": s.score} for s in mem.e],
            )
            out.append(row)
            print(q["id"], row["passed"], repr(draft[:100]), file=sys.stderr, flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{args.tag}.json").write_text(json.dumps({"prompt": args.prompt, "rows": out}, indent=1))


def yes_no(args) -> None:
    from augmenter.config import build_llm
    from augmenter.documents.composer import is_yes_no
    from augmenter.llm.base import SamplingParams
    from augmenter.memory import WorkingMemory

    questions = [q for q in load_questions("dev", []) if is_yes_no(q["question"])]
    llm, out = None, []
    for _name, part, consolidator, composer, cfg in _sets(questions):
        llm = llm or build_llm(cfg)
        for q in part:
            mem = WorkingMemory(q=q["question"])
            _, mem.e = composer.gather(mem, consolidator)
            passages = "\n".join(f"[{i + 1}] {s.render()}" for i, s in enumerate(mem.e))
            messages = [
                {"role": "system", "content": YES_NO[args.variant]},
                {"role": "user", "content": f"Passages:\n{passages}\n\nQuestion: {q['question']}"},
            ]
            top = llm.complete(messages, SamplingParams(max_tokens=1, temperature=0.0, logprobs=20)).top_logprobs[0]
            said = {w: _share(top, {w}) for w in ("yes", "no", "unknown")}
            keys = [k.lower() for k in q["keys"]]
            truth = (
                "unknown" if q["kind"] == "unanswerable" else keys[0] if keys and keys[0] in ("yes", "no") else "other"
            )
            out.append({"id": q["id"], "truth": truth, **said, "said": max(said, key=said.get)})
    counts = Counter(f"{r['truth']} -> {r['said']}" for r in out)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"yes-no-{args.variant}.json").write_text(json.dumps({"counts": dict(counts), "rows": out}, indent=1))
    print(json.dumps(dict(sorted(counts.items())), indent=1))


_ITEM = re.compile(r"^## (\S+)$\n(.*?)(?=^## |\Z)", re.MULTILINE | re.DOTALL)
_DRAFT = re.compile(r"^### (R\d+)\n```text\n(.*?)\n```", re.MULTILINE | re.DOTALL)


def _draft_labels() -> dict[tuple[str, str], tuple[str, str]]:
    """{(tag, question id): (the labelled draft, its label)} from the dev-drafts sheets: each lists, per question, the
    distinct drafts of the prompts, shuffled (key.json: which prompts wrote each)."""
    key = json.loads((LABELS / "key.json").read_text())
    texts = {
        (item, rid): text
        for sheet in sorted(LABELS.glob("sheet-*.md"))
        for item, body in _ITEM.findall(sheet.read_text())
        for rid, text in _DRAFT.findall(body)
    }
    labels = {}
    for path in sorted(LABELS.glob("labels-*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            for tag in key[f"{row['item']}/{row['response']}"]:
                labels[(tag, row["item"])] = (texts[(row["item"], row["response"])], row["label"])
    return labels


def summary(args) -> None:
    from sklearn.metrics import roc_auc_score

    from augmenter.documents.composer import is_yes_no

    labels = _draft_labels()
    names = {"v2": "yes_no", "v3": "plain", "v4": "examples"}  # the tags the sheets were made under
    result: dict = {"prompts": {}, "aucs": {}}
    rows = []
    for tag, name in names.items():
        path = OUT / f"{name}.json"
        if not path.exists():
            continue
        drafted = json.loads(path.read_text())["rows"]
        for r in drafted:  # a label holds for the draft it was given to (a rerun may draft otherwise)
            text, label = labels.get((tag, r["id"]), ("", None))
            r["label"] = label if text.strip() == r["draft"].strip() else None
        counts = Counter((r["kind"] != "unanswerable", r["label"]) for r in drafted)
        result["prompts"][name] = {
            "answerable": {lab: n for (ans, lab), n in counts.items() if ans},
            "unanswerable": {lab: n for (ans, lab), n in counts.items() if not ans},
            "opens_with_yes": sum(r["draft"].lower().startswith("yes") for r in drafted),
            "unlabelled (drafted otherwise than labelled)": sum(r["label"] is None for r in drafted),
            "seconds_median": sorted(r["seconds"] for r in drafted)[len(drafted) // 2],
        }
        rows += [dict(r, prompt=name) for r in drafted]
    answered = [r for r in rows if r["label"] not in (None, "refused") and not r["refused"]]
    right = [r["label"] == "right" for r in answered]
    if answered and any(right) and not all(right):
        result["aucs"]["refusal_probability (low) -> right"] = round(
            roc_auc_score(right, [-r["refusal"] for r in answered]), 3
        )
        wh = [
            r
            for r in answered
            if not is_yes_no(next(q["question"] for q in load_questions("dev", []) if q["id"] == r["id"]))
        ]
        result["aucs"]["sentence support -> right (wh questions)"] = round(
            roc_auc_score([r["label"] == "right" for r in wh], [r["support"] for r in wh]), 3
        )
        verified = [r for r in answered if "verify_yes" in r]
        if verified:
            result["aucs"]["self-verification P(yes) -> right"] = round(
                roc_auc_score([r["label"] == "right" for r in verified], [r["verify_yes"] for r in verified]), 3
            )
    for label in ("right", "wrong"):  # what the shipped check (sentence support 0.6 included) does with them
        drafts = [r for r in answered if r["label"] == label]
        result.setdefault("the shipped check on the labelled drafts", {})[label] = {
            "drafts": len(drafts),
            "passed": sum(bool(r["passed"]) for r in drafts),
        }
    plain = [r for r in rows if r["prompt"] == "plain"]
    if plain:
        result["aucs"]["refusal_probability -> unanswerable (plain)"] = round(
            roc_auc_score([r["kind"] == "unanswerable" for r in plain], [r["refusal"] for r in plain]), 3
        )
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "summary.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("drafts")
    d.add_argument("--prompt", required=True)
    d.add_argument("--tag", required=True)
    d.add_argument("--verify", action="store_true")
    y = sub.add_parser("yes-no")
    y.add_argument("--variant", choices=sorted(YES_NO), default="A")
    sub.add_parser("summary")
    args = parser.parse_args()
    {"drafts": drafts, "yes-no": yes_no, "summary": summary}[args.command](args)


if __name__ == "__main__":
    main()
