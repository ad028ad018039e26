"""`augmenter eval`: run one system configuration over a data set's turns and keep every turn's record.

Records go to `<run dir>/records.jsonl` (one line per turn: dialogue id, the whole Working Memory, the
gold response(s) and knowledge, per-turn metrics and cost), flushed after each turn. A killed run resumes:
turns already in the file are skipped. `summary.json` holds the run's metrics and mean costs.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from statistics import mean
from typing import Any, Optional

from omegaconf import DictConfig, OmegaConf

from augmenter.errors import ConfigError, InputError
from augmenter.eval.metrics import corpus_metrics, turn_metrics
from augmenter.memory import Snippet, Utterance


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
        from augmenter.tasks.dstc11 import load_instances

        root = Path(cfg.data_root) / "dstc11-track5"
        instances = load_instances(root / ev.split, knowledge_seeking_only=True, limit=limit, seed=ev.seed)
        if knowledge_base is None:
            raise ConfigError("eval.dataset=dstc11 needs the DSTC11 knowledge base (task=dstc11)")
        return [EvalItem(str(i.index), i.history, i.q, [i.response or ""], knowledge_base.gold(i.knowledge))
                for i in instances]
    if ev.dataset == "dstc7":
        from augmenter.tasks.dstc7 import load_instances as load_news

        news = load_news(Path(cfg.data_root) / "dstc7-track2", limit=limit, seed=ev.seed)
        return [EvalItem(n.instance_id, n.history, n.q, n.references, [n.fact]) for n in news]
    if ev.dataset == "ottqa":
        from augmenter.tasks.ottqa import load_questions

        questions = load_questions(Path(cfg.data_root) / "ott-qa", limit=limit, seed=ev.seed)
        return [EvalItem(q.question_id, [], q.question, q.answers) for q in questions]
    raise ConfigError(f"eval.dataset must be dstc11, dstc7 or ottqa, got {ev.dataset!r}")


QA_DATASETS = ("ottqa",)  # short answers: answer P/R/F1 and the evidence's answer recall instead of KF1 etc.


def run_dir(cfg: DictConfig) -> Path:
    ev = cfg.eval
    sample = f"{ev.dataset}-{ev.split}-n{ev.limit or 'all'}-seed{ev.seed}"
    return Path(ev.out_dir) / sample / str(cfg.name)


# Options added after runs were recorded: left out of the fingerprint while they are off, so older runs still resume.
_ADDED_OPTIONS = {"consolidator": {"review_window": 0, "faq_context": 0}, "executor": {"unsupported": "supported_part"}}


def _fingerprint(cfg: DictConfig) -> dict:
    """What must match for records to be resumed: everything but where and how the run is shown."""
    data = OmegaConf.to_container(cfg, resolve=True)
    for group, options in _ADDED_OPTIONS.items():
        for key, off in options.items():
            if isinstance(data.get(group), dict) and data[group].get(key, off) == off:
                data[group].pop(key, None)
    for key in ("trace", "script", "output", "data_root", "llm_cache"):
        data.pop(key, None)
    claims = str(data.get("utility", {}).get("_target_", "")).endswith("ClaimsUtility")
    if not claims:
        data.pop("verifier", None)  # only the claims utility uses a verifier
    data.get("eval", {}).pop("out_dir", None)
    data.get("eval", {}).pop("progress", None)
    # an edited prompt file changes the system as much as a changed option does
    from augmenter.prompts import PromptTemplate

    prompts = data.get("prompt", {})
    files = {key: prompts.get(key) for key in ("response", "self_ask", "self_critique", "search_query")}
    if claims:  # the claim-splitting and verification prompts (PromptEngine's defaults unless set)
        files.update({key: prompts.get(key, key) for key in ("claims", "verify_claim")})
    data["prompt_files"] = {key: hashlib.sha256(PromptTemplate.source(name).encode("utf-8")).hexdigest()[:16]
                            for key, name in files.items() if isinstance(name, str)}
    model = (data.get("verifier") or {}).get("model")
    if claims and model:  # refitted verifier weights are a different system too
        from augmenter.verification.model import StoredModel

        stored = StoredModel.load(model)
        data["verifier_weights"] = hashlib.sha256(json.dumps([list(stored.coef), stored.intercept, stored.threshold])
                                                  .encode("utf-8")).hexdigest()[:16]
    return data


def read_records(path: Path) -> list[dict]:
    """The records of a run; a line cut short by a crash is dropped (and recomputed on resume)."""
    if not path.exists():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def summarize(records: list[dict], with_bertscore: bool = True) -> dict[str, Any]:
    """Metrics and mean per-turn costs of a run's records."""
    if not records:
        return {"turns": 0}
    if "F1" in records[0]["metrics"]:  # a short-answer (QA) run
        metrics = {k: mean(r["metrics"][k] for r in records) for k in ("P", "R", "F1", "length")}
        metrics["answer_recall@5"] = 100.0 * mean(r["evidence_recall"] or 0.0 for r in records)
    else:
        metrics = corpus_metrics([r["response"] for r in records], [r["references"] for r in records],
                                 [r["gold_knowledge"] for r in records], with_bertscore=with_bertscore)
    cost_keys = [k for k in records[0]["cost"] if all(k in r["cost"] for r in records)]  # older records may lack some
    cost = {k: mean(r["cost"][k] for r in records) for k in cost_keys}
    cost["knowledge_used"] = mean(1.0 if r["cost"]["knowledge_calls"] else 0.0 for r in records)
    cost["candidates"] = mean(len(r["memory"]["o"]) for r in records)
    outcomes = {k: 100.0 * mean(r.get("outcome") == k for r in records) for k in ("partial", "abstained")}
    return {"turns": len(records), "metrics": metrics, "cost": cost, "outcomes_percent": outcomes}


