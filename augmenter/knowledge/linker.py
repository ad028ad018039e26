"""Entity linker: finds the knowledge base's entities mentioned in q and in the dialogue history."""

from __future__ import annotations

import re
from typing import Sequence

from augmenter.knowledge.base import Entity
from augmenter.memory import EntityMention, Utterance

_GENERIC = {"hotel", "hotels", "restaurant", "restaurants", "guest house", "guesthouse", "the", "lodge", "house"}


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower().replace("&", " and ")))


def surface_forms(entity: Entity) -> set[str]:
    """The names an entity may be called by: its name, its aliases, and light variants of them."""
    forms = set()
    for raw in [entity.name, *entity.aliases]:
        name = _norm(raw)
        if not name:
            continue
        forms.add(name)
        for a, b in (("guest house", "guesthouse"), ("bed and breakfast", "b and b"), ("centre", "center")):
            if a in name:
                forms.add(name.replace(a, b))
        if name.startswith("the "):
            forms.add(name[4:])
    return {f for f in forms if f not in _GENERIC and len(f) >= 3}


def strip_names(text: str, surfaces: Sequence[str]) -> str:
    """`text` normalised, with the given entity surface forms removed."""
    out = _norm(text)
    for surface in sorted(set(surfaces), key=len, reverse=True):
        out = re.sub(r"\b" + re.escape(surface) + r"\b", " ", out)
    return " ".join(out.split())


class EntityLinker:
    """Longest-match lookup of entity names (and aliases) as whole words.

    Entities named in q win; if q names none, the most recent history turn that names some is used,
    so that "Is their beer good?" links to the restaurant discussed just before.
    """

    def __init__(self, entities: Sequence[Entity]):
        self.entities = list(entities)
        table: dict[str, list[Entity]] = {}
        for ent in self.entities:
            for form in surface_forms(ent):
                table.setdefault(form, []).append(ent)
        self._table = table
        forms = sorted(table, key=len, reverse=True)
        self._pattern = re.compile(r"\b(" + "|".join(map(re.escape, forms)) + r")\b") if forms else None

    def find(self, text: str) -> list[tuple[Entity, str]]:
        """Entities named in `text`, in order of appearance, each once."""
        if self._pattern is None:
            return []
        seen, found = set(), []
        for m in self._pattern.finditer(_norm(text)):
            for ent in self._table[m.group(1)]:
                key = (ent.domain, ent.entity_id)
                if key not in seen:
                    seen.add(key)
                    found.append((ent, m.group(1)))
        return found

    def link(self, q: str, history: Sequence[Utterance] = ()) -> list[EntityMention]:
        hits = self.find(q)
        in_query = bool(hits)
        if not hits:
            for turn in reversed(history):
                hits = self.find(turn.text)
                if hits:
                    break
        return [
            EntityMention(domain=e.domain, entity_id=e.entity_id, name=e.name, surface=s, in_query=in_query)
            for e, s in hits
        ]
