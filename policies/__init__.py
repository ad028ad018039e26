"""Policies that pick the agent's next action (installed as `augmenter.policies`)."""

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
