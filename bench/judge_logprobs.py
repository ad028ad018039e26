"""Does a judge model prefer either conversation at all? The Arena question answered with one label ("1" or "2"),
its first token's log-probabilities read as P(conversation 1 is AI-involved), both orders, on DSTC11 dev turns.

    python bench/judge_logprobs.py [--turns 10] [--tag qwen05] [judge overrides, e.g. llm=local_1_5b]

The human gold reply is paired with LLM only's and with the paper's system's reply (the eval runs of
bench/judge_validity.py, which must exist), and the paper's system with LLM only. A judge that reads the replies
moves P with them; one that does not gives the same P whatever the conversations say (its spread is the figure to
look at), and the two orders' average, P(the second system is AI), stays at 0.5. Writes
bench/results/judge_logprobs[-<tag>].json with the command.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import statistics
import sys
from pathlib import Path

from augmenter.config import build_llm, compose
from augmenter.judges.base import transcript
from augmenter.judges.run import first_dialogues, load_systems
from augmenter.llm.base import SamplingParams
from augmenter.prompts import PromptTemplate

ROOT = Path(__file__).resolve().parents[1]
PAIRS = (("human", "table2_llm_only"), ("human", "table2_bm25_feedback"), ("table2_bm25_feedback", "table2_llm_only"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=10)
    ap.add_argument("--runs", default=str(ROOT / "runs" / "eval" / "dstc11-dev-n200-seed0"))
    ap.add_argument("--tag", default="")
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    prompt = PromptTemplate.load(str(ROOT / "bench" / "prompts" / "judge_arena_label.yaml"))
    cfg = compose("judge", [f"data_root={args.data_root}", "llm_cache.enabled=false", *args.overrides])
    llm = build_llm(cfg)
    runs = [Path(args.runs) / name for name in ("table2_llm_only", "table2_bm25_feedback")]
    systems = first_dialogues(load_systems(runs, human=True), args.turns)
    params = SamplingParams(max_tokens=1, temperature=0.0, logprobs=10)

    def p_first(first, second) -> float:
        top = llm.complete(prompt.render(first=transcript(first), second=transcript(second)), params).top_logprobs[0]
        one, two = math.exp(top.get("1", -30.0)), math.exp(top.get("2", -30.0))
        return one / (one + two)

    rows = []
    for a, b in PAIRS:
        by_a, by_b = ({d.id: d for d in systems[name]} for name in (a, b))
        for turn in [t for t in by_a if t in by_b]:
            shown, swapped = p_first(by_a[turn], by_b[turn]), p_first(by_b[turn], by_a[turn])
            rows.append(
                {
                    "better": a,
                    "worse": b,
                    "turn": turn,
                    "p_first": shown,
                    "p_first_swapped": swapped,
                    "p_worse_ai": ((1 - shown) + swapped) / 2,
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    every = [x for r in rows for x in (r["p_first"], r["p_first_swapped"])]
    summary = {
        f"{a} > {b}": {
            "turns": len(mine),
            "mean_p_worse_ai": statistics.mean(r["p_worse_ai"] for r in mine),
            "agree": sum(r["p_worse_ai"] > 0.5 for r in mine),
        }
        for a, b in PAIRS
        for mine in [[r for r in rows if (r["better"], r["worse"]) == (a, b)]]
    }
    report = {
        "command": shlex.join(["python", "bench/judge_logprobs.py", *sys.argv[1:]]),
        "judge_model": llm.identity,
        "p_first": {
            "mean": statistics.mean(every),
            "min": min(every),
            "max": max(every),
            "stdev": statistics.pstdev(every),
        },
        "pairs": summary,
        "rows": rows,
    }
    out = ROOT / "bench" / "results" / f"judge_logprobs{'-' + args.tag if args.tag else ''}.json"
    out.write_text(json.dumps(report, indent=1))
    print(json.dumps({k: v for k, v in report.items() if k != "rows"}, indent=1))


if __name__ == "__main__":
    main()
