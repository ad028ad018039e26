"""Per-turn cost of the paper's policy with the embedded model on seeded DSTC11 dev turns.

    python bench/turn_cost.py --turns 20 --seed 0 [hydra overrides...]

Writes bench/results/turn_cost.json (per turn and summary, with the command) and prints a Markdown table.
The LLM cache is off: every figure is a real model call.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

from tqdm import tqdm

from augmenter.config import build_agent, compose
from augmenter.tasks.dstc11 import load_turns

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "turn_cost.json"))
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    cfg = compose("chat", ["task=dstc11", f"data_root={args.data_root}", "llm_cache.enabled=false", *args.overrides])
    t0 = time.perf_counter()
    agent = build_agent(cfg)
    setup = time.perf_counter() - t0
    instances = load_turns(
        Path(args.data_root) / "dstc11-track5" / "dev", knowledge_seeking_only=True, limit=args.turns, seed=args.seed
    )
    agent.respond("warm up: load the model")  # model load is not a turn cost
    rows = []
    for inst in tqdm(instances, desc="turns"):
        start = time.perf_counter()
        mem = agent.respond(inst.q, inst.history)
        wall = time.perf_counter() - start
        llm_s = sum(r.llm_seconds for r in mem.trace)
        rows.append(
            {
                "dialogue": int(inst.id),
                "wall_s": wall,
                "llm_calls": mem.llm_calls,
                "prompt_tokens": mem.prompt_tokens,
                "completion_tokens": mem.completion_tokens,
                "llm_s": llm_s,
                "non_llm_ms": 1000 * (wall - llm_s),
                "actions": [r.action.value for r in mem.trace],
            }
        )
    keys = ["wall_s", "llm_calls", "prompt_tokens", "completion_tokens", "non_llm_ms"]
    summary = {
        k: {
            "mean": statistics.mean(r[k] for r in rows),
            "median": statistics.median(r[k] for r in rows),
            "max": max(r[k] for r in rows),
        }
        for k in keys
    }
    result = {
        "command": "python bench/turn_cost.py " + " ".join(sys.argv[1:]),
        "setup_s": setup,
        "machine": f"{platform.machine()}, {platform.processor() or 'cpu'}, python {platform.python_version()}",
        "llm": cfg.llm._target_ + ":" + str(cfg.llm.get("model")),
        "policy": cfg.policy._target_,
        "summary": summary,
        "turns": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(f"| per turn ({len(rows)} turns) | mean | median | max |\n|---|---|---|---|")
    for k in keys:
        s = summary[k]
        print(f"| {k} | {s['mean']:.2f} | {s['median']:.2f} | {s['max']:.2f} |")


if __name__ == "__main__":
    main()
