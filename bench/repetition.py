"""How many sent replies repeat themselves (or dodge) on DSTC11 dev turns, before and after the
repetition check's feedback and llama.cpp's repeat penalty.

    python bench/repetition.py [--limit 200] [--variants NAME=OVERRIDES;...] [overrides for every run ...]

Runs `augmenter eval` for each variant (resumable; the LLM cache shares the first candidates), then counts in each
run's sent replies those the repetition check flags (within the reply / copied from earlier turns), those the
dodge check flags, and the mean KF1; writes bench/results/repetition.json and .md with the commands.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from statistics import mean

from augmenter.cli.main import main as cli
from augmenter.config import compose
from augmenter.eval.runner import run_dir
from augmenter.memory import WorkingMemory
from augmenter.storage import read_jsonl
from augmenter.utilities import DodgeUtility, RepetitionUtility

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = (
    "table2_bm25_feedback=experiment=table2_bm25_feedback;"
    "paper_repetition=experiment=table2_bm25_feedback utility=repetition;"
    "paper_repeat_penalty=experiment=table2_bm25_feedback sampling.repeat_penalty=1.3;"
    "claims_bm25=experiment=claims_bm25;"
    "claims_repetition=experiment=claims_bm25 utility=repetition utility@utility.base=claims"
)


def count(records_path: Path) -> dict:
    """Flagged shares (%) of a run's ok replies, and their mean KF1."""
    repetition, dodge = RepetitionUtility(), DodgeUtility()
    rows = [
        r
        for _, r in read_jsonl(records_path, lambda n, why: None)
        if r.get("status", "ok") == "ok" and isinstance(r.get("memory"), dict)
    ]
    within = earlier = dodging = 0
    for r in rows:
        mem = WorkingMemory.model_validate(r["memory"])
        rep = repetition.measure(r["response"], mem.h_q)
        within += rep.within > repetition.within_threshold
        earlier += rep.earlier > repetition.earlier_threshold
        dodging += not dodge(mem, r["response"]).passed
    n = len(rows)

    def pct(k):
        return round(100.0 * k / n, 2) if n else None

    kf1 = [r["metrics"]["KF1"] for r in rows if isinstance(r.get("metrics"), dict) and "KF1" in r["metrics"]]
    return {
        "replies": n,
        "repeating_within_%": pct(within),
        "repeating_earlier_%": pct(earlier),
        "dodging_%": pct(dodging),
        "KF1": round(mean(kf1), 2) if kf1 else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--variants", default=VARIANTS, help="NAME=OVERRIDES, separated by ';'")
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--results", default=str(ROOT / "bench" / "results"))
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    commands, runs = [], {}
    for variant in filter(None, (v.strip() for v in args.variants.split(";"))):
        name, _, overrides = variant.partition("=")
        argv = [
            "eval",
            *shlex.split(overrides),
            f"name={name}",
            f"data_root={args.data_root}",
            f"eval.limit={args.limit}",
            *args.overrides,
        ]
        commands.append(shlex.join(["augmenter", *argv]))
        print(f"$ {commands[-1]}", flush=True)
        code = cli(argv)
        if code != 0:
            sys.exit(code)
        runs[name] = count(run_dir(compose("eval", argv[1:])) / "records.jsonl")
    report = {
        "command": shlex.join(["python", "bench/repetition.py", *sys.argv[1:]]),
        "commands": commands,
        "runs": runs,
    }
    dest = Path(args.results)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "repetition.json").write_text(json.dumps(report, indent=1))
    lines = [
        "# Sent replies that repeat themselves or dodge",
        "",
        f"Command: `{report['command']}`",
        "",
        "| run | replies | repeating within % | repeating earlier turns % | dodging % | KF1 |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {name} | {r['replies']} | {r['repeating_within_%']} | {r['repeating_earlier_%']} | "
        f"{r['dodging_%']} | {r['KF1']} |"
        for name, r in runs.items()
    ]
    (dest / "repetition.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[4:]))


if __name__ == "__main__":
    main()
