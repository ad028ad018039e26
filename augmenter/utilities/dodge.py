"""The dodge check: a reply that asks for what the dialogue already gave ("Do you have a certain area or price range
in mind?" after the user named the hotel) dodges the question. Rules, no model: each kind of question the reply may
ask (a question is a sentence ending in "?") has a pattern, and so has the dialogue's answer to it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from augmenter.memory import WorkingMemory
from augmenter.utilities.repetition import sentences
from augmenter.utilities.scorers import UtilityResult

FEEDBACK = (
    'The response asks for {what} ("{question}"), but the conversation already gave it ({given}). Do not ask '
    "for it again: answer the question about {given}."
)

_NUMBER = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten)"
_PLACE_NOUN = (
    r"(?:Hotel|Guesthouse|Guest House|House|Inn|Lodge|B&B|Bed and Breakfast|Restaurant|Bistro|Cafe|Café|"
    r"Kitchen|Bar|Pub|Grill|Brasserie|Tandoori|Pizzeria|Museum|Theatre|Gallery|College|Spa|Hostel)"
)
_PLACE_NAME = re.compile(rf"\b((?:[A-Z][\w'&.-]*\s+){{1,4}}){_PLACE_NOUN}\b")
_STARTERS = {
    "is",
    "does",
    "do",
    "did",
    "any",
    "a",
    "an",
    "the",
    "what",
    "which",
    "i",
    "can",
    "could",
    "are",
    "please",
    "hi",
    "hello",
    "yes",
    "no",
    "ok",
    "okay",
    "tell",
    "how",
    "where",
    "when",
    "will",
    "would",
    "my",
    "our",
}


@dataclass(frozen=True)
class Slot:
    """A kind of question (`asks`) and what in the latest message answers it (`given`), or, with `place`, a named
    place in the recent dialogue (in the latest message only, with `in_query`)."""

    what: str
    asks: re.Pattern
    given: re.Pattern | None = None
    place: bool = False
    in_query: bool = False


_I = re.IGNORECASE
# a message that starts a new search: a place named before it is not the one it asks about
_NEW_SEARCH = re.compile(
    r"\b(?:looking for|look for|find|need|want|recommend|suggest|book)\b.*\b(?:hotel|place|"
    r"restaurant|guest ?house|somewhere|attraction|park|museum|college|train|taxi)\b",
    _I,
)
SLOTS = (
    Slot(
        "an area, a price range or a kind of place",
        re.compile(
            r"\b(?:what|which|any|certain|particular|specific|preferred) (?:area|part of town|price range|"
            r"budget|star rating)\b|\b(?:area|price range|budget)\b.*\bin mind\b|"
            r"\b(?:what|which) (?:type|kind|sort) of (?:hotel|place|restaurant|food|cuisine|accommodation)\b|"
            r"\bwhere (?:would|do) you (?:like|want|prefer) to (?:stay|eat)\b|\bhow many stars\b|"
            r"\b(?:area|price range) (?:do|would) you (?:prefer|like|want)\b",
            _I,
        ),
        place=True,
    ),
    Slot(
        "which place",
        re.compile(
            r"\b(?:which|what) (?:hotel|restaurant|place|guest ?house)\b|"
            r"\bname of the (?:hotel|restaurant|place)\b",
            _I,
        ),
        place=True,
        in_query=True,
    ),
    Slot(
        "the day",
        re.compile(r"\b(?:what|which) (?:day|date)s?\b", _I),
        re.compile(
            r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|today|tomorrow|tonight|"
            r"\d{1,2}(?:st|nd|rd|th))\b",
            _I,
        ),
    ),
    Slot(
        "the number of people",
        re.compile(
            r"\bhow many (?:people|guests|persons|of you|adults)\b|"
            r"\bfor how many (?:people|guests|persons)\b|\bparty size\b",
            _I,
        ),
        re.compile(rf"\b{_NUMBER} (?:people|guests|persons|adults|of us)\b|\bparty of {_NUMBER}\b", _I),
    ),
    Slot(
        "the length of the stay",
        re.compile(r"\bhow many (?:nights|days)\b|\bhow long (?:will|would) you\b", _I),
        re.compile(rf"\b{_NUMBER} (?:nights?|days?)\b", _I),
    ),
)


def place_names(text: str) -> list[str]:
    """Named places in `text` ("Ashley Hotel", "Rosa's Bed and Breakfast"): capitalised words before a place noun,
    without a sentence's opening word ("Is", "Does") or an article."""
    names = []
    for match in _PLACE_NAME.finditer(text or ""):
        lead = match.group(1).split()
        while lead and lead[0].lower().strip(".") in _STARTERS:
            lead.pop(0)
        if lead:
            names.append(" ".join([*lead, match.group(0)[len(match.group(1)) :]]))
    return names


@dataclass
class Dodge:
    """A question of the reply that asks for `what`, which the dialogue already gave (`given`)."""

    question: str
    what: str
    given: str


def find_dodges(
    reply: str,
    query: str,
    history: Sequence[str] = (),
    entities: Sequence[str] = (),
    query_entities: Sequence[str] = (),
    window: int = 2,
) -> list[Dodge]:
    """The reply's questions that ask for what the dialogue gave: a day, a number of people or nights the latest
    message (`query`) states, or an area, price range or place when a place is named in it, in the last `window`
    utterances of `history` or among `entities` (those the entity linker found; `query_entities`: in `query`),
    unless the latest message starts a new search ("I also need a place to stay")."""
    in_query = [*query_entities, *place_names(query)]
    recent = list(in_query)
    if not _NEW_SEARCH.search(query):
        recent += [*entities, *(n for text in list(history)[-window:] if window > 0 for n in place_names(text))]
    found = []
    for question in (s for s in sentences(reply) if s.rstrip().endswith("?")):
        for slot in SLOTS:
            if not slot.asks.search(question):
                continue
            if slot.place:
                names = in_query if slot.in_query else recent
                given = names[0] if names else None
            else:
                match = slot.given.search(query)
                given = match.group(0) if match else None
            if given:
                found.append(Dodge(question.strip(), slot.what, given))
                break
    return found


class DodgeUtility:
    """Score 1, or 0 when the candidate asks for something the dialogue already gave (see `find_dodges`), with
    template feedback naming what was asked and where the dialogue gave it."""

    name = "dodge"

    def __call__(self, mem: WorkingMemory, candidate: str) -> UtilityResult:
        dodges = find_dodges(
            candidate,
            mem.q,
            [u.text for u in mem.h_q],
            [e.name for e in mem.entities],
            [e.name for e in mem.entities if e.in_query],
        )
        if not dodges:
            return UtilityResult(1.0)
        first = dodges[0]
        question = first.question if len(first.question) <= 160 else first.question[:159] + "…"
        return UtilityResult(0.0, FEEDBACK.format(what=first.what, question=question, given=first.given))
