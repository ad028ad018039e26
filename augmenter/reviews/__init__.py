"""Reviews as knowledge: the kinds this room owns, declared to the generic state on import (`kinds`: how FAQs and
review sentences show in a prompt), the opinions of a place's reviews on what was asked (`opinions`, judged by
`judge`), their verdict (`verdict`), and the replies in their own words (`replies`, handed to the executor by
`composer`)."""

from augmenter.reviews import kinds  # noqa: F401  (declares the FAQ and review kinds: see augmenter.memory.KINDS)
from augmenter.reviews.composer import ReviewReplies
from augmenter.reviews.verdict import VerdictWriter, reviewers, side_of

__all__ = ["ReviewReplies", "VerdictWriter", "reviewers", "side_of"]
