"""Claims that summarise reviews, held against how the reviews on the question are split (the claim set's
labelling rules: "a summary of mixed reviews that picks one side only is S if at least one review says it and none
says otherwise, else U"). The split comes from the opinion gatherer's line in the evidence (doc_type "opinions").
`ReviewBalance` is the check the claims utility asks of a supported claim (`augmenter.utilities.ClaimsUtility`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from augmenter.memory import WorkingMemory

if TYPE_CHECKING:
    from augmenter.reviews.opinions import StanceModel

# words that say a claim gives both sides of the reviews (a contrast, or that opinion is split): "one said", "some
# guests" or "most" alone still give one side, which the rules call unsupported when the reviews are mixed
HEDGE = re.compile(
    r"\b(mixed|divided|split|varied|vary|varies|disagree|others?|not all|not every|but|however|"
    r"although|though|while|whereas|yet|on the other hand)\b",
    re.IGNORECASE,
)


def _opinion_entities(mem: WorkingMemory, cited: Iterable[str]) -> list:
    sentences = {s.id: (s.domain, s.entity_id) for s in mem.e if s.doc_type == "review" and s.stance}
    digests = {(s.domain, s.entity_id): s for s in mem.e if s.doc_type == "opinions"}
    found = []
    for ref in cited:
        entity = sentences.get(ref) or next((k for k, d in digests.items() if d.id == ref), None)
        if entity in digests and digests[entity] not in found:
            found.append(digests[entity])
    return found


def one_sided(claim: str, cited: Iterable[str], mem: WorkingMemory, stance: str | None = None) -> str | None:
    """Why a claim resting on reviews misstates how they are split (None if it does not): it gives one side of mixed
    reviews without saying so, or (given the claim's own `stance`) it takes the side no review on it takes. A claim
    whose best evidence (the first of `cited`) is a FAQ rests on the FAQ, not on the reviews: None."""
    cited = list(cited)
    faqs = {s.id for s in mem.e if s.doc_type == "faq"}
    if cited and cited[0] in faqs:
        return None
    for digest in _opinion_entities(mem, cited):
        if digest.stance == "mixed" and not HEDGE.search(claim):
            return f"the reviews on this are mixed ({digest.text.rstrip('.')}); the claim gives one side only"
        if stance in ("positive", "negative") and digest.stance in ("positive", "negative") and stance != digest.stance:
            return f"the reviews on this are {digest.stance} ({digest.text.rstrip('.')})"
    return None


class ReviewBalance:
    """Why a supported claim misstates how the reviews it rests on are split (None if it does not): `one_sided`, with
    the claim's own stance read by the stored stance model when the evidence holds an opinion count and the model
    is at least `sure` of it (it is right on 80% of review clauses: a reversal is read only where it is confident).
    The model is loaded on first use."""

    def __init__(self, sure: float = 0.85):
        self.sure = sure
        self._stance: StanceModel | None = None

    def __call__(self, claim: str, cited: Iterable[str], mem: WorkingMemory) -> str | None:
        return one_sided(claim, cited, mem, self.claim_stance(claim, mem))

    def claim_stance(self, claim: str, mem: WorkingMemory) -> str | None:
        """The claim's own stance (positive / negative / neutral), or None (no opinion count, or not sure)."""
        if not any(s.doc_type == "opinions" for s in mem.e):
            return None
        if self._stance is None:
            from augmenter.reviews.opinions import StanceModel

            self._stance = StanceModel.load()
        stance, p = self._stance.predict([claim])[0]
        return stance if p >= self.sure else None
