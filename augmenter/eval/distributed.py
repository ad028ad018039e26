"""A grid of eval runs on Ray (`augmenter grid --ray [ADDRESS]`): each (experiment, shard of turns) is a Ray task.

A task builds its experiment's evaluator from the composed config (a plain dict) with the builder it is given (one
per config and worker process, kept for the next shards) and returns its turns' records, writing nothing. The
driver is the only writer: it holds every run's lock, skips the turns already recorded (resume; failed ones are
answered again), appends each shard's records as they come in, sends a shard whose task failed again (up to
`retries` times; Ray itself retries tasks whose worker died), and saves the records in sample order with
summary.json, as `augmenter eval` does. An AugmenterError in a task (a bad config, a fatal LLM error, an open circuit
breaker) stops the grid, keeping what is done. Ray is imported only here, when asked for.
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field

from tqdm import tqdm

from augmenter.errors import AugmenterError, ConfigError
from augmenter.eval.runner import EvalFailed, Evaluator, run_lock
from augmenter.storage import content_hash
from augmenter.tasks.base import Turn
from augmenter.text import one_line

log = logging.getLogger(__name__)

Builder = Callable[[dict], Evaluator]  # a composed config (a plain dict) -> an evaluator that can `answer` turns
KEEP = 3  # evaluators (agents) a worker process keeps built


@dataclass
class Job:
    """One experiment: the driver's evaluator (its task loads the sample; its agent is never built in the driver)
    and the composed config, as a plain dict, that workers build theirs from."""

    evaluator: Evaluator
    config: dict


@dataclass
class Outcome:
    """What became of one experiment: its summary (as `augmenter eval` writes it), the turns answered in this run,
    and why it needs another run (`error`: more failed turns than eval.max_failed allows, or shards that could
    not be answered), if it does."""

    name: str
    summary: dict
    answered: int
    error: str | None = None


@dataclass
class _Run:
    job: Job
    items: list[Turn]
    records: dict[str, dict]
    answered: int = 0
    lost: list[str] = field(default_factory=list)  # errors of shards given up


def ray_module():
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "augmenter grid --ray needs Ray: install the distributed extra (pip install 'augmenter[distributed]')"
        ) from None
    return ray


def connect(address: str | None = None, runtime_env: dict | None = None) -> bool:
    """Start a local Ray instance (`address` None or "local") or connect to a running cluster ("auto",
    "ray://host:port", "host:port"), unless Ray is initialised already; `runtime_env` is Ray's (e.g. a
    `worker_process_setup_hook` that sets up logging as the driver's). True when this call did it (then
    `ray.shutdown()` is the caller's)."""
    ray = ray_module()
    if ray.is_initialized():
        return False
    local = address in (None, "", "local")
    options = {"logging_level": logging.WARNING, "runtime_env": runtime_env}
    try:
        if local:
            ray.init(include_dashboard=False, **options)
        else:
            ray.init(address=address, **options)
    except Exception as exc:  # ConnectionError, ValueError, RuntimeError, ...: one line, no traceback
        where = "start a local Ray instance" if local else f"connect to the Ray cluster at {address}"
        raise ConfigError(f"cannot {where}: {one_line(str(exc) or type(exc).__name__, 300)}") from None
    return True


_built: OrderedDict[str, Evaluator] = OrderedDict()  # per worker process: the last KEEP configs' evaluators


def answer_shard(build: Builder, config: dict, turns: list[Turn]) -> list[dict]:
    """A Ray task: the records of `turns` under `config`, by this worker process's evaluator of it."""
    key = content_hash(json.dumps(config, sort_keys=True, default=str))
    evaluator = _built.pop(key, None) or build(config)
    _built[key] = evaluator
    while len(_built) > KEEP:
        _built.popitem(last=False)
    return evaluator.answer(turns)


def _stopped(run: _Run, exc: AugmenterError, done: int, total: int) -> AugmenterError:
    """`exc` (raised in a task) with the experiment's name and what is kept."""
    message = (
        f"{run.job.evaluator.cfg.name}: {exc}; the grid stopped with {done} of {total} turns recorded: "
        "run the same command again to resume"
    )
    try:
        return type(exc)(message)
    except TypeError:  # an error class with another signature
        return AugmenterError(message)


