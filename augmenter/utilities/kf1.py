"""Knowledge F1 (Shuster et al. 2021), with ParlAI's answer normalisation and unigram F1."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from augmenter.text import normalize_answer

__all__ = ["f1_score", "knowledge_f1", "normalize_answer", "prec_recall_f1", "token_recall"]


def prec_recall_f1(pred_items: list[str], gold_items: list[str]) -> tuple[float, float, float]:
    common = Counter(gold_items) & Counter(pred_items)
    same = sum(common.values())
    if same == 0:
        return 0.0, 0.0, 0.0
    precision, recall = same / len(pred_items), same / len(gold_items)
    return precision, recall, 2 * precision * recall / (precision + recall)


def f1_score(prediction: str, golds: Iterable[str]) -> float:
    """Unigram F1 of `prediction` against the best-matching gold text (ParlAI's F1Metric)."""
    pred = normalize_answer(prediction).split()
    return max((prec_recall_f1(pred, normalize_answer(g).split())[2] for g in golds), default=0.0)


def knowledge_f1(response: str, knowledge: Iterable[str]) -> float:
    """KF1: unigram F1 of the response against the knowledge snippets taken together as one text."""
    return f1_score(response, [" ".join(knowledge)])


def token_recall(response: str, reference: str) -> float:
    """Share of the reference's normalised tokens that the response contains (the paper's recall utility)."""
    return prec_recall_f1(normalize_answer(response).split(), normalize_answer(reference).split())[1]