def _recall(gold_ids: list[str], evidence_ids: list[str]) -> Optional[float]:
    """Share of the gold snippets that made it into the evidence (None without gold knowledge)."""
    return len(set(gold_ids) & set(evidence_ids)) / len(set(gold_ids)) if gold_ids else None


class Evaluator:
    """Runs `cfg` (an `eval` config) over its turns, resumably."""

    def __init__(self, cfg: DictConfig):
        self.cfg = cfg
        try:
            self.access = KnowledgeAccess(cfg.eval.knowledge)
        except ValueError:
            raise ConfigError(f"eval.knowledge must be one of {', '.join(k.value for k in KnowledgeAccess)}, "
                              f"got {cfg.eval.knowledge!r}") from None
        self.dir = run_dir(cfg)
        self.records_path = self.dir / "records.jsonl"

    def _check_resume(self) -> None:
        stored = self.dir / "config.json"
        current = _fingerprint(self.cfg)
        if self.records_path.exists() and stored.exists() and not self.cfg.eval.restart:
            before = json.loads(stored.read_text(encoding="utf-8"))
            if before != current:
                changed = sorted(k for k in set(before) | set(current) if before.get(k) != current.get(k))
                raise ConfigError(f"{self.dir} holds records of a different configuration (differs in: "
                                  f"{', '.join(changed)}); set name=... or eval.restart=true")
        if self.cfg.eval.restart and self.records_path.exists():
            self.records_path.unlink()
        self.dir.mkdir(parents=True, exist_ok=True)
        stored.write_text(json.dumps(current, indent=1), encoding="utf-8")

    def _lock(self) -> Path:
        """One writer per run directory: a second eval of the same run would interleave the records."""
        self.dir.mkdir(parents=True, exist_ok=True)
        lock = self.dir / "run.lock"
        if lock.exists():
            try:
                pid = int(lock.read_text().strip() or 0)
                os.kill(pid, 0)  # raises if no such process: a stale lock from a killed run
            except (ValueError, ProcessLookupError, PermissionError):
                pid = 0
            if pid and pid != os.getpid():
                raise ConfigError(f"another eval (pid {pid}) is writing {self.dir}; wait for it or stop it")
        lock.write_text(str(os.getpid()))
        return lock

    def run(self) -> dict[str, Any]:
        lock = self._lock()
        try:
            return self._run()
        finally:
            lock.unlink(missing_ok=True)

    def _run(self) -> dict[str, Any]:
        from tqdm import tqdm

        from augmenter.config import build_agent, instantiate

        self._check_resume()
        knowledge = instantiate(self.cfg.knowledge, "knowledge") if self.cfg.eval.dataset == "dstc11" else None
        items = load_items(self.cfg, knowledge)
        if not items:
            raise InputError("no turns to evaluate")
        done = {r["dialogue_id"]: r for r in read_records(self.records_path)}
        if done:  # rewrite without a line a crash may have cut short, so that appending stays valid
            tmp = self.records_path.with_suffix(".tmp")
            tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in done.values()), encoding="utf-8")
            tmp.replace(self.records_path)
        todo = [it for it in items if it.dialogue_id not in done]
        key = "F1" if self.cfg.eval.dataset in QA_DATASETS else "KF1"
        kf1s = [r["metrics"][key] for r in done.values()]
        if todo:
            agent = build_agent(self.cfg)
            bar = tqdm(total=len(items), initial=len(items) - len(todo), desc=str(self.cfg.name), unit="turn",
                       disable=not self.cfg.eval.progress, dynamic_ncols=True)
            with open(self.records_path, "a", encoding="utf-8") as sink:
                for item in todo:
                    record = self._turn(agent, item)
                    sink.write(json.dumps(record, ensure_ascii=False) + "\n")
                    sink.flush()
                    done[item.dialogue_id] = record
                    kf1s.append(record["metrics"][key])
                    bar.set_postfix({key: f"{mean(kf1s):.2f}", "calls": record["cost"]["llm_calls"]})
                    bar.update()
            bar.close()
        order = {it.dialogue_id: i for i, it in enumerate(items)}
        records = sorted((r for r in done.values() if r["dialogue_id"] in order), key=lambda r: order[r["dialogue_id"]])
        summary = {"name": str(self.cfg.name), "run_dir": str(self.dir), **summarize(records)}
        (self.dir / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
        return summary

    def _turn(self, agent, item: EvalItem) -> dict[str, Any]:
        given: Optional[list[Snippet]] = {KnowledgeAccess.NONE: [], KnowledgeAccess.GOLD: item.gold,
                                          KnowledgeAccess.RETRIEVED: None}[self.access]
        start = time.perf_counter()
        mem = agent.respond(item.q, item.history, given=given)
        response = mem.response or ""
        gold_texts = [s.text for s in item.gold]
        if self.cfg.eval.dataset in QA_DATASETS:
            from augmenter.eval.metrics import answer_prf
            from augmenter.knowledge.chainer import answer_recall

            p, r, f = answer_prf(response, item.references)
            metrics = {"P": p, "R": r, "F1": f, "length": len(response.split())}
            recall = answer_recall([s.text for s in mem.e[:5]], item.references)
        else:
            metrics = turn_metrics(response, item.references, gold_texts)
            recall = _recall([s.id for s in item.gold], [s.id for s in mem.e])
        return {
            "dialogue_id": item.dialogue_id,
            "response": response,
            "outcome": mem.outcome,  # answered | partial (only supported claims) | abstained ("I don't know")
            "citations": mem.citation_records(),
            "references": item.references,
            "gold_knowledge": gold_texts,
            "gold_ids": [s.id for s in item.gold],
            "metrics": metrics,
            "cost": {**mem.summary(), "wall_seconds": round(time.perf_counter() - start, 4)},
            "evidence_recall": recall,  # QA: whether an answer is in the top-5 evidence
            "memory": mem.model_dump(mode="json"),
        }
