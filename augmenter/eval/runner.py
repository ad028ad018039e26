"""`augmenter eval`: run one system configuration over a data set's turns and keep every turn's record.

Records go to `<run dir>/records.jsonl` (one line per turn: dialogue id, status, the whole Working Memory, the
gold response(s) and knowledge, per-turn metrics, and cost: the Working Memory's figures and `turn_seconds`, the
turn's measured time), flushed after each turn. A turn whose LLM call failed, whose response is empty or whose
agent crashed is recorded with `"status": "failed"` and its `"error"`; it is left out of every metric and retried
when the run is resumed. A killed or stopped run resumes: turns already done are skipped. `summary.json` holds the
run's metrics and mean costs, and the counts of ok and failed turns. More failed turns than `eval.max_failed`
allows end the run with `EvalFailed`. The evaluator gets its agent and knowledge built (by the CLI or the API).
"""

from __future__ import annotations

import json
import logging
import os
import time
import traceback
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from statistics import mean
from typing import Any, Callable, Iterator, Optional, Union

from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm

from augmenter.agent import Agent
from augmenter.errors import AugmenterError, CircuitOpenError, ConfigError, InputError, LLMFatalError
from augmenter.eval.metrics import answer_prf, answer_recall, corpus_metrics, turn_metrics
from augmenter.memory import Snippet, Utterance
from augmenter.prompts import PromptTemplate
from augmenter.redact import redact, redact_data
from augmenter.storage import content_hash, read_jsonl, write_atomic
from augmenter.tasks import dstc7, dstc11, ottqa
from augmenter.text import one_line
from augmenter.verification.model import StoredModel

log = logging.getLogger(__name__)


class EvalFailed(AugmenterError):
    """More turns failed than `eval.max_failed` allows; the records and summary.json are written (`summary`)."""

    def __init__(self, message: str, summary: Optional[dict] = None):
        super().__init__(message)
        self.summary = summary


class KnowledgeAccess(str, Enum):
    """Where a turn's evidence comes from (an ablation switch, after ParlAI's KnowledgeAccessMethod)."""

    NONE = "none"            # no knowledge: consolidating gives nothing
    RETRIEVED = "retrieved"  # the Knowledge Consolidator retrieves it
    GOLD = "gold"            # the data set's gold knowledge is given


@dataclass
class EvalItem:
    """One turn to answer, with what it is judged against."""

    dialogue_id: str
    history: list[Utterance]
    q: str
    references: list[str]  # gold response(s)
    gold: list[Snippet] = field(default_factory=list)  # gold knowledge


def load_items(cfg: DictConfig, knowledge_base=None) -> list[EvalItem]:
    """The seeded sample of `eval.limit` turns of `eval.dataset` (dstc11: knowledge-seeking turns only)."""
    ev = cfg.eval
    limit = None if ev.limit in (None, 0) else int(ev.limit)
    if ev.dataset == "dstc11":
        root = Path(cfg.data_root) / "dstc11-track5"
        instances = dstc11.load_instances(root / ev.split, knowledge_seeking_only=True, limit=limit, seed=ev.seed)
        if knowledge_base is None:
            raise ConfigError("eval.dataset=dstc11 needs the DSTC11 knowledge base (task=dstc11)")
        return [EvalItem(str(i.index), i.history, i.q, [i.response or ""], knowledge_base.gold(i.knowledge))
                for i in instances]
    if ev.dataset == "dstc7":
        news = dstc7.load_instances(Path(cfg.data_root) / "dstc7-track2", limit=limit, seed=ev.seed)
        return [EvalItem(n.instance_id, n.history, n.q, n.references, [n.fact]) for n in news]
    if ev.dataset == "ottqa":
        questions = ottqa.load_questions(Path(cfg.data_root) / "ott-qa", limit=limit, seed=ev.seed)
        return [EvalItem(q.question_id, [], q.question, q.answers) for q in questions]
    raise ConfigError(f"eval.dataset must be dstc11, dstc7 or ottqa, got {ev.dataset!r}")


QA_DATASETS = ("ottqa",)  # short answers: answer P/R/F1 and the evidence's answer recall instead of KF1 etc.


