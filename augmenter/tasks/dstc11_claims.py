"""Labelled claims in the DSTC11 domain, for fitting a verifier (no claim labels ship with DSTC11):

- each sentence of a gold response that states something is SUPPORTED by its turn's gold knowledge;
- the same sentence with a number, a day or its polarity changed is not (the errors a small model makes);
- the same sentence against another turn's gold knowledge (another entity) is not;
- the same sentence against other snippets of its own entity (same place, another topic) is not: the error a small
  model makes most, a new fact about the right place.
Built from dev turns outside a held-out sample, so a verifier fitted on them is not fitted on the turns it is
evaluated on."""

from __future__ import annotations

import random
import re
from collections.abc import Collection
from pathlib import Path

from augmenter.tasks.base import seeded_sample
from augmenter.tasks.dstc11 import load_turns
from augmenter.tasks.factcheck import LabelledClaim
from augmenter.verification.lexical import DAYS
from augmenter.verification.splitter import is_claim, split_sentences

_AUX = re.compile(r"\b(is|are|was|were|does|do|did|has|have|can|will|would|should)\b", re.IGNORECASE)
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")


def perturb(sentence: str, rng: random.Random) -> str | None:
    """The sentence made false in one detail: another number, another day, or the opposite polarity."""
    m = _NUMBER.search(sentence)
    if m:
        value = float(m.group())
        new = value + rng.choice([1, 2, 3, 5, 10]) if value < 1000 else value * 2
        text = str(int(new)) if new == int(new) else f"{new:.2f}"
        return sentence[: m.start()] + text + sentence[m.end() :]
    for day in DAYS:
        hit = re.search(rf"\b{day}", sentence, re.IGNORECASE)
        if hit:
            other = rng.choice([d for d in DAYS if d != day]).capitalize()
            return sentence[: hit.start()] + other + sentence[hit.start() + len(day) :]
    if re.search(r"\bnot\b", sentence):
        return re.sub(r"\s*\bnot\b", "", sentence, count=1)
    if re.search(r"n't\b", sentence):
        return re.sub(r"n't\b", "", sentence, count=1)
    if re.match(r"^\s*yes\b", sentence, re.IGNORECASE):
        return re.sub(r"^\s*yes\b", "No", sentence, count=1, flags=re.IGNORECASE)
    m = _AUX.search(sentence)
    if m:
        return sentence[: m.end()] + " not" + sentence[m.end() :]
    return None


def dstc11_claims(
    root: str | Path,
    knowledge_base,
    split: str = "dev",
    exclude: Collection[int] = (),
    limit: int | None = None,
    seed: int | None = 0,
) -> list[LabelledClaim]:
    """Labelled claims from the gold responses of knowledge-seeking turns whose index is not in `exclude`."""
    rng = random.Random(seed)  # one stream for the sample and the perturbations (so one seed fixes both)
    excluded = set(exclude)
    turns = [
        t
        for t in load_turns(Path(root) / split, knowledge_base, knowledge_seeking_only=True)
        if int(t.id) not in excluded and t.references
    ]
    turns = seeded_sample(turns, limit, seed, rng)
    evidence = {t.id: [s.render() for s in t.gold] for t in turns}
    items: list[LabelledClaim] = []
    for t in turns:
        gold = evidence[t.id]
        if not gold:
            continue
        for j, sentence in enumerate(s for s in split_sentences(t.references[0]) if is_claim(s)):
            base = f"dstc11:{t.id}:{j}"
            group = f"dstc11:{t.id}"
            items.append(LabelledClaim(base, sentence, gold, True, group, t.q, "dstc11"))
            wrong = perturb(sentence, rng)
            if wrong and wrong != sentence:
                items.append(LabelledClaim(base + ":perturbed", wrong, gold, False, group, t.q, "dstc11"))
            other = rng.choice(turns)
            if evidence[other.id] and other.labels[:1] != t.labels[:1]:
                items.append(LabelledClaim(base + ":other", sentence, evidence[other.id], False, group, t.q, "dstc11"))
            siblings = _siblings(knowledge_base, t.labels, rng)
            if siblings:
                items.append(LabelledClaim(base + ":sibling", sentence, siblings, False, group, t.q, "dstc11"))
    return items


def _siblings(knowledge_base, refs: list[dict], rng: random.Random, n: int = 3) -> list[str]:
    """`n` snippets of the gold knowledge's entity that are not gold (and not from a gold review)."""
    if not refs:
        return []
    gold = knowledge_base.gold(refs)
    if not gold:
        return []
    taken = {(s.doc_type, s.doc_id) for s in gold}
    rows = [knowledge_base.snippets[i] for i in knowledge_base.rows_of(gold[0].domain, gold[0].entity_id)]
    pool = [s for s in rows if (s.doc_type, s.doc_id) not in taken]
    return [s.render() for s in rng.sample(pool, min(n, len(pool)))]


class DSTC11Claims:
    """`dstc11_claims` as a `ClaimSet`: its groups are turns, so `claims(limit, seed)` samples `limit` turns."""

    name = "dstc11-synthetic"

    def __init__(self, root: str | Path, knowledge_base, split: str = "dev", exclude: Collection[int] = ()):
        self.root, self.knowledge_base, self.split, self.exclude = root, knowledge_base, split, exclude

    def claims(self, limit: int | None = None, seed: int | None = 0) -> list[LabelledClaim]:
        return dstc11_claims(self.root, self.knowledge_base, self.split, self.exclude, limit, seed)
