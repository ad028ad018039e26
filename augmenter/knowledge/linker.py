"""Entity linking: the entities mentioned in q and h_q (`EntityLinker`), and the context of raw evidence
(`EvidenceLinker`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from augmenter.knowledge.base import Entity, KnowledgeBase
from augmenter.memory import EntityMention, Snippet, Utterance

_STREET = re.compile(r" (?:street|st|road|rd|lane|avenue|ave)\b")  # the word after a name in an address
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


def one_edit(a: str, b: str) -> bool:
    """`a` and `b` differ by exactly one edit: a letter changed, added or dropped, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
        return len(diff) == 1 or (
            len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
        )
    short, long = sorted((a, b), key=len)
    i = next((i for i, (x, y) in enumerate(zip(short, long)) if x != y), len(short))
    return short[i:] == long[i + 1 :]


def strip_names(text: str, surfaces: Sequence[str]) -> str:
    """`text` normalised, with the given entity surface forms removed."""
    out = _norm(text)
    for surface in sorted(set(surfaces), key=len, reverse=True):
        out = re.sub(r"\b" + re.escape(surface) + r"\b", " ", out)
    return " ".join(out.split())


def of_entities_in_question(snippets: Sequence[Snippet], entities: Sequence[EntityMention]) -> list[Snippet]:
    """The snippets about the entities the question names (else the ones linked from the conversation; none linked:
    all of them). Another entity's snippet answers nothing about the one asked about, and retrieval falls back to the
    whole knowledge when none of that entity's own snippets matches."""
    asked = {(m.domain, str(m.entity_id)) for m in entities if m.in_query} or {
        (m.domain, str(m.entity_id)) for m in entities
    }
    return [s for s in snippets if (s.domain, str(s.entity_id)) in asked] if asked else list(snippets)