def run_dir(cfg: DictConfig) -> Path:
    ev = cfg.eval
    sample = f"{ev.dataset}-{ev.split}-n{ev.limit or 'all'}-seed{ev.seed}"
    return Path(ev.out_dir) / sample / str(cfg.name)


# Options added after runs were recorded: left out of the fingerprint while they are off, so older runs still resume.
_ADDED_OPTIONS = {"consolidator": {"review_window": 0, "faq_context": 0},
                  "executor": {"unsupported": "supported_part", "fewshot_guard": False}}


# How a run is executed, shown and judged, not which system it is: changing them (a longer LLM timeout to retry
# failed turns, say) still resumes. {group: keys}; "" is the top level.
_RUN_OPTIONS = {"": ("trace", "script", "output", "data_root", "llm_cache", "llm_guard"),
                "eval": ("out_dir", "progress", "restart", "max_failed"),
                "llm": ("timeout", "deadline", "max_retries", "backoff")}


def _without_run_options(data: dict) -> dict:
    """`data` (a config as a dict) without its `_RUN_OPTIONS`."""
    for group, keys in _RUN_OPTIONS.items():
        node = data.get(group) if group else data
        for key in keys if isinstance(node, dict) else ():
            node.pop(key, None)
    return data


def _fingerprint(cfg: DictConfig) -> dict:
    """What must match for records to be resumed: everything but where and how the run is executed and shown."""
    data = _without_run_options(OmegaConf.to_container(cfg, resolve=True))
    for group, options in _ADDED_OPTIONS.items():
        for key, off in options.items():
            if isinstance(data.get(group), dict) and data[group].get(key, off) == off:
                data[group].pop(key, None)
    claims = str(data.get("utility", {}).get("_target_", "")).endswith("ClaimsUtility")
    if not claims:
        data.pop("verifier", None)  # only the claims utility uses a verifier
    # an edited prompt file changes the system as much as a changed option does
    prompts = data.get("prompt", {})
    files = {key: prompts.get(key) for key in ("response", "self_ask", "self_critique", "search_query")}
    if claims:  # the claim-splitting and verification prompts (PromptEngine's defaults unless set)
        files.update({key: prompts.get(key, key) for key in ("claims", "verify_claim")})
    data["prompt_files"] = {key: content_hash(PromptTemplate.source(name))
                            for key, name in files.items() if isinstance(name, str)}
    model = (data.get("verifier") or {}).get("model")
    if claims and model:  # refitted verifier weights are a different system too
        stored = StoredModel.load(model)
        data["verifier_weights"] = content_hash(json.dumps([list(stored.coef), stored.intercept, stored.threshold]))
    return data


def _upgraded(record: dict) -> dict:
    """A record in today's layout: records written before `turn_seconds` kept the turn's measured time as
    `cost.wall_seconds` (which in the Working Memory's summary is the sum of its actions' times)."""
    cost = record.get("cost")
    if isinstance(cost, dict) and "wall_seconds" in cost and "turn_seconds" not in cost:
        cost["turn_seconds"] = cost.pop("wall_seconds")
    return record


def read_records(path: Path) -> list[dict]:
    """A run's records, one per turn: a later line of the same turn (a retry) replaces the earlier one.

    Never fails on a damaged file: a line that is not a JSON object with a string `dialogue_id` (cut short by a
    crash, cut inside a UTF-8 character, garbled) is skipped with a warning, and its turn is run again on resume.
    Blank lines are ignored. Records of older layouts are read as today's (`_upgraded`)."""
    if not path.exists():
        return []
    records: dict[str, dict] = {}
    bad: list[int] = []
    for n, record in read_jsonl(path, lambda n, why: bad.append(n)):
        if isinstance(record.get("dialogue_id"), str):
            records[record["dialogue_id"]] = _upgraded(record)
        else:
            bad.append(n)
    if bad:
        lines = ", ".join(map(str, bad[:5])) + (", ..." if len(bad) > 5 else "")
        log.warning("%s: skipped %d unreadable line(s) (line %s: cut short or not a record); their turns run again "
                    "on resume", path, len(bad), lines)
    return list(records.values())


