"""Policies that pick the agent's next action (installed as `augmenter.policies`)."""

from augmenter.policies.rules import (
    PREDICATES,
    AlwaysUsePolicy,
    LLMAugmenterPolicy,
    NoKnowledgePolicy,
    RulePolicy,
    SelfAskPolicy,
)

__all__ = ["AlwaysUsePolicy", "LLMAugmenterPolicy", "NoKnowledgePolicy", "PREDICATES", "RulePolicy", "SelfAskPolicy"]
