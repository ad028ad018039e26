"""Working Memory: the typed dialogue state every action reads and updates."""

from augmenter.memory.state import (
    Action,
    ActionRecord,
    ClaimCheck,
    EntityMention,
    EvidenceRef,
    Location,
    Outcome,
    Snippet,
    Utterance,
    Verdict,
    WorkingMemory,
)

__all__ = [
    "Action",
    "ActionRecord",
    "ClaimCheck",
    "EntityMention",
    "EvidenceRef",
    "Location",
    "Outcome",
    "Snippet",
    "Utterance",
    "Verdict",
    "WorkingMemory",
]