def failure(record: dict) -> Optional[str]:
    """Why a record's turn failed, or None for a scored turn. Records written before turn status count as failed
    when the LLM failed (outcome "failed") or the response is empty."""
    if "status" in record:
        return None if record["status"] == "ok" else str(record.get("error") or "unknown")
    if record.get("outcome") == "failed":
        warnings = (record.get("memory") or {}).get("warnings") or [""]
        return str(warnings[-1]) or "the LLM call failed"
    return None if str(record.get("response") or "").strip() else "empty response"


def summarize(records: list[dict], with_bertscore: bool = True) -> dict[str, Any]:
    """Metrics and mean per-turn costs of a run's scored turns; failed turns are only counted, by reason."""
    reasons = Counter(filter(None, map(failure, records)))
    ok = [r for r in records if failure(r) is None]
    counts = {"turns": len(records), "ok": len(ok), "failed": len(records) - len(ok),
              "failure_reasons": dict(reasons.most_common())}
    if not ok:
        return counts
    if "F1" in ok[0]["metrics"]:  # a short-answer (QA) run
        metrics = {k: mean(r["metrics"][k] for r in ok) for k in ("P", "R", "F1", "length")}
        metrics["answer_recall@5"] = 100.0 * mean(r["evidence_recall"] or 0.0 for r in ok)
    else:
        metrics = corpus_metrics([r["response"] for r in ok], [r["references"] for r in ok],
                                 [r["gold_knowledge"] for r in ok], with_bertscore=with_bertscore)
    cost_keys = [k for k in ok[0]["cost"] if all(k in r["cost"] for r in ok)]  # older records may lack some
    cost = {k: mean(r["cost"][k] for r in ok) for k in cost_keys}
    cost["knowledge_used"] = mean(1.0 if r["cost"]["knowledge_calls"] else 0.0 for r in ok)
    cost["candidates"] = mean(len(r["memory"]["o"]) for r in ok)
    outcomes = {k: 100.0 * mean(r.get("outcome") == k for r in ok) for k in ("partial", "abstained")}
    return {**counts, "metrics": metrics, "cost": cost, "outcomes_percent": outcomes}


def _legacy_holder(text: str) -> Optional[int]:
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
def run_lock(directory: Path) -> Iterator[Path]:
    """Hold `<directory>/run.lock` for a run: one writer per run directory (two evals of the same run would
    interleave their records). An exclusive `flock`, so exactly one of simultaneous evals gets it and a killed
    run's lock is free at once; the holder's pid is written for the message. A bare pid of a live process (the
    lock of an older augmenter, which did not flock) is respected; any other lock file is taken over."""
    import fcntl  # POSIX only: the records and summaries (`read_records`, `summarize`) are read without it

    directory.mkdir(parents=True, exist_ok=True)
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


def _turn_error(mem) -> Optional[str]:
    """Why an answered turn counts as failed (the LLM failed, or nothing was said), or None."""
    if mem.outcome == "failed":
        notes = [t.note.removeprefix("failed: ") for t in mem.trace if t.note and t.note.startswith("failed: ")]
        return (notes or mem.warnings or ["the LLM call failed"])[-1]
    return None if (mem.response or "").strip() else "empty response"


def _recall(gold_ids: list[str], evidence_ids: list[str]) -> Optional[float]:
    """Share of the gold snippets that made it into the evidence (None without gold knowledge)."""
    return len(set(gold_ids) & set(evidence_ids)) / len(set(gold_ids)) if gold_ids else None


