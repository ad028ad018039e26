"""Blind labelling of answers claim by claim, under the labelling rules (`rules.md` beside the labelled set): sheets
for labellers with each item's answers shuffled and no system named (`sheets`), the labels read back, agreement
between labellers and the settled set (`labels`), and folds that keep each dialogue whole (`folds`)."""

from augmenter.audit.folds import dialogue_folds, dialogue_key
from augmenter.audit.labels import AnswerLabel, ClaimLabel, align_claims, cohen_kappa, read_labels, settle
from augmenter.audit.sheets import Answer, Item, build_items, write_sheets

__all__ = [
    "Answer",
    "AnswerLabel",
    "ClaimLabel",
    "Item",
    "align_claims",
    "build_items",
    "cohen_kappa",
    "dialogue_folds",
    "dialogue_key",
    "read_labels",
    "settle",
    "write_sheets",
]
