"""Answer quality of the checked system on the sample handbook: each question of
augmenter/documents/handbook.py (QUESTIONS) asked in a fresh session of the default system (task=docs: the
embedded Qwen2.5-Coder-1.5B, the grounded policy and utility with the fast verifier, BM25).

    python bench/documents_answers.py [--tag NAME] [hydra overrides, e.g. llm.n_threads=1]

An answerable question is answered correctly when the reply holds one of its answers (e.g. "27", "31 March") and
the reply is not an "I don't know"; its citation is correct when a cited source is one of the question's files
(and page, for the PDF). An unanswerable one is refused when augmenter abstains (outcome "abstained") or the
reply says it does not know. Writes bench/results/documents_answers.json (documents_answers-NAME.json with --tag):
every question with its reply, outcome, citations and verdicts, and the shares per kind (single file, two files,
not in the handbook).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "documents_answers.json"


def judge(question: dict, memory) -> dict:
    from augmenter.documents.handbook import judge_answer

    verdict = judge_answer(question, memory)
    return {
        "q": question["q"],
        "kind": question["kind"],
        "reply": memory.response,
        "outcome": memory.outcome,
        "cited": verdict["cited_files"],
        "refused": verdict["refused"],
        "correct": verdict["correct"] if verdict["answerable"] else None,
        "correct_with_citation": (verdict["correct"] and verdict["cited"]) if verdict["answerable"] else None,
        "cites_both_files": verdict["cites_both_files"],
        "llm_calls": memory.llm_calls,
        "seconds": round(memory.wall_seconds, 1),
    }


def share(rows: list[dict], key: str) -> float:
    return round(sum(bool(r[key]) for r in rows) / len(rows), 3) if rows else 0.0


def main() -> None:
    from augmenter.api import Assistant
    from augmenter.documents.handbook import QUESTIONS

    args = sys.argv[1:]
    tag = args[args.index("--tag") + 1] if "--tag" in args[:-1] else None
    if tag:
        args.remove("--tag")
        args.remove(tag)
    out = OUT.with_name(f"documents_answers-{tag}.json") if tag else OUT
    overrides = ["task=docs", *args]
    assistant = Assistant.from_overrides(overrides)
    rows, start = [], time.perf_counter()
    for question in QUESTIONS:
        row = judge(question, assistant.session().say(question["q"]))
        rows.append(row)
        print(json.dumps(row, ensure_ascii=False), flush=True)
    summary = {}
    for kind in ("single", "cross", "none"):
        mine = [r for r in rows if r["kind"] == kind]
        summary[kind] = {"questions": len(mine), "refused": share(mine, "refused")}
        if kind != "none":
            summary[kind].update(
                correct=share(mine, "correct"), correct_with_citation=share(mine, "correct_with_citation")
            )
        if kind == "cross":
            summary[kind]["cites_both_files"] = share(mine, "cites_both_files")
    answerable = [r for r in rows if r["kind"] != "none"]
    summary["answerable"] = {
        "questions": len(answerable),
        "correct": share(answerable, "correct"),
        "correct_with_citation": share(answerable, "correct_with_citation"),
        "refused": share(answerable, "refused"),
    }
    result = {
        "command": "python bench/documents_answers.py " + " ".join(sys.argv[1:]),
        "system": overrides,
        "minutes": round((time.perf_counter() - start) / 60, 1),
        "summary": summary,
        "questions": rows,
    }
    out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(summary, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
