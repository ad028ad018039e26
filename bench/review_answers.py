"""A chat configuration's answers on the turns of a labelled round, as records a new round can put beside the
earlier systems' answers (`bench/claim_set.py items --runs ...`): the same turns, histories and gold knowledge.

    python bench/review_answers.py --from dstc11-dev-e2e --name verdict-1.5b \
        --set executor.review_verdicts=true consolidator.opinions.stance=llm
    # -> runs/claim-set/answers/<name>.jsonl (resumable: turns already answered are kept)
    python bench/review_answers.py --records runs/verdict2/.../table2_bm25/records.jsonl --name verdict-1.5b ...
    # fresh turns: those an eval run answered (the records of the systems it is compared with)

Each record holds the reply, its outcome, the turn's seconds, the LLM calls, and what the verdict writer did
(`verdict_fixed`: why the model's verdict was replaced by the fixed sentence); a summary goes to
bench/results/review_answers-<name>.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from augmenter.config import build_agent, compose
from augmenter.memory import Utterance
from augmenter.storage import write_atomic

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from claim_set import LABELS, load_items  # noqa: E402


@dataclass
class Turn:
    item: int
    dialogue_id: str
    q: str
    history: list
    gold_ids: list


def records_turns(path: Path) -> list[Turn]:
    """The turns of an eval run's records, in its order (the question, its history and gold knowledge)."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [
        Turn(n, r["dialogue_id"], r["memory"]["q"], r["memory"]["h_q"], r.get("gold_ids") or [])
        for n, r in enumerate(records, 1)
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="source", default="dstc11-dev-e2e", help="the labelled round whose turns to answer")
    ap.add_argument(
        "--records",
        help="answer the turns of an eval run instead (its records.jsonl): fresh turns "
        "beside the answers of the systems that run scored",
    )
    ap.add_argument("--name", required=True, help="the system's name in the new round")
    ap.add_argument("--set", nargs="*", default=[], help="chat config overrides")
    ap.add_argument("--items", help="only these items of the round (1,4,17): a quick look before a whole run")
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--out", default=str(ROOT / "runs" / "claim-set" / "answers"))
    args = ap.parse_args()
    path = Path(args.out) / f"{args.name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    done = {json.loads(line)["dialogue_id"] for line in path.read_text().splitlines()} if path.exists() else set()
    wanted = {int(n) for n in args.items.split(",")} if args.items else None
    turns = records_turns(Path(args.records)) if args.records else load_items(LABELS / args.source)
    items = [i for i in turns if i.dialogue_id not in done and (wanted is None or i.item in wanted)]
    agent = build_agent(compose("chat", ["task=dstc11", f"data_root={args.data_root}", *args.set]))
    with path.open("a", encoding="utf-8") as out:
        for item in tqdm(items, desc=args.name, unit="turn"):
            start = time.perf_counter()
            mem = agent.respond(item.q, [Utterance(**u) for u in item.history])
            fixed = next((r.outputs["verdict_fixed"] for r in mem.trace if r.outputs.get("verdict_fixed")), None)
            record = {
                "dialogue_id": item.dialogue_id,
                "status": "ok",
                "error": None,
                "response": mem.response,
                "outcome": mem.outcome,
                "citations": [],
                "references": [],
                "gold_knowledge": [],
                "gold_ids": item.gold_ids,
                "metrics": {},
                "cost": {"turn_seconds": round(time.perf_counter() - start, 3), "llm_calls": mem.llm_calls},
                "verdict_fixed": fixed,
                "memory": {
                    "q": item.q,
                    "h_q": item.history,
                    "entities": [{"domain": m.domain, "entity_id": m.entity_id} for m in mem.entities],
                },
            }
            out.write(json.dumps(record) + "\n")
            out.flush()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    seconds = [r["cost"]["turn_seconds"] for r in records]
    summary = {
        "command": "python bench/review_answers.py " + " ".join(sys.argv[1:]),
        "turns": len(records),
        "seconds_median": round(statistics.median(seconds), 2),
        "seconds_max": round(max(seconds), 2),
        "llm_calls_mean": round(statistics.mean(r["cost"]["llm_calls"] for r in records), 2),
        "outcomes": dict(sorted(Counter(r["outcome"] for r in records).items())),
        "verdicts_fixed": sum(bool(r["verdict_fixed"]) for r in records),
        "why_fixed": sorted(r["verdict_fixed"] for r in records if r["verdict_fixed"]),
    }
    write_atomic(ROOT / "bench" / "results" / f"review_answers-{args.name}.json", json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
