"""Uncached per-turn cost of every experiment of the grid, with the embedded model.

    python bench/eval_cost.py --limit 20 [--only table2,table4,fig4,fig5,table1] [hydra overrides...]

The evaluation grid shares one LLM cache, so its wall times say little about what a configuration costs.
This runs `augmenter grid` on a small seeded sample with the cache off (every figure is a real model call)
and writes bench/results/eval_cost.json (per run: mean and median wall time, LLM calls, tokens, knowledge
consolidator calls per turn, with the command) and prints a Markdown table. The model loads lazily, in the
first turn of each run: the median is free of it.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from augmenter.cli.main import main as cli
from augmenter.eval.runner import failure, read_records

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--only", default="table2,table4,fig4,fig5,table1")
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "eval_cost.json"))
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        code = cli(
            [
                "grid",
                "--only",
                args.only,
                f"data_root={args.data_root}",
                "llm_cache.enabled=false",
                f"eval.out_dir={tmp}",
                f"eval.limit={args.limit}",
                *args.overrides,
            ]
        )
        if code != 0:
            sys.exit(code)
        total = time.perf_counter() - start
        runs = {}
        for records_path in sorted(Path(tmp).glob("*/*/records.jsonl")):
            records = [r for r in read_records(records_path) if failure(r) is None]  # failed turns cost nothing real

            def cost(key, records=records):
                return [r["cost"][key] for r in records]

            runs[records_path.parent.name] = {
                "sample": records_path.parent.parent.name,
                "turns": len(records),
                "wall_s_mean": statistics.mean(cost("turn_seconds")),
                "wall_s_median": statistics.median(cost("turn_seconds")),
                "llm_calls": statistics.mean(cost("llm_calls")),
                "prompt_tokens": statistics.mean(cost("prompt_tokens")),
                "completion_tokens": statistics.mean(cost("completion_tokens")),
                "knowledge_calls": statistics.mean(cost("knowledge_calls")),
                "non_llm_ms": 1000 * statistics.mean(cost("non_llm_seconds")),
            }
    result = {
        "command": "python bench/eval_cost.py " + " ".join(sys.argv[1:]),
        "total_s": total,
        "machine": f"{platform.machine()}, {platform.processor() or 'cpu'}, python {platform.python_version()}",
        "runs": runs,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(
        "| run | turns | wall s (mean) | wall s (median) | LLM calls | prompt tokens | completion tokens | "
        "KC calls | non-LLM ms |\n|---|---|---|---|---|---|---|---|---|"
    )
    for name, r in runs.items():
        print(
            f"| {name} | {r['turns']} | {r['wall_s_mean']:.2f} | {r['wall_s_median']:.2f} | {r['llm_calls']:.2f} | "
            f"{r['prompt_tokens']:.0f} | {r['completion_tokens']:.0f} | {r['knowledge_calls']:.2f} | "
            f"{r['non_llm_ms']:.1f} |"
        )


if __name__ == "__main__":
    main()
