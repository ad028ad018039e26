"""`augmenter eval`: run one system configuration over a data set's turns and keep every turn's record.

Records go to `<run dir>/records.jsonl` (one line per turn: dialogue id, status, the whole Working Memory, the
gold response(s) and knowledge, per-turn metrics, and cost: the Working Memory's figures and `turn_seconds`, the
turn's measured time), flushed after each turn. A turn whose LLM call failed, whose response is empty or whose
agent crashed is recorded with `"status": "failed"` and its `"error"`; it is left out of every metric and retried
when the run is resumed. A killed or stopped run resumes: turns already done are skipped. `summary.json` holds the
run's metrics and mean costs, and the counts of ok and failed turns. More failed turns than `eval.max_failed`
allows end the run with `EvalFailed`. The evaluator gets its agent and task built (by the CLI or the API).
"""

from __future__ import annotations

import json
import logging
import os
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from statistics import mean
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf
from tqdm import tqdm

from augmenter.agent import Agent
from augmenter.errors import AugmenterError, CircuitOpenError, ConfigError, InputError, LLMFatalError
from augmenter.eval.records import EvalRecord, failure, read_records
from augmenter.eval.resume import check_config
from augmenter.eval.tasks import GroundedDialogueTask, Task
from augmenter.fingerprint import normalized, system_config
from augmenter.memory import Snippet
from augmenter.redact import redact, redact_data
from augmenter.storage import content_hash, make_dir, write_atomic
from augmenter.tasks.base import Turn, seeded_sample
from augmenter.text import one_line

log = logging.getLogger(__name__)


class EvalFailed(AugmenterError):
    """More turns failed than `eval.max_failed` allows; the records and summary.json are written (`summary`)."""

    def __init__(self, message: str, summary: dict | None = None):
        super().__init__(message)
        self.summary = summary


class KnowledgeAccess(str, Enum):
    """Where a turn's evidence comes from (an ablation switch, after ParlAI's KnowledgeAccessMethod)."""

    NONE = "none"  # no knowledge: consolidating gives nothing
    RETRIEVED = "retrieved"  # the Knowledge Consolidator retrieves it
    GOLD = "gold"  # the data set's gold knowledge is given


def _excluded(exclude) -> list:
    """`eval.exclude` as a list of samples (it may be one sample, a list, or null)."""
    if not exclude:
        return []
    return list(exclude) if isinstance(exclude, (list, ListConfig)) else [exclude]


MAX_SAMPLE_NAME = 160  # characters of a run's sample folder name; a longer one is cut and given a digest


def _sample_name(sample) -> str:
    if sample.get("chain") is not None:
        return "-chain(" + "".join(_sample_name(s) for s in sample.chain) + ")"
    inner = "".join(f"-minus{_sample_name(s)}" for s in _excluded(sample.get("exclude")))
    return f"-n{sample.limit or 'all'}-seed{sample.seed}" + (f"({inner[1:]})" if inner else "")


def run_dir(cfg: DictConfig) -> Path:
    ev = cfg.eval
    sample = f"{ev.dataset}-{ev.split}-n{ev.limit or 'all'}-seed{ev.seed}"
    excluded = _excluded(ev.get("exclude"))
    if len(excluded) == 1 and not excluded[0].get("exclude") and excluded[0].get("chain") is None:
        # the name the claim set's runs have always had
        sample += f"-minus-n{excluded[0].limit}-seed{excluded[0].seed}"
    else:
        sample += "".join(f"-minus{_sample_name(s)}" for s in excluded)
    if len(sample) > MAX_SAMPLE_NAME:  # a folder name has at most 255 bytes: keep its start and a digest of the rest
        sample = f"{sample[: MAX_SAMPLE_NAME - 13]}-{content_hash(sample, length=12)}"
    return Path(ev.out_dir) / sample / str(cfg.name)


