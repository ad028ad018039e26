"""Utility: score a candidate response and write the feedback that revises the prompt."""

from augmenter.utilities.claims import ClaimsUtility
from augmenter.utilities.combined import CombinedUtility
from augmenter.utilities.dodge import DodgeUtility
from augmenter.utilities.kf1 import f1_score, knowledge_f1, normalize_answer, prec_recall_f1, token_recall
from augmenter.utilities.repetition import RepetitionUtility
from augmenter.utilities.scorers import PAPER_FEEDBACK, KF1Utility, RecallUtility, SelfCritiqueUtility, UtilityResult

__all__ = [
    "ClaimsUtility",
    "CombinedUtility",
    "DodgeUtility",
    "KF1Utility",
    "PAPER_FEEDBACK",
    "RecallUtility",
    "RepetitionUtility",
    "SelfCritiqueUtility",
    "UtilityResult",
    "f1_score",
    "knowledge_f1",
    "normalize_answer",
    "prec_recall_f1",
    "token_recall",
]
