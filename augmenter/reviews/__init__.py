"""Reviews as knowledge: the opinions of a place's reviews on what was asked (`opinions`, judged by `judge`), their
verdict (`verdict`), and the replies in their own words (`replies`, handed to the executor by `composer`)."""

from augmenter.reviews.composer import ReviewReplies
from augmenter.reviews.verdict import VerdictWriter, reviewers, side_of

__all__ = ["ReviewReplies", "VerdictWriter", "reviewers", "side_of"]