def sample_turns(task: Task, ev) -> list[Turn]:
    """The turns an eval runs: a seeded sample of `eval.limit` (all when null or 0); with `eval.exclude`
    ({limit, seed}, or a list of them; each may have its own `exclude`: the sample it names was drawn apart from
    those), drawn from the turns outside those samples (e.g. fitting on dev turns apart from the 200 that the
    paper's experiments are scored on and from the labelled claim set's 60). An excluded `{chain: [sample, ...]}`
    stands for its samples ({limit, seed}), each drawn apart from those before it: the nested form of a long chain
    doubles in size with each sample it adds."""
    drawn: dict[str, list[Turn]] = {}  # each named sample drawn once, by its limit, seed and exclude: a sample's
    # exclude repeats the samples before it with their own, so drawing each at every mention takes exponential time
    pool: list[Turn] = []  # every turn, loaded once for all the samples drawn apart from others

    def size(sample) -> int | None:
        return None if sample.limit in (None, 0) else int(sample.limit)

    def draw(sample) -> list[Turn]:
        if sample.get("chain") is not None:
            turns: list[Turn] = []
            for n, link in enumerate(sample.chain):
                if link.get("exclude") or link.get("chain") is not None:
                    raise ConfigError(
                        "eval.exclude: a chain's samples are {limit, seed} (each drawn apart from those before)"
                    )
                if n == 0:
                    turns += task.turns(size(link), link.seed)
                    continue
                before = {t.id for t in turns}
                pool[:] = pool or task.turns(None, None)
                turns += seeded_sample([t for t in pool if t.id not in before], size(link), link.seed)
            return turns
        key = json.dumps([sample.limit, sample.seed, _plain(sample.get("exclude"))], sort_keys=True, default=str)
        if key not in drawn:
            limit = size(sample)
            excluded = _excluded(sample.get("exclude"))
            if not excluded:
                drawn[key] = task.turns(limit, sample.seed)
            else:
                left_out = {t.id for other in excluded for t in draw(other)}
                pool[:] = pool or task.turns(None, None)
                drawn[key] = seeded_sample([t for t in pool if t.id not in left_out], limit, sample.seed)
        return drawn[key]

    return draw(ev)


def _plain(value):
    """A config value as plain lists and dicts (the key a drawn sample is kept under)."""
    return OmegaConf.to_container(value) if isinstance(value, (DictConfig, ListConfig)) else value


def summarize(
    records: list[dict], with_bertscore: bool = True, task: Task | type = GroundedDialogueTask
) -> dict[str, Any]:
    """Metrics (`task`'s corpus metrics) and mean per-turn costs of a run's scored turns; failed turns are only
    counted, by reason."""
    reasons = Counter(filter(None, map(failure, records)))
    ok = [r for r in records if failure(r) is None]
    counts = {
        "turns": len(records),
        "ok": len(ok),
        "failed": len(records) - len(ok),
        "failure_reasons": dict(reasons.most_common()),
    }
    if not ok:
        return counts
    metrics = task.corpus_metrics(ok, with_bertscore=with_bertscore)
    cost_keys = [k for k in ok[0]["cost"] if all(k in r["cost"] for r in ok)]  # older records may lack some
    cost = {k: mean(r["cost"][k] for r in ok) for k in cost_keys}
    cost["knowledge_used"] = mean(1.0 if r["cost"].get("knowledge_calls") else 0.0 for r in ok)
    cost["candidates"] = mean(len(r["memory"].get("o") or ()) for r in ok)
    outcomes = {k: 100.0 * mean(r.get("outcome") == k for r in ok) for k in ("partial", "quoted", "abstained")}
    return {**counts, "metrics": metrics, "cost": cost, "outcomes_percent": outcomes}


def _legacy_holder(text: str) -> int | None:
    """The pid of a lock file written without flock (a bare pid: an older augmenter), if that process is alive.
    Ours ("<pid> flock") are stale once their flock is free, even if the pid has been reused since."""
    try:
        pid = int(text)
        os.kill(pid, 0)
    except (ValueError, OverflowError, ProcessLookupError, PermissionError):
        return None
    return pid if pid != os.getpid() else None


def _busy(directory: Path, pid) -> ConfigError:
    return ConfigError(f"another eval (pid {pid}) is writing {directory}; wait for it or stop it")


