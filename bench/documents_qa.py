"""Answers over real documentation folders: each question of a question set (bench/labels/documents/questions/,
written blind by people who read only the documents) asked in a fresh session of augmenter over its folder
(shared/docsets/<split>/<set>/), with the reply, its citations, its outcome and where the time went.

    python bench/documents_qa.py --split dev [--sets typer,rich] [--tag NAME] [--limit N] [hydra overrides]

Writes bench/results/documents_qa/<split>-<tag>.jsonl (one line per question; a rerun with the same tag skips the
questions already answered: resumable) and <split>-<tag>.json (the summary). The summary's `keys` figures are a
rough automatic reading for development only (the reply holds every key string of the question and does not
refuse; an unanswerable one is refused): graded figures come from blind graders (bench/documents_grade.py).
Timing: `seconds` is the turn's wall time; `first_seconds` the first question's, with the model's load and the
index's update; per stage, the time in retrieval, drafting (the LLM), checking and composing.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "bench" / "labels" / "documents" / "questions"
DOCSETS = ROOT / "shared" / "docsets"
RESULTS = ROOT / "bench" / "results" / "documents_qa"
REFUSAL = re.compile(
    r"\b((does|do) not (answer|say|cover|mention)|i (do not|don't) (know|have)|"
    r"(cannot|can't) (find|answer)|"
    r"could not (find|confirm)|no information|not (mentioned|specified|stated))\b",
    re.IGNORECASE,
)


def load_questions(split: str, sets: list[str]) -> list[dict]:
    names = sets or sorted(p.name for p in (DOCSETS / split).iterdir() if p.is_dir())
    out = []
    for name in names:
        path = QUESTIONS / f"{name}.jsonl"
        out += [dict(json.loads(line), set=name) for line in path.read_text().splitlines() if line.strip()]
    return out


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[`*\"'“”‘’]", "", text.lower()).split())


def refused(memory) -> bool:
    """The reply says it does not know (whatever outcome the system recorded for it)."""
    return memory.outcome == "abstained" or bool(REFUSAL.search((memory.response or "").split("\n\n")[0]))


def holds_keys(question: dict, reply: str) -> bool:
    text = _norm(reply)
    for key in question["keys"]:
        k = _norm(key)
        if k in ("yes", "no"):
            if not re.search(rf"\b{k}\b", text):
                return False
        elif k not in text:
            return False
    return True


def stages(memory) -> dict:
    """Seconds per stage of the turn (retrieval, draft, check, compose) from its trace."""
    names = {"consolidate_knowledge": "retrieve", "call_llm": "draft", "verify_utility": "check", "send": "compose"}
    out = {v: 0.0 for v in names.values()}
    for record in memory.trace:
        out[names.get(record.action.value, record.action.value)] = (
            out.get(names.get(record.action.value), 0.0) + record.seconds
        )
    out["retrieve"] += sum(memory.overhead_seconds.values())
    return {k: round(v, 3) for k, v in out.items()}


def row(question: dict, memory, seconds: float) -> dict:
    sources, _ = memory.sources()
    cited = list(dict.fromkeys((r.location.path, r.location.page) for r in sources if r.location))
    files = {s["file"] for s in question["sources"]}
    answerable = question["kind"] != "unanswerable"
    was_refused = refused(memory)
    return {
        "id": question["id"],
        "set": question["set"],
        "kind": question["kind"],
        "question": question["question"],
        "reply": memory.response,
        "outcome": memory.outcome,
        "cited": [list(c) for c in cited],
        "cites_right_file": bool(files & {c[0] for c in cited}),
        "refused": was_refused,
        "keys_right": (holds_keys(question, memory.response or "") and not was_refused) if answerable else None,
        "seconds": round(seconds, 2),
        "stages": stages(memory),
        "llm_calls": memory.llm_calls,
        "prompt_tokens": memory.prompt_tokens,
        "completion_tokens": memory.completion_tokens,
        "drafts": list(memory.o),
        "feedback": [f for f in memory.f if f],
        "signals": dict(memory.signals),
        "evidence": [{"id": s.id, "text": s.text, "score": s.score, "heading": s.entity_name} for s in memory.e],
    }


def summary(rows: list[dict], first: float | None) -> dict:
    def share(xs):
        xs = list(xs)
        return round(sum(map(bool, xs)) / len(xs), 3) if xs else None

    answerable = [r for r in rows if r["kind"] != "unanswerable"]
    out = {
        "questions": len(rows),
        "first_seconds": first,
        "seconds_median": round(statistics.median(r["seconds"] for r in rows), 2) if rows else None,
        "seconds_max": max((r["seconds"] for r in rows), default=None),
        "stage_medians": {
            k: round(statistics.median(r["stages"].get(k, 0.0) for r in rows), 3)
            for k in ("retrieve", "draft", "check", "compose")
        }
        if rows
        else {},
        "prompt_tokens_median": statistics.median(r["prompt_tokens"] for r in rows) if rows else None,
    }
    for kind in ("single", "cross", "unanswerable"):
        part = [r for r in rows if r["kind"] == kind]
        if kind == "unanswerable":
            out[kind] = {"n": len(part), "refused": share(r["refused"] for r in part)}
        else:
            out[kind] = {
                "n": len(part),
                "keys_right": share(r["keys_right"] for r in part),
                "keys_right_cited": share(r["keys_right"] and r["cites_right_file"] for r in part),
                "refused": share(r["refused"] for r in part),
            }
    out["answerable_keys_right_cited"] = share(r["keys_right"] and r["cites_right_file"] for r in answerable)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=["dev", "report"], required=True)
    parser.add_argument("--sets", default="", help="comma-separated set names (default: every set of the split)")
    parser.add_argument("--tag", default="default")
    parser.add_argument("--limit", type=int, default=None, help="at most this many questions per set")
    args, overrides = parser.parse_known_args()
    from omegaconf import OmegaConf

    from augmenter.api import Assistant
    from augmenter.config import build_llm, compose

    questions = load_questions(args.split, [s for s in args.sets.split(",") if s])
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"{args.split}-{args.tag}.jsonl"
    done = {json.loads(line)["id"] for line in out.read_text().splitlines()} if out.exists() else set()
    meta = RESULTS / f"{args.split}-{args.tag}.meta.json"
    first = json.loads(meta.read_text()).get("first_seconds") if meta.exists() else None
    llm = None
    by_set: dict[str, list[dict]] = {}
    for q in questions:
        by_set.setdefault(q["set"], []).append(q)
    with out.open("a") as sink:
        for name, part in by_set.items():
            todo = [q for q in part[: args.limit] if q["id"] not in done]
            if not todo:
                continue
            start = time.perf_counter()
            config = compose("chat", ["knowledge=docs", f"knowledge.path={DOCSETS / args.split / name}", *overrides])
            llm = llm or build_llm(config)
            assistant = Assistant.from_config(config, llm=llm)
            for q in todo:
                began = time.perf_counter()
                memory = assistant.session().say(q["question"])
                seconds = time.perf_counter() - began
                if first is None:
                    first = round(time.perf_counter() - start, 2)
                    meta.write_text(
                        json.dumps(
                            {
                                "first_seconds": first,
                                "overrides": overrides,
                                "config": OmegaConf.to_container(config, resolve=True),
                            },
                            indent=1,
                            default=str,
                        )
                    )
                r = row(q, memory, seconds)
                sink.write(json.dumps(r, ensure_ascii=False) + "\n")
                sink.flush()
                print(
                    f"{r['id']:>14} {r['kind'][:5]:>5} {r['seconds']:5.1f}s keys={r['keys_right']} "
                    f"refused={r['refused']} | {(r['reply'] or '')[:110]!r}",
                    file=sys.stderr,
                    flush=True,
                )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    result = {"command": "python bench/documents_qa.py " + " ".join(sys.argv[1:]), **summary(rows, first)}
    out.with_suffix(".json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