def run_grid(
    jobs: list[Job], build: Builder, shard_size: int = 20, retries: int = 2, progress: bool = True
) -> list[Outcome]:
    """Answer every job's pending turns on the connected Ray cluster (`connect`), `shard_size` turns per task,
    and write each run directory as `augmenter eval` would; one tqdm bar over all turns."""
    if not isinstance(shard_size, int) or shard_size < 1:
        raise ConfigError(f"the shard size must be a whole number >= 1, got {shard_size!r}")
    if not isinstance(retries, int) or retries < 0:
        raise ConfigError(f"retries must be a whole number >= 0, got {retries!r}")
    ray = ray_module()
    if not ray.is_initialized():
        raise ConfigError("Ray is not initialised: call augmenter.eval.distributed.connect() first")
    remote = ray.remote(max_retries=retries, retry_exceptions=False)(answer_shard)
    with ExitStack() as locks:
        runs = []
        for job in jobs:
            locks.enter_context(run_lock(job.evaluator.dir, "eval.out_dir"))
            runs.append(_Run(job, *job.evaluator.prepare()))
        tasks: dict = {}  # ObjectRef -> (run, shard, attempt)
        configs = {id(run): ray.put(run.job.config) for run in runs}

        def submit(run: _Run, shard: list[Turn], attempt: int) -> None:
            ref = remote.options(name=f"{run.job.evaluator.cfg.name}:{shard[0].id}").remote(
                build, configs[id(run)], shard
            )
            tasks[ref] = (run, shard, attempt)

        todo = 0
        for run in runs:
            pending = Evaluator.pending(run.items, run.records)
            todo += len(pending)
            for start in range(0, len(pending), shard_size):
                submit(run, pending[start : start + shard_size], 0)
        total = sum(len(run.items) for run in runs)
        failed = 0
        bar = tqdm(
            total=total, initial=total - todo, desc="grid on ray", unit="turn", disable=not progress, dynamic_ncols=True
        )
        try:
            while tasks:
                [ref], _ = ray.wait(list(tasks), num_returns=1)
                run, shard, attempt = tasks.pop(ref)
                try:
                    new = ray.get(ref)
                except AugmenterError as exc:  # Ray's RayTaskError(cause) is an instance of its cause's class
                    cause = getattr(exc, "cause", None)
                    raise _stopped(run, cause if isinstance(cause, AugmenterError) else exc, bar.n, total) from None
                except Exception as exc:  # the task crashed, or Ray gave up on its worker
                    cause = getattr(exc, "cause", None) or exc
                    reason = one_line(f"{type(cause).__name__}: {cause}", 300)
                    if attempt < retries:
                        log.warning(
                            "%s: a shard of %d turns failed (%s); sending it again",
                            run.job.evaluator.cfg.name,
                            len(shard),
                            reason,
                        )
                        submit(run, shard, attempt + 1)
                    else:
                        run.lost.append(reason)
                    continue
                run.job.evaluator.append(run.records, new)
                run.answered += len(new)
                failed += sum(r["status"] != "ok" for r in new)
                bar.update(len(new))
                bar.set_postfix({"failed": failed, "tasks": len(tasks)})
        except BaseException:
            for ref in tasks:
                try:
                    ray.cancel(ref)
                except Exception:  # best effort: the driver is stopping anyway
                    pass
            for run in runs:
                run.job.evaluator.finish(run.records, run.items, check=False)
            raise
        finally:
            bar.close()
        return [_outcome(run, retries) for run in runs]


def _outcome(run: _Run, retries: int) -> Outcome:
    name = str(run.job.evaluator.cfg.name)
    try:
        summary, error = run.job.evaluator.finish(run.records, run.items), None
    except EvalFailed as exc:
        summary, error = exc.summary, str(exc)
    if run.lost:
        lost = (
            f"{name}: {len(run.lost)} shard(s) not answered after {retries} retries ({run.lost[-1]}); "
            f"{summary['pending']} turns pending: run the same command again to answer them"
        )
        error = f"{error}; {lost}" if error else lost
    return Outcome(name, summary, run.answered, error)
