"""User simulators: where the environment's user turns come from.

`DSTC11Replay` replays the user turns of a DSTC11 split, knowledge-seeking and not (so that "when to consolidate"
is learnable), each with its gold knowledge (empty for turns that need none). An LLM user simulator for
multi-turn dialogues (BotChat seeds) is not built yet (issue #4, point 2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Protocol

import numpy as np

from augmenter.errors import InputError
from augmenter.knowledge.base import KnowledgeBase
from augmenter.memory import Snippet, Utterance
from augmenter.tasks.dstc11 import load_instances


@dataclass
class UserTurn:
    """One user turn to answer: the utterance, the dialogue so far, and what the simulator knows about it."""

    turn_id: str
    q: str
    history: list[Utterance] = field(default_factory=list)
    knowledge_seeking: bool = False
    gold: list[Snippet] = field(default_factory=list)  # the knowledge a good answer uses (empty: none needed)


class UserSimulator(Protocol):
    def __len__(self) -> int: ...

    def sample(self, rng: np.random.Generator) -> UserTurn: ...


class DSTC11Replay:
    """User turns of a DSTC11 split (`<root>/<split>/logs.json`, `labels.json`); `limit` keeps a seeded sample.
    `seeking_share` (0..1, or None for the split's own mix) sets how often a knowledge-seeking turn is drawn."""

    def __init__(self, root: str | Path, split: str, knowledge: KnowledgeBase, limit: Optional[int] = None,
                 seed: int = 0, seeking_share: Optional[float] = None):
        instances = load_instances(Path(root) / split, limit=limit, seed=seed)
        self.turns = [UserTurn(f"dstc11-{split}-{x.index}", x.q, x.history, x.target, knowledge.gold(x.knowledge))
                      for x in instances]
        self.seeking = [i for i, t in enumerate(self.turns) if t.knowledge_seeking]
        self.other = [i for i, t in enumerate(self.turns) if not t.knowledge_seeking]
        if not self.turns:
            raise InputError(f"{root}/{split}: no user turns")
        if seeking_share is not None and not 0.0 <= seeking_share <= 1.0:
            raise InputError(f"seeking_share must be in [0, 1], got {seeking_share}")
        self.seeking_share = seeking_share

    def __len__(self) -> int:
        return len(self.turns)

    def sample(self, rng: np.random.Generator) -> UserTurn:
        if self.seeking_share is None or not self.seeking or not self.other:
            return self.turns[int(rng.integers(len(self.turns)))]
        pool = self.seeking if rng.random() < self.seeking_share else self.other
        return self.turns[pool[int(rng.integers(len(pool)))]]
