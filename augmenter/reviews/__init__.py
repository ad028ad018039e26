"""Reviews as knowledge: the verdict of a place's reviews on what was asked, written before the reviews' own words."""

from augmenter.reviews.verdict import VerdictWriter, reviewers, side_of

__all__ = ["VerdictWriter", "reviewers", "side_of"]