class EntityLinker:
    """Longest-match lookup of entity names (and aliases) as whole words, then of their misspellings.

    Entities named in q win; if q names none, the most recent history turn that names some is used,
    so that "Is their beer good?" links to the restaurant discussed just before. A name that is one entity's own
    names that entity only, where another lists it as an alias (DSTC11's mapping gives Nandos City Centre the
    alias "nandos", the other restaurant's name). A name written with one slip ("the Goonville Hotel", "Archyway
    House") or with a space added or dropped ("Allen Bell" for Allenbell) names the entity too, where no exact name
    covers those words: one word of five letters or more off by one edit, the others as they are (a name of one
    word: seven letters or more; letters only, so "AB1235" never names model AB1234), and no other entity named as
    closely. `misspelt_names=False`: exact names only.
    """

    # Shorter words off by one letter, or joined, are too often other words: "cotton" for Cotto, "lovely" for
    # Lovell, "hot pot" for The Hotpot.
    FUZZY_MIN_LETTERS = 5  # the misspelt word of a name of several words
    FUZZY_MIN_ALONE = 7  # a name of one word, or one written with a space added or dropped

    def __init__(self, entities: Sequence[Entity], misspelt_names: bool = True):
        self.entities, self.misspelt_names = list(entities), misspelt_names
        table: dict[str, list[Entity]] = {}
        self._forms: dict[tuple, list[str]] = {}  # each entity's surface forms, longest first
        own: dict[tuple, set[str]] = {}  # the forms of each entity's own name, spaces left out
        for ent in self.entities:
            key = (ent.domain, ent.entity_id)
            self._forms[key] = sorted(surface_forms(ent), key=len, reverse=True)
            own[key] = {f.replace(" ", "") for f in surface_forms(Entity(ent.entity_id, ent.name, ent.domain))}
            for form in self._forms[key]:
                table.setdefault(form, []).append(ent)
        for form, named in table.items():  # a place's own name names it alone, though another lists it as an alias
            table[form] = [e for e in named if form.replace(" ", "") in own[(e.domain, e.entity_id)]] or named
        self._slips: dict[tuple, list[tuple[str, Entity]]] = {}  # (word count, form with a gap) -> (word, entity)
        self._joined: dict[str, list[Entity]] = {}  # forms without their spaces
        for form, named in table.items():  # misspelt, a form names whom it names exactly
            words = form.split()
            for j, word in enumerate(words):
                if word.isalpha() and len(word) >= (self.FUZZY_MIN_LETTERS if len(words) > 1 else self.FUZZY_MIN_ALONE):
                    self._slips.setdefault((len(words), *words[:j], "", *words[j + 1 :]), []).extend(
                        (word, ent) for ent in named
                    )
            if len(form.replace(" ", "")) >= self.FUZZY_MIN_ALONE:
                self._joined.setdefault(form.replace(" ", ""), []).extend(named)
        self._table = table
        self._longest = max((len(f.split()) for f in table), default=0)
        forms = sorted(table, key=len, reverse=True)
        self._pattern = re.compile(r"\b(" + "|".join(map(re.escape, forms)) + r")\b") if forms else None

    def find(self, text: str) -> list[tuple[Entity, str]]:
        """Entities named in `text`, in order of appearance, each once, with the longest of its names the text holds
        ("the riverside lodge" names Riverside Lodge as "riverside lodge", not as its alias "the riverside", which
        the scan meets first and would leave "lodge" behind when the name is stripped); then those whose name the
        words left over hold misspelt (`misspelt`), with the words as written."""
        if self._pattern is None:
            return []
        seen, found, norm = set(), [], _norm(text)
        for m in self._pattern.finditer(norm):
            if _STREET.match(norm, m.end()):
                continue  # an address ("32 Bridge Street") names a street, not the place called Bridge
            for ent in self._table[m.group(1)]:
                key = (ent.domain, ent.entity_id)
                if key not in seen:
                    seen.add(key)
                    longer = (
                        f
                        for f in self._forms[key]
                        if len(f) > len(m.group(1)) and re.search(r"\b" + re.escape(f) + r"\b", norm)
                    )
                    found.append((ent, next(longer, m.group(1))))
        for ent, surface in self.misspelt(self._pattern.sub(" | ", norm)) if self.misspelt_names else ():
            if (ent.domain, ent.entity_id) not in seen:
                seen.add((ent.domain, ent.entity_id))
                found.append((ent, surface))
        return found

    def misspelt(self, norm: str) -> list[tuple[Entity, str]]:
        """Entities whose name the normalised `norm` holds with one slip, longest spans first, each span naming one
        entity only (a span two entities' names are equally near names neither)."""
        words, taken, out = norm.split(), set(), []
        spans = [(i, n) for n in range(self._longest + 1, 0, -1) for i in range(len(words) - n + 1)]
        for i, n in spans:
            window = words[i : i + n]
            if "|" in window or taken & set(range(i, i + n)):
                continue
            hits = {(e.domain, e.entity_id): e for e in self._joined.get("".join(window), []) if n > 1}
            for j, word in enumerate(window):
                for name_word, ent in self._slips.get((n, *window[:j], "", *window[j + 1 :]), []):
                    if one_edit(word, name_word):
                        hits[(ent.domain, ent.entity_id)] = ent
            if len(hits) == 1:
                taken |= set(range(i, i + n))
                out.append((i, next(iter(hits.values())), " ".join(window)))
        return [(ent, surface) for _, ent, surface in sorted(out, key=lambda hit: hit[0])]

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
                around = {
                    n.sent_id: n.text
                    for n in (self.kb.snippets[r] for r in rows)
                    if n.doc_type == "review"
                    and n.doc_id == s.doc_id
                    and n.sent_id is not None
                    and 0 < abs(n.sent_id - s.sent_id) <= self.review_window
                }
                if around:
                    context.append("Same review: " + " ".join(around[j] for j in sorted(around)))
            faq_rows = [
                r
                for r in rows
                if self.kb.snippets[r].doc_type == "faq"
                and float(scores[r]) > 0
                and float(scores[r]) >= 0.5 * (s.score or 0.0)
                and self.kb.snippets[r].id not in shown
            ]
            for r in sorted(faq_rows, key=lambda r: -float(scores[r]))[: self.faqs]:
                shown.add(self.kb.snippets[r].id)
                context.append(f"FAQ: {self.kb.snippets[r].text}")
            out.append(s.model_copy(update={"context": context}))
        return out
