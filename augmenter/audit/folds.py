"""Folds by dialogue: DSTC11's instances are points in dialogues, and several instances may come from one dialogue
(they share its opening), so a cross-validated figure must keep each dialogue in one fold."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence


def dialogue_key(history: Sequence, q: str = "") -> str:
    """The dialogue an instance belongs to: its first utterance, normalised (the instance's own question when it
    opens the dialogue). Two dialogues that open with the same words fall together, which only makes folds coarser."""
    first = history[0] if history else q
    text = first.text if hasattr(first, "text") else (first.get("text", "") if isinstance(first, dict) else str(first))
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def dialogue_folds(keys: Sequence[str], folds: int = 5, seed: int = 0) -> list[int]:
    """A fold number in [0, folds) for each item, the same for items of one dialogue: dialogues shuffled (seeded)
    and dealt to the fold with the fewest items so far, so folds are about equal in size."""
    if folds < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, got {folds}")
    groups: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    order = sorted(groups)
    random.Random(seed).shuffle(order)
    order.sort(key=lambda k: -len(groups[k]))  # big dialogues first (stable: shuffled within a size)
    sizes, out = [0] * folds, [0] * len(keys)
    for key in order:
        fold = min(range(folds), key=lambda f: (sizes[f], f))
        sizes[fold] += len(groups[key])
        for i in groups[key]:
            out[i] = fold
    return out
