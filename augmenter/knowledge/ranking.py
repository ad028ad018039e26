"""Rankings merged: several searches' hits as one list of evidence."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

Hit = TypeVar("Hit")


def interleave(rankings: Sequence[Sequence[Hit]], k: int, key: Callable[[Hit], Hashable]) -> list[Hit]:
    """The first hit of each ranking, then the second of each, ..., each hit (by `key`) once, `k` in all."""
    out, seen = [], set()
    for rank in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if rank < len(ranking) and key(ranking[rank]) not in seen:
                seen.add(key(ranking[rank]))
                out.append(ranking[rank])
    return out[:k]
