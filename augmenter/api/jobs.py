"""The evaluation jobs, built from config and run: one system over a data set (`evaluate`), the experiment configs
in turn (`grid`) or as Ray tasks (`ray_grid`), and the grounding check of finished runs (`ground`). `augmenter eval`,
`grid` and `ground` call these and print what they return.

    from augmenter.api.jobs import evaluate, experiments, grid

    summary = evaluate(["experiment=table2_bm25", "llm=fake", "eval.limit=20"])
    for run in grid(experiments(["table2"]), ["llm=fake", "eval.limit=20"]):
        print(run.name, run.summary, run.error)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from augmenter.config import build_evaluator, build_llm, compose, group_options, instantiate
from augmenter.errors import AugmenterError, InputError
from augmenter.eval.runner import EvalFailed

__all__ = ["ExperimentRun", "evaluate", "experiments", "grid", "ground", "ray_grid"]


def evaluate(overrides: Sequence[str] = ()) -> dict:
    """Run the system `configs/eval.yaml` with `overrides` describes over its data set (resumable); its summary.
    Raises EvalFailed when more turns failed than eval.max_failed allows."""
    return build_evaluator(compose("eval", overrides)).run()


def experiments(wanted: Sequence[str]) -> list[str]:
    """The experiment configs (`configs/experiment/`) named by `wanted` (names or prefixes), each once, in the order
    asked; InputError when none matches."""
    names = group_options("experiment")
    chosen = list(dict.fromkeys(n for w in wanted for n in names if n == w or n.startswith(w)))
    if not chosen:
        raise InputError(f"no experiment matches {' '.join(wanted)}; known: {', '.join(names)}")
    return chosen


@dataclass(frozen=True)
class ExperimentRun:
    """One experiment of a grid: its summary (None when it failed before writing one) and, when it has more failed
    turns than eval.max_failed allows, that error."""

    name: str
    summary: dict | None
    error: EvalFailed | None = None


def grid(names: Sequence[str], overrides: Sequence[str] = ()) -> Iterator[ExperimentRun]:
    """Each experiment in turn, with `overrides`, as it finishes. One with too many failed turns does not stop the
    grid; any other error (a fatal LLM error, an open circuit breaker) does."""
    for name in names:
        try:
            run = ExperimentRun(name, evaluate([f"experiment={name}", *overrides]))
        except EvalFailed as exc:
            run = ExperimentRun(name, exc.summary, exc)
        yield run


def ray_grid(
    names: Sequence[str],
    overrides: Sequence[str] = (),
    address: str | None = None,
    shard_size: int = 20,
    retries: int = 2,
    runtime_env: dict | None = None,
) -> list:
    """Every experiment's shards of turns as Ray tasks (`augmenter.eval.distributed`), on the cluster at `address`
    (None or "local": a local instance started and stopped here); the Outcome of each experiment."""
    from augmenter.api.distributed import grid_jobs, worker_evaluator
    from augmenter.eval.distributed import connect, ray_module, run_grid

    ray_module()  # a missing install is one line before anything is composed
    jobs = grid_jobs(names, overrides)
    started = connect(address, runtime_env)
    try:
        return run_grid(
            jobs,
            worker_evaluator,
            shard_size=shard_size,
            retries=retries,
            progress=all(job.evaluator.cfg.eval.progress for job in jobs),
        )
    finally:
        if started:
            ray_module().shutdown()


def ground(
    runs: Sequence[str | Path], verifier: str = "fast", only: Sequence[str] | None = None, overrides: Sequence[str] = ()
) -> Iterator[tuple[Path, dict]]:
    """Every sent response's claims judged against the gold knowledge by `verifier` (fast, llm or combined), run by
    run: `runs` are run directories or sample directories (their runs named in `only`, or all). Yields each run's
    directory and result (grounding-<verifier>.json is written beside its records)."""
    from augmenter.eval.grounding import ground_run

    cfg = compose("eval", [f"verifier={verifier}", "experiment=table2_bm25", *overrides])
    llm = build_llm(cfg) if verifier != "fast" else None
    judge = instantiate(cfg.verifier, "verifier", llm=llm, prompts=instantiate(cfg.prompt, "prompt"))
    try:  # gold snippets by id (with their entity's name); without DSTC11 at hand, the records' gold texts
        knowledge = instantiate(cfg.knowledge, "knowledge")
    except AugmenterError:
        knowledge = None
    for directory in _run_dirs(runs, set(only) if only else None):
        yield directory, ground_run(directory, judge, verifier, knowledge)


def _run_dirs(runs: Sequence[str | Path], only: set[str] | None) -> list[Path]:
    """The run directories (with records.jsonl) given, or inside the sample directories given."""
    dirs = []
    for path in map(Path, runs):
        if (path / "records.jsonl").exists():
            dirs.append(path)
        elif path.is_dir():
            dirs += sorted(p for p in path.iterdir() if (p / "records.jsonl").exists() and (not only or p.name in only))
        else:
            raise InputError(f"not a run or sample directory: {path}")
    if not dirs:
        raise InputError("no runs with records.jsonl found")
    return dirs
