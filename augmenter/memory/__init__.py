"""Working Memory: the typed dialogue state every action reads and updates."""

from augmenter.memory.state import (
    KINDS,
    Action,
    ActionRecord,
    ClaimCheck,
    EntityMention,
    EvidenceRef,
    KnowledgeKind,
    Location,
    Outcome,
    Snippet,
    Utterance,
    Verdict,
    WorkingMemory,
    register_kind,
)

__all__ = [
    "KINDS",
    "Action",
    "ActionRecord",
    "ClaimCheck",
    "EntityMention",
    "EvidenceRef",
    "KnowledgeKind",
    "Location",
    "Outcome",
    "Snippet",
    "Utterance",
    "Verdict",
    "WorkingMemory",
    "register_kind",
]
