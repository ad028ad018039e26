"""Tasks: what an eval runs over and how a response is judged (`eval.dataset`).

A task loads its turns (`Turn`, the one turn model) as a seeded sample, scores one response with the Working
Memory that produced it, and aggregates the scored turns of a run. Two kinds: grounded dialogue (DSTC11, DSTC7:
KF1, BLEU, ROUGE, ... against gold responses and knowledge) and short-answer QA (OTT-QA: answer P/R/F1, and
whether the answer is in the top-5 evidence).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Protocol

from augmenter.errors import ConfigError
from augmenter.eval.metrics import answer_prf, answer_recall, corpus_metrics, turn_metrics
from augmenter.memory import WorkingMemory
from augmenter.tasks import dstc7, dstc11, ottqa
from augmenter.tasks.base import Turn

Loader = Callable[[int | None, int | None], list[Turn]]  # (limit, seed) -> turns


@dataclass
class TurnScore:
    metrics: dict[str, float | None]  # per-turn metrics, the task's `score_metric` among them
    evidence_recall: float | None  # gold knowledge found (dialogue) or answer in the top-5 evidence (QA)


class Task(Protocol):
    name: str
    score_metric: str  # the headline per-turn metric, e.g. "KF1"
    metric_keys: tuple[str, ...]  # the per-turn metrics every scored turn has (what reports read back)

    def turns(self, limit: int | None = None, seed: int | None = 0) -> list[Turn]: ...

    def score(self, turn: Turn, memory: WorkingMemory) -> TurnScore: ...

    def corpus_metrics(self, records: Sequence[dict], with_bertscore: bool = True) -> dict[str, float | None]: ...


class _LoadedTask:
    """A named task whose turns come from `load(limit, seed)`."""

    def __init__(self, name: str, load: Loader):
        self.name, self._load = name, load

    def turns(self, limit: int | None = None, seed: int | None = 0) -> list[Turn]:
        return self._load(limit, seed)


class GroundedDialogueTask(_LoadedTask):
    """Responses judged against gold responses and gold knowledge (KF1 is the headline)."""

    score_metric = "KF1"
    metric_keys = ("KF1",)

    def score(self, turn: Turn, memory: WorkingMemory) -> TurnScore:
        metrics = turn_metrics(memory.response or "", turn.references or [""], [s.text for s in turn.gold])
        gold = {s.id for s in turn.gold}
        recall = len(gold & {s.id for s in memory.e}) / len(gold) if gold else None
        return TurnScore(metrics, recall)

    @staticmethod
    def corpus_metrics(records: Sequence[dict], with_bertscore: bool = True) -> dict[str, float | None]:
        return corpus_metrics(
            [r["response"] for r in records],
            [r["references"] or [""] for r in records],
            [r["gold_knowledge"] for r in records],
            with_bertscore=with_bertscore,
        )


class ShortAnswerTask(_LoadedTask):
    """Questions with short gold answers (answer F1 is the headline)."""

    score_metric = "F1"
    metric_keys = ("P", "R", "F1", "length")

    def score(self, turn: Turn, memory: WorkingMemory) -> TurnScore:
        response = memory.response or ""
        p, r, f = answer_prf(response, turn.references)
        metrics: dict[str, float | None] = {"P": p, "R": r, "F1": f, "length": len(response.split())}
        return TurnScore(metrics, answer_recall([s.text for s in memory.e[:5]], turn.references))

    @staticmethod
    def corpus_metrics(records: Sequence[dict], with_bertscore: bool = True) -> dict[str, float | None]:
        metrics = {k: mean(r["metrics"][k] for r in records) for k in ("P", "R", "F1", "length")}
        metrics["answer_recall@5"] = 100.0 * mean(r.get("evidence_recall") or 0.0 for r in records)
        return metrics


class DocumentQATask(_LoadedTask):
    """Questions about a folder of documents (the sample handbook, `task=docs`): an answerable one is handled when
    the reply holds its answer and cites its file (and page), an unanswerable one when augmenter refuses
    (`score`, the headline: the share handled). See `augmenter.documents.handbook.judge_answer`."""

    score_metric = "score"
    metric_keys = ("score", "answerable", "correct", "cited", "refused")

    def score(self, turn: Turn, memory: WorkingMemory) -> TurnScore:
        from augmenter.documents.handbook import judge_answer

        verdict = judge_answer(turn.labels[0], memory)
        metrics = {
            "score": 100.0 * verdict["handled"],
            **{k: float(verdict[k]) for k in ("answerable", "correct", "cited", "refused")},
        }
        return TurnScore(metrics, None)

    @staticmethod
    def corpus_metrics(records: Sequence[dict], with_bertscore: bool = True) -> dict[str, float | None]:
        answerable = [r["metrics"] for r in records if r["metrics"]["answerable"]]
        other = [r["metrics"] for r in records if not r["metrics"]["answerable"]]

        def share(rows, f):
            return 100.0 * mean(f(m) for m in rows) if rows else None

        return {
            "score": mean(r["metrics"]["score"] for r in records),
            "correct_with_citation": share(answerable, lambda m: m["correct"] and m["cited"]),
            "correct": share(answerable, lambda m: m["correct"]),
            "refused_answerable": share(answerable, lambda m: m["refused"]),
            "refused_unanswerable": share(other, lambda m: m["refused"]),
        }


def handbook_turns(limit: int | None = None, seed: int | None = 0) -> list[Turn]:
    """The sample handbook's questions as turns (their answers as references, the question itself as the label)."""
    from augmenter.documents.handbook import QUESTIONS
    from augmenter.tasks.base import seeded_sample

    turns = [
        Turn(id=f"handbook-{i}", q=q["q"], references=list(q["answer"]), labels=[q], knowledge_seeking=True)
        for i, q in enumerate(QUESTIONS)
    ]
    return seeded_sample(turns, limit, seed)


KINDS: dict[str, type] = {
    "dstc11": GroundedDialogueTask,
    "dstc7": GroundedDialogueTask,
    "ottqa": ShortAnswerTask,
    "handbook": DocumentQATask,
}


def task_kind(dataset: str) -> type:
    """The task class of `eval.dataset` (its `score_metric` and `corpus_metrics`, without loading anything)."""
    if dataset not in KINDS:
        raise ConfigError(f"eval.dataset must be one of {', '.join(KINDS)}, got {dataset!r}")
    return KINDS[dataset]


def build_task(dataset: str, data_root: str | Path, split: str = "dev", knowledge=None) -> Task:
    """The task of `eval.dataset`. DSTC11 turns are its knowledge-seeking ones, their gold labels resolved in
    `knowledge` (the DSTC11 knowledge base); DSTC7 uses its test file's turns whatever `split` says."""
    kind, root = task_kind(dataset), Path(data_root)
    if dataset == "dstc11":
        if knowledge is None:
            raise ConfigError("eval.dataset=dstc11 needs the DSTC11 knowledge base (task=dstc11)")
        return kind(
            dataset, lambda limit, seed: dstc11.load_turns(root / "dstc11-track5" / split, knowledge, True, limit, seed)
        )
    if dataset == "handbook":
        return kind(dataset, handbook_turns)
    if dataset == "dstc7":
        return kind(dataset, lambda limit, seed: dstc7.load_turns(root / "dstc7-track2", limit, seed))
    return kind(dataset, lambda limit, seed: ottqa.load_questions(root / "ott-qa", limit, seed))
