"""Policies that pick the agent's next action (installed as `augmenter.policies`).

Rule-based ones (`rules.py`), their environment wrappers and the episode loop (`env_policies.py`), the trainable
T5 policy (`t5.py`) and its training (`training.py`). Importing this package needs neither gymnasium nor torch:
the T5 policy and its network load (with torch) only when asked for."""

from augmenter.policies.env_policies import EnvPolicy, Episode, MemoryPolicy, RandomPolicy, run_episode
from augmenter.policies.rules import (
    PREDICATES,
    AlwaysUsePolicy,
    GroundedPolicy,
    LLMAugmenterPolicy,
    NoKnowledgePolicy,
    RulePolicy,
    SelfAskPolicy,
)

__all__ = [
    "Episode",
    "EnvPolicy",
    "MemoryPolicy",
    "RandomPolicy",
    "run_episode",
    "AlwaysUsePolicy",
    "GroundedPolicy",
    "LLMAugmenterPolicy",
    "NoKnowledgePolicy",
    "PREDICATES",
    "RulePolicy",
    "SelfAskPolicy",
]


def __getattr__(name: str):
    if name in ("T5Policy", "Tokenizer", "ActionNetwork"):
        from augmenter.policies import t5

        return getattr(t5, name)
    raise AttributeError(f"module 'augmenter.policies' has no attribute {name!r}")