class Evaluator:
    """Runs `cfg` (an `eval` config) over its turns, resumably, with built objects: `agent` answers (an Agent, or a
    function that builds one, called only when turns are left to answer); `knowledge` is the knowledge base that
    the gold labels of eval.dataset=dstc11 refer to."""

    def __init__(self, cfg: DictConfig, agent: Union[Agent, Callable[[], Agent]], knowledge=None):
        self.cfg, self.agent, self.knowledge = cfg, agent, knowledge
        try:
            self.access = KnowledgeAccess(cfg.eval.knowledge)
        except ValueError:
            raise ConfigError(f"eval.knowledge must be one of {', '.join(k.value for k in KnowledgeAccess)}, "
                              f"got {cfg.eval.knowledge!r}") from None
        self.dir = run_dir(cfg)
        self.records_path = self.dir / "records.jsonl"

    def _check_resume(self) -> None:
        stored = self.dir / "config.json"
        current = redact_data(_fingerprint(self.cfg))
        if self.records_path.exists() and stored.exists() and not self.cfg.eval.restart:
            try:
                before = json.loads(stored.read_bytes())
            except (OSError, ValueError, RecursionError):
                before = None
            if not isinstance(before, dict):
                raise ConfigError(f"{stored} is unreadable: delete it to resume these records with the current "
                                  "configuration, or set eval.restart=true")
            before = _without_run_options(before)
            if before != current:
                changed = sorted(k for k in set(before) | set(current) if before.get(k) != current.get(k))
                raise ConfigError(f"{self.dir} holds records of a different configuration (differs in: "
                                  f"{', '.join(changed)}); set name=... or eval.restart=true")
        if self.cfg.eval.restart and self.records_path.exists():
            self.records_path.unlink()
        self.dir.mkdir(parents=True, exist_ok=True)
        write_atomic(stored, json.dumps(current, indent=1))

    def _allowed_failures(self, turns: int) -> float:
        """`eval.max_failed` as a number of turns: an int >= 0 is a count, a float in (0, 1) a share of `turns`."""
        value = self.cfg.eval.get("max_failed", 0)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        if isinstance(value, float) and 0 < value < 1:
            return value * turns
        raise ConfigError(f"eval.max_failed must be a count (an int >= 0) or a share of the turns (a float "
                          f"between 0 and 1), got {value!r}")

    def run(self) -> dict[str, Any]:
        with run_lock(self.dir):
            return self._run()

    def _run(self) -> dict[str, Any]:
        self._allowed_failures(1)  # a bad value fails before any work
        self._check_resume()
        items = load_items(self.cfg, self.knowledge)
        if not items:
            raise InputError("no turns to evaluate")
        records = {r["dialogue_id"]: r for r in read_records(self.records_path)}
        if records:  # rewritten without a line a crash may have cut short, so that appending stays valid
            self._save(records, items)
        todo = [it for it in items if it.dialogue_id not in records or failure(records[it.dialogue_id])]
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
                "run the same command again to resume") from exc
        except LLMFatalError as exc:
            summary = self._finish(records, items)
            raise LLMFatalError(f"{exc}; {self.cfg.name}: eval stopped, {summary['ok'] + summary['failed']} of "
                                f"{len(items)} turns recorded in {self.dir}") from exc
        summary = self._finish(records, items)
        allowed = self._allowed_failures(len(items))
        if summary["failed"] > allowed:
            reason, count = next(iter(summary["failure_reasons"].items()))
            raise EvalFailed(f"{self.cfg.name}: {summary['failed']} of {len(items)} turns failed (eval.max_failed="
                             f"{self.cfg.eval.get('max_failed', 0)} allows {allowed:g}); most common reason "
                             f"({count} of them): {reason}; they are recorded in {self.dir} and not scored: run the "
                             "same command again to retry them", summary)
        return summary

    def _answer(self, agent, todo: list[EvalItem], records: dict[str, dict], total: int) -> None:
        """Answer `todo`, appending each turn's record (flushed) to the records file and to `records`."""
        key = "F1" if self.cfg.eval.dataset in QA_DATASETS else "KF1"
        scores = [r["metrics"][key] for r in records.values() if not failure(r)]
        failed = 0
        bar = tqdm(total=total, initial=total - len(todo), desc=str(self.cfg.name), unit="turn",
                   disable=not self.cfg.eval.progress, dynamic_ncols=True)
        with bar, open(self.records_path, "a", encoding="utf-8") as sink:
            for item in todo:
                record = self._turn(agent, item)
                sink.write(json.dumps(record, ensure_ascii=False) + "\n")
                sink.flush()
                records[item.dialogue_id] = record
                if record["status"] == "ok":
                    scores.append(record["metrics"][key])
                else:
                    failed += 1
                bar.set_postfix({key: f"{mean(scores):.2f}" if scores else "n/a", "failed": failed,
                                 "calls": record["cost"].get("llm_calls", 0)})
                bar.update()

    def _save(self, records: dict[str, dict], items: list[EvalItem]) -> list[dict]:
        """Rewrite the records file, one record per turn in sample order; returns the sample's records."""
        order = {it.dialogue_id: i for i, it in enumerate(items)}
        rows = sorted(records.values(), key=lambda r: order.get(r["dialogue_id"], len(order)))
        write_atomic(self.records_path, "".join(json.dumps(redact_data(r), ensure_ascii=False) + "\n" for r in rows))
        return [r for r in rows if r["dialogue_id"] in order]

    def _finish(self, records: dict[str, dict], items: list[EvalItem]) -> dict[str, Any]:
        """Save the records and write summary.json (also when the run stopped early)."""
        stats = summarize(self._save(records, items))
        summary = {"name": str(self.cfg.name), "run_dir": str(self.dir), **stats, "turns": len(items),
                   "pending": len(items) - stats["ok"] - stats["failed"]}
        write_atomic(self.dir / "summary.json", json.dumps(redact_data(summary), indent=1))
        return summary

    def _turn(self, agent, item: EvalItem) -> dict[str, Any]:
        """The turn's record. A failed or crashed turn is recorded as failed; only a fatal LLM error or an open
        circuit breaker (the backend is down) escapes."""
        start = time.perf_counter()
        try:
            return self._scored(agent, item, start)
        except (LLMFatalError, CircuitOpenError):
            raise
        except Exception as exc:
            log.debug("turn %s crashed:\n%s", item.dialogue_id, redact(traceback.format_exc()))
            return self._record(item, f"crash: {type(exc).__name__}: {exc}", start)

    def _scored(self, agent, item: EvalItem, start: float) -> dict[str, Any]:
        given: Optional[list[Snippet]] = {KnowledgeAccess.NONE: [], KnowledgeAccess.GOLD: item.gold,
                                          KnowledgeAccess.RETRIEVED: None}[self.access]
        mem = agent.respond(item.q, item.history, given=given)
        error = _turn_error(mem)
        if error:
            return self._record(item, error, start, mem)
        response = mem.response
        if self.cfg.eval.dataset in QA_DATASETS:
            p, r, f = answer_prf(response, item.references)
            metrics = {"P": p, "R": r, "F1": f, "length": len(response.split())}
            recall = answer_recall([s.text for s in mem.e[:5]], item.references)
        else:
            metrics = turn_metrics(response, item.references, [s.text for s in item.gold])
            recall = _recall([s.id for s in item.gold], [s.id for s in mem.e])
        return self._record(item, None, start, mem, metrics, recall)

    def _record(self, item: EvalItem, error: Optional[str], start: float, mem=None, metrics: Optional[dict] = None,
                recall: Optional[float] = None) -> dict[str, Any]:
        """A turn's record, redacted; a failed turn (`error`) has no metrics."""
        return redact_data({
            "dialogue_id": item.dialogue_id,
            "status": "failed" if error else "ok",
            "error": one_line(error, 500) if error else None,  # one line: the LLM's error, "empty response", "crash: ..."
            "response": (mem.response or "") if mem else "",
            "outcome": mem.outcome if mem else None,  # answered | partial | abstained ("I don't know") | failed
            "citations": mem.citation_records() if mem else [],
            "references": item.references,
            "gold_knowledge": [s.text for s in item.gold],
            "gold_ids": [s.id for s in item.gold],
            "metrics": metrics or {},
            # the Working Memory's cost figures, and the turn's measured time
            "cost": {**(mem.summary() if mem else {}), "turn_seconds": round(time.perf_counter() - start, 4)},
            "evidence_recall": recall,  # QA: whether an answer is in the top-5 evidence
            "memory": mem.model_dump(mode="json") if mem else None,
        })
