"""The one turn model every data set loads into, and the one seeded sample every loader takes."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from augmenter.memory import Snippet, Utterance

T = TypeVar("T")


@dataclass
class Turn:
    """One user turn to answer: the utterance, the dialogue before it, and what it is judged against."""

    id: str  # unique within its data set (DSTC11: the dialogue's position in logs.json)
    q: str
    history: list[Utterance] = field(default_factory=list)
    references: list[str] = field(default_factory=list)  # gold response(s), or a question's answers
    gold: list[Snippet] = field(default_factory=list)  # gold knowledge (empty: none needed, or not labelled)
    knowledge_seeking: bool = True
    labels: list[dict] = field(default_factory=list)  # DSTC11: gold knowledge references, resolved into `gold`


def seeded_sample(items: Sequence[T], limit: int | None, seed: int | None, rng: random.Random | None = None) -> list[T]:
    """`limit` of `items` drawn with `random.Random(seed)` (seed None: unseeded), kept in their original order;
    all of them when `limit` is None or not smaller than their number. `rng`: draw from this generator instead of a
    new one, so that one seed fixes both the sample and what the caller draws after it."""
    if limit is None or limit >= len(items):
        return list(items)
    if limit < 0:
        raise ValueError(f"a sample size must be >= 0, got {limit}")
    rng = rng or random.Random(seed)
    return [items[i] for i in sorted(rng.sample(range(len(items)), limit))]