@contextmanager
def run_lock(directory: Path, setting: str = "the run directory") -> Iterator[Path]:
    """Hold `<directory>/run.lock` for a run: one writer per run directory (two evals of the same run would
    interleave their records). An exclusive `flock`, so exactly one of simultaneous evals gets it and a killed
    run's lock is free at once; the holder's pid is written for the message. A bare pid of a live process (the
    lock of an older augmenter, which did not flock) is respected; any other lock file is taken over."""
    import fcntl  # POSIX only: the records and summaries (`read_records`, `summarize`) are read without it

    make_dir(directory, setting)  # `setting`: the key that names it, for the error line
    path = directory / "run.lock"
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            try:
                holder = path.read_text().split()[0]
            except (OSError, IndexError):
                holder = "?"
            raise _busy(directory, holder) from None
        try:
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)  # the holder removed the file between our open and flock: lock the new one
    pid = _legacy_holder(os.pread(fd, 32, 0).decode("ascii", "replace"))
    if pid:
        os.close(fd)
        raise _busy(directory, pid)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()} flock".encode(), 0)
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)  # while still holding it: a waiter sees the file gone and retries
        os.close(fd)


def _turn_error(mem) -> str | None:
    """Why an answered turn counts as failed (the LLM failed, or nothing was said), or None."""
    if mem.outcome == "failed":
        notes = [t.note.removeprefix("failed: ") for t in mem.trace if t.note and t.note.startswith("failed: ")]
        return (notes or mem.warnings or ["the LLM call failed"])[-1]
    return None if (mem.response or "").strip() else "empty response"


