"""Policies that pick the agent's next action (installed as `augmenter.policies`).

Rule-based ones (`rules.py`), their environment wrappers (`env_policies.py`), the trainable T5 policy (`t5.py`) and
its training (`training.py`). The last two import torch, so they load only when asked for."""

from augmenter.policies.env_policies import Episode, EnvPolicy, MemoryPolicy, RandomPolicy, rollout
from augmenter.policies.rules import (
    PREDICATES,
    AlwaysUsePolicy,
    LLMAugmenterPolicy,
    NoKnowledgePolicy,
    RulePolicy,
    SelfAskPolicy,
)

__all__ = ["Episode", "EnvPolicy", "MemoryPolicy", "RandomPolicy", "rollout", "AlwaysUsePolicy", "LLMAugmenterPolicy", "NoKnowledgePolicy", "PREDICATES", "RulePolicy", "SelfAskPolicy"]


def __getattr__(name: str):
    if name in ("T5Policy", "Tokenizer", "ActorCritic"):
        from augmenter.policies import t5

        return getattr(t5, name)
    raise AttributeError(f"module 'augmenter.policies' has no attribute {name!r}")
