"""Entity linking: the entities mentioned in q and h_q (`EntityLinker`), and the context of raw evidence (`EvidenceLinker`)."""

from __future__ import annotations

import re
from typing import Sequence

from augmenter.knowledge.base import Entity, KnowledgeBase
from augmenter.memory import EntityMention, Snippet, Utterance

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
        self._forms: dict[tuple, list[str]] = {}  # each entity's surface forms, longest first
        for ent in self.entities:
            forms = sorted(surface_forms(ent), key=len, reverse=True)
            self._forms[(ent.domain, ent.entity_id)] = forms
            for form in forms:
                table.setdefault(form, []).append(ent)
        self._table = table
        forms = sorted(table, key=len, reverse=True)
        self._pattern = re.compile(r"\b(" + "|".join(map(re.escape, forms)) + r")\b") if forms else None

    def find(self, text: str) -> list[tuple[Entity, str]]:
        """Entities named in `text`, in order of appearance, each once, with the longest of its names the text holds
        ("the riverside lodge" names Riverside Lodge as "riverside lodge", not as its alias "the riverside", which
        the scan meets first and would leave "lodge" behind when the name is stripped)."""
        if self._pattern is None:
            return []
        seen, found, norm = set(), [], _norm(text)
        for m in self._pattern.finditer(norm):
            for ent in self._table[m.group(1)]:
                key = (ent.domain, ent.entity_id)
                if key not in seen:
                    seen.add(key)
                    longer = (f for f in self._forms[key] if len(f) > len(m.group(1))
                              and re.search(r"\b" + re.escape(f) + r"\b", norm))
                    found.append((ent, next(longer, m.group(1))))
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


class EvidenceLinker:
    """Links raw evidence to its context (paper section 2.3.1), for snippet knowledge bases such as DSTC11.

    A review sentence alone ("It was spotless.") often hides what it is about. The linker attaches, to each
    review snippet, the `review_window` sentences either side of it in the same review, and the entity's
    `faqs` FAQs that score best for the query (those scoring at least half the review snippet's own score and not
    already shown in the evidence or attached to an earlier snippet). Each snippet already carries
    its entity's name, which `Snippet.render` shows. The snippet's own `text` is left as it was, so utilities
    that compare evidence with gold knowledge (Knowledge F1) see the same evidence.
    """

    def __init__(self, knowledge: KnowledgeBase, review_window: int = 1, faqs: int = 1):
        if review_window < 0 or faqs < 0:
            raise ValueError(f"review_window and faqs must be >= 0, got {review_window} and {faqs}")
        self.kb, self.review_window, self.faqs = knowledge, review_window, faqs

    def attach(self, snippets: Sequence[Snippet], scores) -> list[Snippet]:
        """`snippets` with `context` filled in; `scores` are the retriever's scores of every snippet for the query."""
        out, shown = [], {s.id for s in snippets}
        for s in snippets:
            if s.doc_type != "review":
                out.append(s)
                continue
            context = []
            rows = self.kb.rows_of(s.domain, s.entity_id)
            if s.sent_id is not None:
                around = {n.sent_id: n.text for n in (self.kb.snippets[r] for r in rows)
                          if n.doc_type == "review" and n.doc_id == s.doc_id and n.sent_id is not None
                          and 0 < abs(n.sent_id - s.sent_id) <= self.review_window}
                if around:
                    context.append("Same review: " + " ".join(around[j] for j in sorted(around)))
            faq_rows = [r for r in rows if self.kb.snippets[r].doc_type == "faq"
                        and float(scores[r]) > 0 and float(scores[r]) >= 0.5 * (s.score or 0.0)
                        and self.kb.snippets[r].id not in shown]
            for r in sorted(faq_rows, key=lambda r: -float(scores[r]))[: self.faqs]:
                shown.add(self.kb.snippets[r].id)
                context.append(f"FAQ: {self.kb.snippets[r].text}")
            out.append(s.model_copy(update={"context": context}))
        return out
