"""The commands that run a job (`augmenter.api`) or render finished runs, and print what comes of them: eval, grid,
report, ground, precompute, train, curve, serve."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from augmenter.errors import InputError

RAY_WORKER_SETUP = "augmenter.cli.jobs.worker_logging"  # a Ray worker logs as the driver does


def evaluate(args: argparse.Namespace) -> int:
    from augmenter.api.jobs import evaluate as run

    print_summary(run(args.overrides))
    return 0


def print_summary(summary: dict) -> None:
    """One line per run, every figure with its unit; a run with failed or missing turns says so."""
    units = {"length": "words", "answer_recall@5": "%"}  # every other metric is a percentage
    metrics = ", ".join(
        f"{k} {v:.2f} ({units.get(k, '%')})" for k, v in summary.get("metrics", {}).items() if v is not None
    )
    cost = summary.get("cost", {})
    failed, pending = summary.get("failed", 0), summary.get("pending", 0)
    counts = f"{summary.get('ok', summary['turns'])} of {summary['turns']} turns scored"
    if failed:
        counts += f", {failed} failed (most common: {next(iter(summary['failure_reasons']))})"
    if pending:
        counts += f", {pending} not run"
    figures = (
        (
            f"{metrics}; LLM calls {cost.get('llm_calls', 0):.2f} (per turn), "
            f"wall time {cost.get('turn_seconds', 0):.2f} (s per turn)"
        )
        if metrics
        else "nothing scored"
    )
    print(f"{summary['name']}: {counts}; {figures} -> {summary['run_dir']}")


def run_grid(args: argparse.Namespace) -> int:
    """Each chosen experiment in turn. One with too many failed turns does not stop the grid (it exits 2 at the
    end, naming them); a fatal LLM error or an open circuit breaker stops it at once."""
    from augmenter.api.jobs import experiments, grid
    from augmenter.eval.runner import EvalFailed

    chosen = experiments([w.strip() for w in args.only.split(",") if w.strip()])
    if args.ray is not None:
        return _grid_on_ray(args, chosen)
    failed = []
    for run in grid(chosen, args.overrides):
        if run.summary:
            print_summary(run.summary)
        if run.error:
            print(f"augmenter: {run.error}", file=sys.stderr)
            failed.append(run.name)
    if failed:
        raise EvalFailed(
            f"{len(failed)} of {len(chosen)} experiments have more failed turns than eval.max_failed "
            f"allows: {', '.join(failed)}; run the grid again to retry their failed turns"
        )
    return 0


def _grid_on_ray(args: argparse.Namespace, chosen: list[str]) -> int:
    """`grid --ray`: every chosen experiment's shards as Ray tasks, written by this process alone."""
    from augmenter.api.jobs import ray_grid
    from augmenter.eval.runner import EvalFailed

    outcomes = ray_grid(
        chosen,
        args.overrides,
        args.ray,
        args.shard_size,
        args.retries,
        {"worker_process_setup_hook": RAY_WORKER_SETUP, "env_vars": {"AUGMENTER_VERBOSITY": str(args.verbosity)}},
    )
    for outcome in outcomes:
        print_summary(outcome.summary)
        if outcome.error:
            print(f"augmenter: {outcome.error}", file=sys.stderr)
    print(f"ray: {sum(o.answered for o in outcomes)} turns answered in this run", file=sys.stderr)
    failed = [o.name for o in outcomes if o.error]
    if failed:
        raise EvalFailed(
            f"{len(failed)} of {len(outcomes)} experiments need another run (failed or unanswered "
            f"turns): {', '.join(failed)}; run the grid again to retry them"
        )
    return 0


def worker_logging() -> None:
    """A Ray worker's logging, as the driver's (`AUGMENTER_VERBOSITY`, set by `grid --ray`)."""
    from augmenter.cli.log import setup_logging

    setup_logging(max(-1, min(1, int(os.environ.get("AUGMENTER_VERBOSITY") or 0))))


def report(args: argparse.Namespace) -> int:
    from augmenter.eval.report import write_report

    runs = [Path(r) for r in args.runs] or sorted(p for p in Path("runs/eval").glob("*") if p.is_dir())
    if not runs:
        raise InputError("no eval runs found: give sample directories (e.g. runs/eval/dstc11-dev-n200-seed0)")
    for run in runs:
        if not run.is_dir():
            raise InputError(f"not a directory of eval runs: {run}")
        out = write_report(run, Path(args.out) if args.out else run, with_bertscore=not args.no_bertscore)
        print(f"{run}: report in {out}")
    return 0


def ground(args: argparse.Namespace) -> int:
    from augmenter.api.jobs import ground as judge_runs

    only = args.only.split(",") if args.only else None
    for directory, result in judge_runs(args.runs, args.verifier, only, args.overrides):
        if not result["turns"]:
            print(f"{directory.name}: no records")
            continue
        print(
            f"{directory.name}: {result['unsupported_response_rate']:.1f}% of {result['turns']} responses carry an "
            f"unsupported claim; {result['idk_rate']:.1f}% say the knowledge does not answer; "
            f"{result['claims_per_response']:.2f} claims per response"
        )
    return 0


def run_precompute(args: argparse.Namespace) -> int:
    from augmenter.api.envs import precompute
    from augmenter.config import compose

    summary = precompute(compose("train", args.overrides))
    for part, info in summary["parts"].items():
        print(
            f"{part}: {info['turns']} turns ({info['walked_now']} walked now, {info['new_llm_calls']} new LLM calls, "
            f"{info['seconds']} s)"
        )
    totals = summary.get("log_totals")
    if totals:
        print(
            f"all {totals['turns']} turns of the log: {totals['states_per_turn']:.0f} states and "
            f"{totals['model_calls_per_turn']:.1f} model calls per turn, {totals['hours']:.2f} h in all"
        )
    print(f"turns done are listed in {summary['log']}")
    return 0


def run_train(args: argparse.Namespace) -> int:
    """Each seed's run on one pair of environments (one agent), then the baselines and the learning curve."""
    from augmenter.api.training import Training

    training = Training(args.overrides)
    print("{} training turns, {} held-out turns".format(*training.turns))
    with training:
        for seed in training.seeds:
            info = training.train(seed)
            print(
                f"seed {seed}: {info['episodes']} episodes"
                + (f" (resumed from {info['resumed_from']})" if info["resumed_from"] is not None else "")
                + f" -> {info['run_dir']}/policy.pt"
            )
    print(f"learning curve: {training.finish()}")
    return 0


def curve(args: argparse.Namespace) -> int:
    from augmenter.eval.curve import write_curve, write_tradeoff

    if args.tradeoff:
        print(f"trade-off: {write_tradeoff(args.runs, args.out or args.runs[0]) / 'tradeoff.png'}")
        return 0
    for run in args.runs:
        print(f"learning curve: {write_curve(run, args.out) / 'fig3.png'}")
    return 0


def serve(args: argparse.Namespace) -> int:
    """The service (augmenter.serve): the agents are built before anything listens, so errors are one line."""
    from augmenter.config import compose
    from augmenter.serve import run

    print("loading knowledge and model...", file=sys.stderr)
    return run(compose("serve", args.overrides))
