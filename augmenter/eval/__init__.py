"""Evaluation: run a system configuration over a data set (`runner`), score it (`metrics`), and render the
paper's tables and figures (`report`)."""

from augmenter.eval.records import EvalRecord
from augmenter.eval.runner import Evaluator, KnowledgeAccess
from augmenter.eval.tasks import Task, build_task

__all__ = ["EvalRecord", "Evaluator", "KnowledgeAccess", "Task", "build_task"]
