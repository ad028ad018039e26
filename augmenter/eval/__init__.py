"""Evaluation: run a system configuration over a data set (`runner`), score it (`metrics`), and render the
paper's tables and figures (`report`)."""

from augmenter.eval.runner import EvalItem, Evaluator, KnowledgeAccess

__all__ = ["EvalItem", "Evaluator", "KnowledgeAccess"]
