"""Working Memory: the typed dialogue state every action reads and updates."""

from augmenter.memory.state import (
    Action,
    ActionRecord,
    EntityMention,
    Snippet,
    Utterance,
    WorkingMemory,
)

__all__ = ["Action", "ActionRecord", "EntityMention", "Snippet", "Utterance", "WorkingMemory"]
