"""Lexical checks for what most often goes wrong in a claim: numbers, prices, times, days, negations and names
that the evidence lacks or contradicts. Pure Python, microseconds per claim."""

from __future__ import annotations

import re
from functools import lru_cache

_WORD_NUMBERS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_WORD_NUMBERS.update({"thirty": "30", "forty": "40", "fifty": "50", "hundred": "100", "half": "0.5"})
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_WORDS = {**{d: d for d in DAYS}, **{d + "s": d for d in DAYS}, **{d[:3]: d for d in DAYS if d != "sunday"},
              "sun": "sunday", "weekend": "weekend", "weekends": "weekend", "weekday": "weekday", "weekdays": "weekday"}
_NEGATIONS = {"no", "not", "never", "none", "nothing", "nobody", "neither", "nor", "without", "cannot", "unable",
              "closed", "unavailable", "prohibited", "forbidden", "banned", "lacks", "lack", "isnt", "arent", "doesnt",
              "dont", "didnt", "wont", "cant", "wasnt", "werent", "hasnt", "havent", "shouldnt", "couldnt", "nt"}
STOPWORDS = frozenset("""a an the and or but if of at by for with about against between into through during before
after above below to from up down in out on off over under again further then once here there when where why how all
any both each few more most other some such only own same so than too very s t can will just should now is are was
were be been being have has had having do does did doing i me my we our you your he him his she her it its they them
their what which who whom this that these those am would could also yes as there's it's i'm you're 's""".split())

_TOKEN = re.compile(r"[a-z0-9]+(?:[.:][0-9]+)?")
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:[.,:]\d+)?)(?:\s*(am|pm|a\.m\.|p\.m\.|%|percent))?", re.IGNORECASE)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z'’]+(?:\s+[A-Z][a-z'’]+)*)")


def tokens(text: str) -> list[str]:
    """Lower-case word tokens, apostrophes folded ("doesn't" -> "doesnt")."""
    return _TOKEN.findall(text.lower().replace("'", "").replace("’", ""))


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


def content_words(text: str) -> list[str]:
    """Stemmed tokens that carry content (stopwords and negations left out)."""
    words = [w for w in tokens(text) if w not in STOPWORDS and w not in _NEGATIONS]
    return _stemmer().stemWords(words)


def numbers(text: str) -> set[str]:
    """Numbers, times and amounts as normalised strings: "2 pm" -> "14:00", "£12.00" -> "12", "three" -> "3"."""
    found = set()
    for m in _NUMBER.finditer(text):
        value, unit = m.group(1).replace(",", ""), (m.group(2) or "").lower().replace(".", "")
        if unit in ("am", "pm"):
            hour, _, minute = value.partition(":")
            hour = int(float(hour)) % 12 + (12 if unit == "pm" else 0)
            found.add(f"{hour}:{minute or '00'}")
            continue
        if ":" in value:
            hour, _, minute = value.partition(":")
            found.add(f"{int(hour)}:{minute}")
            continue
        number = float(value)
        found.add(str(int(number)) if number == int(number) else str(number))
    for w in tokens(text):
        if w in _WORD_NUMBERS:
            found.add(_WORD_NUMBERS[w])
    return found


def days(text: str) -> set[str]:
    return {_DAY_WORDS[w] for w in tokens(text) if w in _DAY_WORDS}


def negated(text: str) -> bool:
    """Whether the text says something is not so (an odd number of negation words, "closed" included)."""
    return sum(w in _NEGATIONS for w in tokens(text)) % 2 == 1


def names(text: str) -> set[str]:
    """Capitalised words that are not sentence starts (a rough proper-name finder), lower-cased."""
    return {w.lower() for m in _NAME.finditer(text) for w in m.group(1).split() if w.lower() not in STOPWORDS
            and w.lower() not in _DAY_WORDS}


def share_missing(items: set[str], evidence: set[str]) -> float:
    """Share of `items` the evidence lacks (0 when there are none)."""
    return len(items - evidence) / len(items) if items else 0.0


_FAQ = re.compile(r"\bA:\s*(.*)$", re.DOTALL)
_YES_NO = re.compile(r"^\s*(yes|no)\b[\s,.!;:-]*(.*)$", re.IGNORECASE | re.DOTALL)


def statements(text: str) -> list[tuple[str, bool]]:
    """What a piece of evidence states, each with whether it states it negatively. A FAQ with a yes/no answer states
    its question with that polarity and, when the answer goes on, the rest as it is: "Q: Is there free parking?
    A: No, parking costs 15 pounds." states "there is free parking" negatively and "parking costs 15 pounds"
    affirmatively. A leading "Yes,"/"No," of any other text answers something else and is left out."""
    faq = _FAQ.search(text)
    if not faq:
        yes_no = _YES_NO.match(text)  # "No, it is not open" states "it is not open"
        if yes_no and content_words(yes_no.group(2)):
            text = yes_no.group(2)
        return [(text, negated(text))]
    answer, question = faq.group(1).strip(), text[: faq.start()]
    yes_no = _YES_NO.match(answer)
    if not yes_no:
        return [(answer, negated(answer))]
    out = [(question, (yes_no.group(1).lower() == "no") != negated(question))]
    if content_words(yes_no.group(2)):
        out.append((yes_no.group(2), negated(yes_no.group(2))))
    return out


def polarity_against(claim: str, evidence: str) -> tuple[bool, bool]:
    """(the claim is negative, the evidence's statement closest to the claim is negative)."""
    (claim_text, claim_negative), = statements(claim)[:1]
    words = set(content_words(claim_text))
    options = statements(evidence)
    closest = max(options, key=lambda o: len(words & set(content_words(o[0]))))
    return claim_negative, closest[1]
