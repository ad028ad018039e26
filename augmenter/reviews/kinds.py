"""The kinds of knowledge this room owns, declared to the generic state (`augmenter.memory.register_kind`) when the
room is imported: what an FAQ and a review sentence show before their text in a prompt, and that the opinion
gatherer's line (doc_type "opinions") answers the question when the reviews it counts take a side on it."""

from __future__ import annotations

from augmenter.memory import KnowledgeKind, Snippet, register_kind
from augmenter.reviews.evidence import takes_a_side


def review_label(snippet: Snippet) -> str:
    """`Review: ` before a review sentence; `Review (negative): ` once its stance on the question is read."""
    return f"Review ({snippet.stance}): " if snippet.stance else "Review: "


FAQ = KnowledgeKind()  # an FAQ shows its question and answer as they are
REVIEW = KnowledgeKind(label=review_label)
OPINIONS = KnowledgeKind(answers=takes_a_side)  # the count of reviews on each side shows as it is

register_kind("faq", FAQ)
register_kind("review", REVIEW)
register_kind("opinions", OPINIONS)
