"""Each claim's evidence (CEG): the turn's evidence e plus a per-claim retrieval from the knowledge base, cut into
sentences (a FAQ stays whole: its question gives the answer its meaning; a short snippet too, unless it is a
passage of a document, whose title and headings go in front of each sentence), and the units at least `similarity`
similar to the claim, most similar first."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from augmenter.memory import Location, Snippet, WorkingMemory
from augmenter.verification.encoder import similarities
from augmenter.verification.splitter import split_sentences


@dataclass(frozen=True)
class EvidenceUnit:
    id: str  # the snippet's id
    text: str  # one sentence of it (a whole FAQ), with the entity's name in front
    location: Location | None = field(default=None, compare=False, hash=False)  # a document passage's place
    passage: str | None = field(default=None, compare=False, hash=False)  # ... and its whole text


def units(snippets: Iterable[Snippet]) -> list[EvidenceUnit]:
    out: list[EvidenceUnit] = []
    for s in snippets:
        prefix = f"[{s.entity_name}] " if s.entity_name else ""
        where = {"location": s.location, "passage": s.text} if s.location is not None else {}
        if s.doc_type == "faq" or (len(s.text) < 200 and s.location is None):  # a document's passage: sentences
            out.append(EvidenceUnit(s.id, prefix + s.text, **where))
        else:
            out.extend(EvidenceUnit(s.id, prefix + sentence, **where) for sentence in split_sentences(s.text))
    return out


class EvidenceFinder:
    """`k`: snippets retrieved per claim (0: only e); retrieval runs when the turn retrieves its knowledge (not
    when the knowledge was handed in with the turn, e.g. gold knowledge) and a consolidator is given."""

    def __init__(self, consolidator=None, k: int = 3, similarity: float = 0.25, max_units: int = 6):
        if k < 0 or max_units < 1:
            raise ValueError(f"evidence: k must be >= 0 and max_units >= 1, got {k} and {max_units}")
        if not -1.0 <= similarity <= 1.0:
            raise ValueError(f"evidence: similarity is a cosine in [-1, 1], got {similarity}")
        self.consolidator, self.k, self.similarity, self.max_units = consolidator, k, similarity, max_units

    def pool(self, claim: str, mem: WorkingMemory) -> list[EvidenceUnit]:
        pool = units(mem.e)
        # a claim's own search: without the opinion gatherer where the consolidator can leave it out
        retrieve = getattr(self.consolidator, "search", None) or getattr(self.consolidator, "retrieve", None)
        if self.k and retrieve is not None and mem.given is None:
            _, extra = retrieve(claim, (), mem.entities)
            seen = {u.text for u in pool}
            pool += [u for u in units(extra[: self.k]) if u.text not in seen]
        return pool

    def find(
        self, claim: str, mem: WorkingMemory, pool: list[EvidenceUnit] | None = None
    ) -> list[tuple[EvidenceUnit, float]]:
        pool = self.pool(claim, mem) if pool is None else pool
        if not pool:
            return []
        sims = similarities(claim, [u.text for u in pool])
        ranked = sorted(zip(pool, (float(x) for x in sims)), key=lambda pair: -pair[1])
        return [(u, s) for u, s in ranked if s >= self.similarity][: self.max_units]
