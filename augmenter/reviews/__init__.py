"""Reviews as knowledge: the kinds this room owns, declared to the generic state on import (`kinds`: how FAQs and
review sentences show in a prompt, and when the opinion gatherer's line answers the question), the opinions of a
place's reviews on what was asked (`opinions`, judged by `judge`), their verdict (`verdict`), the replies in their own
words (`replies`, handed to the executor by `composer`), and the claims utility's check that a claim on reviews gives
their split (`balance`)."""

from augmenter.reviews import kinds  # noqa: F401  (declares the FAQ, review and opinions kinds: augmenter.memory.KINDS)
from augmenter.reviews.balance import ReviewBalance
from augmenter.reviews.composer import ReviewReplies
from augmenter.reviews.verdict import VerdictWriter, reviewers, side_of

__all__ = ["ReviewBalance", "ReviewReplies", "VerdictWriter", "reviewers", "side_of"]
