"""`augmenter converse` and `augmenter judge`: run the job (`augmenter.api.conversations`) and print its summary.

augmenter converse [overrides]        simulated conversations of one system (resumable), e.g.
                                      experiment=table2_llm_only converse.conversations=50 converse.turns=6
augmenter judge RUN_DIR ... [overrides]   LLM judges over several systems' runs: Bootstrap Elo, GTEval,
                                      UniEval, WikiChat's scores, judge validity (results.md/json, elo.png)
"""

from __future__ import annotations

import argparse


def converse(args: argparse.Namespace) -> int:
    from augmenter.api.conversations import converse as run

    print_converse_summary(run(args.overrides))
    return 0


def _percent(value) -> str:
    return "-" if value is None else f"{value:.1f} %"  # None: no reply to count (every conversation ended at once)


def print_converse_summary(s: dict) -> None:
    line = f"{s['name']}: {s['ok']} of {s['conversations']} conversations"
    if s["failed"]:
        line += f", {s['failed']} failed (most common: {next(iter(s['failure_reasons']))})"
    if s.get("cost_per_conversation"):
        c = s["cost_per_conversation"]
        line += (
            f"; {s['turns_per_conversation']:.1f} turns, {c.get('assistant_llm_calls', 0):.1f} assistant and "
            f"{c.get('user_llm_calls', 0):.1f} user LLM calls, {c.get('seconds', 0):.1f} s (per conversation); "
            f"replies repeating {_percent(s['replies_repeating_percent'])}, dodging "
            f"{_percent(s['replies_dodging_percent'])}, echoing the user "
            f"{_percent(s['replies_echoing_user_percent'])}"
        )
    print(f"{line} -> {s['run_dir']}")


def judge(args: argparse.Namespace) -> int:
    from augmenter.api.conversations import judge as run

    judged = run(args.runs, args.overrides)
    for r in judged.results.get("arena", {}).get("elo", []):
        print(
            f"{r['player']}: Bootstrap Elo {r['elo']:.1f} (95% interval {r['low']:.1f} to {r['high']:.1f}, "
            f"{r['games']} games)"
            if r["games"]
            else f"{r['player']}: no parsed Arena game, no Elo"
        )
    print(f"{judged.judgments} judgments; results in {judged.report}")
    return 0