class Evaluator:
    """Runs `cfg` (an `eval` config) over its task's turns, resumably, with built objects: `agent` answers (an Agent,
    or a function that builds one, called only when turns are left to answer); `task` loads the turns and scores
    the responses (`augmenter.eval.tasks.build_task`)."""

    def __init__(self, cfg: DictConfig, agent: Agent | Callable[[], Agent], task: Task):
        self.cfg, self.agent, self.task = cfg, agent, task
        try:
            self.access = KnowledgeAccess(cfg.eval.knowledge)
        except ValueError:
            raise ConfigError(
                f"eval.knowledge must be one of {', '.join(k.value for k in KnowledgeAccess)}, "
                f"got {cfg.eval.knowledge!r}"
            ) from None
        self.dir = run_dir(cfg)
        self.records_path = self.dir / "records.jsonl"

    def _check_resume(self) -> None:
        check_config(
            self.dir,
            self.records_path,
            redact_data(system_config(self.cfg)),
            self.cfg.eval.restart,
            "set name=... or eval.restart=true",
            stored_as_today=normalized,
        )

    def _allowed_failures(self, turns: int) -> float:
        """`eval.max_failed` as a number of turns: an int >= 0 is a count, a float in (0, 1) a share of `turns`."""
        value = self.cfg.eval.get("max_failed", 0)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        if isinstance(value, float) and 0 < value < 1:
            return value * turns
        raise ConfigError(
            f"eval.max_failed must be a count (an int >= 0) or a share of the turns (a float "
            f"between 0 and 1), got {value!r}"
        )

    def run(self) -> dict[str, Any]:
        with run_lock(self.dir, "eval.out_dir"):
            return self._run()

    # -- `run` in steps, for a driver whose turns are answered elsewhere (augmenter.eval.distributed) ----------
    def prepare(self) -> tuple[list[Turn], dict[str, dict]]:
        """What `run` does before answering (eval.max_failed checked before any work, the stored config checked,
        config.json written, the records file rewritten without a cut line); call it with `run_lock(self.dir)` held.
        Returns the sample's turns and the records kept, by dialogue id (turns to answer: `pending`)."""
        self._allowed_failures(1)
        self._check_resume()
        ev = self.cfg.eval
        items = sample_turns(self.task, ev)
        if not items:
            raise InputError("no turns to evaluate")
        records = {r["dialogue_id"]: r for r in read_records(self.records_path, self.task.metric_keys)}
        if records:  # rewritten without a line a crash may have cut short, so that appending stays valid
            self._save(records, items)
        return items, records

    @staticmethod
    def pending(items: list[Turn], records: dict[str, dict]) -> list[Turn]:
        """The turns of `items` without a record, or with a failed one (retried)."""
        return [t for t in items if t.id not in records or failure(records[t.id])]

    def answer(self, turns: list[Turn]) -> list[EvalRecord]:
        """The records of `turns`, in their order, written nowhere (`eval.concurrency` turns at once); the agent is
        built on first use. A fatal LLM error or an open circuit breaker escapes."""
        if not hasattr(self.agent, "respond"):
            self.agent = self.agent()
        done = {item.id: record for item, record in self._answered(self.agent, turns, self._workers(self.agent))}
        return [done[t.id] for t in turns]

    def append(self, records: dict[str, dict], new: list[dict]) -> None:
        """Append `new` records to the records file (flushed) and to `records` (the run's, by dialogue id)."""
        with open(self.records_path, "a", encoding="utf-8") as sink:
            for record in new:
                sink.write(json.dumps(record, ensure_ascii=False) + "\n")
                records[record["dialogue_id"]] = record

    def finish(self, records: dict[str, dict], items: list[Turn], check: bool = True) -> dict[str, Any]:
        """What `run` does after answering: the records saved in sample order, summary.json written; with `check`,
        EvalFailed when more turns failed than eval.max_failed allows."""
        summary = self._finish(records, items)
        allowed = self._allowed_failures(len(items))
        if check and summary["failed"] > allowed:
            reason, count = next(iter(summary["failure_reasons"].items()))
            raise EvalFailed(
                f"{self.cfg.name}: {summary['failed']} of {len(items)} turns failed (eval.max_failed="
                f"{self.cfg.eval.get('max_failed', 0)} allows {allowed:g}); most common reason "
                f"({count} of them): {reason}; they are recorded in {self.dir} and not scored: run the "
                "same command again to retry them",
                summary,
            )
        return summary

    def _run(self) -> dict[str, Any]:
        items, records = self.prepare()
        todo = self.pending(items, records)
        try:
            if todo:
                agent = self.agent if hasattr(self.agent, "respond") else self.agent()
                self._answer(agent, todo, records, len(items))
        except CircuitOpenError as exc:
            summary = self._finish(records, items)
            limit = OmegaConf.select(self.cfg, "llm_guard.max_consecutive_failures", default=None)
            raise CircuitOpenError(
                f"{self.cfg.name}: eval stopped after {limit or 'too many'} consecutive LLM failures ({exc}); "
                f"{summary['ok'] + summary['failed']} of {len(items)} turns recorded in {self.dir}: "
                "run the same command again to resume"
            ) from exc
        except LLMFatalError as exc:
            summary = self._finish(records, items)
            raise LLMFatalError(
                f"{exc}; {self.cfg.name}: eval stopped, {summary['ok'] + summary['failed']} of "
                f"{len(items)} turns recorded in {self.dir}"
            ) from exc
        return self.finish(records, items)

    def _answer(self, agent, todo: list[Turn], records: dict[str, dict], total: int) -> None:
        """Answer `todo`, appending each turn's record (flushed, by this thread only) to the records file and to
        `records` as soon as it is done; `_save` puts them back in sample order."""
        key = self.task.score_metric
        scores = [r["metrics"][key] for r in records.values() if not failure(r) and r["metrics"].get(key) is not None]
        failed = 0
        bar = tqdm(
            total=total,
            initial=total - len(todo),
            desc=str(self.cfg.name),
            unit="turn",
            disable=not self.cfg.eval.progress,
            dynamic_ncols=True,
        )
        with bar, open(self.records_path, "a", encoding="utf-8") as sink:
            for item, record in self._answered(agent, todo, self._workers(agent)):
                sink.write(json.dumps(record, ensure_ascii=False) + "\n")
                sink.flush()
                records[item.id] = record
                if record["status"] == "ok":
                    scores += [record["metrics"][key]] if record["metrics"].get(key) is not None else []
                else:
                    failed += 1
                bar.set_postfix(
                    {
                        key: f"{mean(scores):.2f}" if scores else "n/a",
                        "failed": failed,
                        "calls": record["cost"].get("llm_calls", 0),
                    }
                )
                bar.update()

    def _workers(self, agent) -> int:
        """`eval.concurrency`: turns answered at once. The embedded model answers one call at a time in this
        process, so with it turns run one by one (serve it with llama.cpp's server and parallel slots for more)."""
        workers = int(self.cfg.eval.get("concurrency") or 1)
        backend = getattr(getattr(getattr(agent, "executor", None), "llm", None), "backend", None)
        if workers > 1 and backend == "local":
            log.warning(
                "eval.concurrency=%d: the embedded model runs one call at a time in-process, so turns run "
                "one by one; for concurrent turns serve the model (llama.cpp's server with --parallel "
                "slots) and use llm=openai",
                workers,
            )
            return 1
        return workers

    def _answered(self, agent, todo: list[Turn], workers: int) -> Iterator[tuple[Turn, EvalRecord]]:
        """Each turn of `todo` with its record, as turns are done: one at a time, or `workers` at once on a thread
        pool. A fatal LLM error or an open circuit breaker stops the pool: turns not yet done are left for resume."""
        if workers <= 1:
            for item in todo:
                yield item, self._turn(agent, item)
            return
        pool = ThreadPoolExecutor(workers, thread_name_prefix="eval-turn")
        futures = {pool.submit(self._turn, agent, item): item for item in todo}
        try:
            for future in as_completed(futures):
                yield futures[future], future.result()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _save(self, records: dict[str, dict], items: list[Turn]) -> list[dict]:
        """Rewrite the records file, one record per turn in sample order; returns the sample's records."""
        order = {t.id: i for i, t in enumerate(items)}
        rows = sorted(records.values(), key=lambda r: order.get(r["dialogue_id"], len(order)))
        write_atomic(self.records_path, "".join(json.dumps(redact_data(r), ensure_ascii=False) + "\n" for r in rows))
        return [r for r in rows if r["dialogue_id"] in order]

    def _finish(self, records: dict[str, dict], items: list[Turn]) -> dict[str, Any]:
        """Save the records and write summary.json (also when the run stopped early)."""
        stats = summarize(self._save(records, items), task=self.task)
        summary = {
            "name": str(self.cfg.name),
            "run_dir": str(self.dir),
            **stats,
            "turns": len(items),
            "pending": len(items) - stats["ok"] - stats["failed"],
        }
        write_atomic(self.dir / "summary.json", json.dumps(redact_data(summary), indent=1))
        return summary

    def _turn(self, agent, item: Turn) -> EvalRecord:
        """The turn's record. A failed or crashed turn is recorded as failed; only a fatal LLM error or an open
        circuit breaker (the backend is down) escapes."""
        start = time.perf_counter()
        try:
            return self._scored(agent, item, start)
        except (LLMFatalError, CircuitOpenError):
            raise
        except Exception as exc:
            log.debug("turn %s crashed:\n%s", item.id, redact(traceback.format_exc()))
            return self._record(item, f"crash: {type(exc).__name__}: {exc}", start)

    def _scored(self, agent, item: Turn, start: float) -> EvalRecord:
        given: list[Snippet] | None = {
            KnowledgeAccess.NONE: [],
            KnowledgeAccess.GOLD: item.gold,
            KnowledgeAccess.RETRIEVED: None,
        }[self.access]
        mem = agent.respond(item.q, item.history, given=given)
        error = _turn_error(mem)
        if error:
            return self._record(item, error, start, mem)
        score = self.task.score(item, mem)
        return self._record(item, None, start, mem, score.metrics, score.evidence_recall)

    def _record(
        self,
        item: Turn,
        error: str | None,
        start: float,
        mem=None,
        metrics: dict | None = None,
        recall: float | None = None,
    ) -> EvalRecord:
        """A turn's record, redacted; a failed turn (`error`) has no metrics."""
        return redact_data(
            {
                "dialogue_id": item.id,
                "status": "failed" if error else "ok",
                # One line: the LLM's error, "empty response", "crash: ...".
                "error": one_line(error, 500) if error else None,
                "response": (mem.response or "") if mem else "",
                "outcome": mem.outcome if mem else None,  # an augmenter.memory.Outcome; None when the turn crashed
                "citations": mem.citation_records() if mem else [],
                "references": item.references,
                "gold_knowledge": [s.text for s in item.gold],
                "gold_ids": [s.id for s in item.gold],
                "metrics": metrics or {},
                # the Working Memory's cost figures, and the turn's measured time
                "cost": {**(mem.summary() if mem else {}), "turn_seconds": round(time.perf_counter() - start, 4)},
                "evidence_recall": recall,  # QA: whether an answer is in the top-5 evidence
                "memory": mem.model_dump(mode="json") if mem else None,
            }
        )
