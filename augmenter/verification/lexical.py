"""Lexical checks for what most often goes wrong in a claim: numbers, prices, times, days, negations and names
that the evidence lacks or contradicts. Pure Python, microseconds per claim."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import Stemmer  # PyStemmer: Snowball stemmers

# "one" is left out: "one of the best" states no number.
_UNITS = {w: i for i, w in enumerate("zero _ two three four five six seven eight nine".split()) if w != "_"}
_TEENS = {
    w: i + 10
    for i, w in enumerate("ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split())
}
_TENS = {
    w: 10 * i for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if w != "_"
}
_WORD_NUMBER = re.compile(
    r"\b(?:("
    + "|".join(_TENS)
    + r")(?:[- ]("
    + "|".join(_UNITS)
    + r"|one))?|("
    + "|".join([*_TEENS, *_UNITS])
    + r"))\b(?![- ](?:hundred|thousand|million))",
    re.IGNORECASE,
)
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_WORDS = {
    **{d: {d} for d in DAYS},
    **{d + "s": {d} for d in DAYS},
    "weekend": {"saturday", "sunday"},
    "weekends": {"saturday", "sunday"},
    "weekday": set(DAYS[:5]),
    "weekdays": set(DAYS[:5]),
}
_DAY_RANGE = re.compile(
    r"\b(" + "|".join(DAYS) + r")s?\s*(?:to|-|–|until|through|till)\s*(" + "|".join(DAYS) + r")s?\b", re.IGNORECASE
)
_NEGATIONS = {
    "no",
    "not",
    "never",
    "none",
    "nothing",
    "nobody",
    "neither",
    "nor",
    "without",
    "cannot",
    "unable",
    "closed",
    "unavailable",
    "prohibited",
    "forbidden",
    "banned",
    "lacks",
    "lack",
    "isnt",
    "arent",
    "doesnt",
    "dont",
    "didnt",
    "wont",
    "cant",
    "wasnt",
    "werent",
    "hasnt",
    "havent",
    "shouldnt",
    "couldnt",
    "wouldnt",
    "neednt",
    "mustnt",
    "aint",
    "nt",
}
STOPWORDS = frozenset(
    """a an the and or but if of at by for with about against between into through during before
after above below to from up down in out on off over under again further then once here there when where why how all
any both each few more most other some such only own same so than too very s t can will just should now is are was
were be been being have has had having do does did doing i me my we our you your he him his she her it its they them
their what which who whom this that these those am would could also yes as there's it's i'm you're 's im youre its
theres ive weve theyre youve theyve theyd theyll youd youll itll thats whats hes shes""".split()
)

# comparatives and superlatives (stemmed, as content_words gives them): a ranking of places is a claim of its own
COMPARATIVES = frozenset(
    """best better worst wors least less nicer nicest cheaper cheapest larger largest bigger
biggest quieter quietest cleaner cleanest closer closest greater greatest higher highest lower lowest finer finest
superior prefer favourit""".split()
)

# words that attribute, count or name the kind of place rather than state a fact about it, or join two statements
# (stemmed): free in a claim's containment ("guests found it quiet: one said ...", "X is good, while Y is big" add
# nothing the reviews must hold)
FRAMING = frozenset(
    stem
    for stem in Stemmer.Stemmer("english").stemWords(
        """review reviews reviewer reviewers guest
guests customer customers visitor visitors diner diners patron patrons people person someone everyone one two three
four five six several many others other said say says saying wrote write writes written mention mentions mentioned
describe describes described state stated report reported find finds found felt feel feels thought think thinks
mixed divided opinion opinions agree agrees disagree disagree experience hotel hotels restaurant restaurants place
places guesthouse establishment knowledge theyve shes hes thats whats while whereas although though however yet
meanwhile""".split()
    )
)

_TOKEN = re.compile(r"[a-z0-9]+(?:[.:][0-9]+)?")
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:[.,:]\d+)?)(?:\s*(am\b|pm\b|a\.m\.|p\.m\.|%|percent\b))?", re.IGNORECASE)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z'’]+(?:\s+[A-Z][a-z'’]+)*)")


def tokens(text: str) -> list[str]:
    """Lower-case word tokens, apostrophes and accents folded ("doesn't" -> "doesnt", "décor" -> "decor")."""
    if not text.isascii():
        text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return _TOKEN.findall(text.lower().replace("'", "").replace("’", ""))


@lru_cache(maxsize=1)
def _stemmer():
    return Stemmer.Stemmer("english")


def stem_words(words: list[str]) -> list[str]:
    return _stemmer().stemWords(words)


def content_words(text: str) -> list[str]:
    """Stemmed tokens that carry content (stopwords and negations left out)."""
    return stem_words([w for w in tokens(text) if w not in STOPWORDS and w not in _NEGATIONS])


def numbers(text: str) -> set[str]:
    """Numbers, times and amounts as normalised strings: "2 pm" -> "14:00", "£12.00" -> "12", "three" -> "3"."""
    found = set()
    for m in _NUMBER.finditer(text):
        value, unit = m.group(1).replace(",", ""), (m.group(2) or "").lower().replace(".", "")
        if unit in ("am", "pm"):
            parts = re.split(r"[.:]", value, maxsplit=1)
            hour, minute = int(parts[0]) % 12 + (12 if unit == "pm" else 0), parts[1] if len(parts) > 1 else "00"
            found.add(f"{hour}:{minute or '00'}")
            continue
        if ":" in value:
            hour, _, minute = value.partition(":")
            found.add(f"{int(hour)}:{minute}")
            continue
        number = float(value)
        found.add(str(int(number)) if number == int(number) else str(number))
    for m in _WORD_NUMBER.finditer(text):
        tens, unit, small = (g.lower() if g else None for g in m.groups())
        value = _TENS[tens] + (1 if unit == "one" else _UNITS.get(unit, 0)) if tens else {**_TEENS, **_UNITS}[small]
        found.add(str(value))
    return found


def days(text: str) -> set[str]:
    """The days of the week a text names: "weekends" is Saturday and Sunday, "Monday to Friday" all five."""
    found: set[str] = set()
    for m in _DAY_RANGE.finditer(text):
        start, end = DAYS.index(m.group(1).lower()), DAYS.index(m.group(2).lower())
        found.update(DAYS[start : end + 1] if start <= end else DAYS[start:] + DAYS[: end + 1])
    for w in tokens(text):
        found |= _DAY_WORDS.get(w, set())
    return found


def negated(text: str) -> bool:
    """Whether the text says something is not so: a negation word ("closed" included), unless "not closed"."""
    words = tokens(text)
    flags = [w in _NEGATIONS for w in words]
    for i in range(1, len(words)):
        if words[i] == "closed" and words[i - 1] in ("not", "never", "nt"):
            flags[i] = flags[i - 1] = False
    return any(flags)


def names(text: str) -> set[str]:
    """Capitalised words that are not sentence starts (a rough proper-name finder), lower-cased."""
    return {
        w.lower()
        for m in _NAME.finditer(text)
        for w in m.group(1).split()
        if w.lower() not in STOPWORDS and w.lower() not in _DAY_WORDS
    }


def share_missing(items: set[str], evidence: set[str]) -> float:
    """Share of `items` the evidence lacks (0 when there are none)."""
    return len(items - evidence) / len(items) if items else 0.0


_LEAD = re.compile(r"^\s*(while|although|though|even though|whilst)\b\s*(.+?),\s*(.+)$", re.IGNORECASE | re.DOTALL)
_TURN = re.compile(
    r"\s*(?:;|,?\s+\bbut\b|,?\s+\bhowever\b,?|,?\s+\balthough\b|,?\s+\bthough\b|,?\s+\byet\b|"
    r",?\s+\bwhereas\b|,\s+\bwhile\b)\s+",
    re.IGNORECASE,
)


def clauses(sentence: str) -> list[str]:
    """The clauses of a sentence, cut where it turns ("..., but ...", "While X, Y", "; "): a review sentence often
    praises one thing and complains about another."""
    lead = _LEAD.match(sentence)
    parts = [lead.group(2), lead.group(3)] if lead else [sentence]
    out = [c.strip(" ,.") for p in parts for c in _TURN.split(p) if len(c.split()) >= 2]
    return out or [sentence.strip()]


_CONDITION = re.compile(r"^(?:(?:but|and|so)\s+)?((?:if|when|because|since)\b.+?),\s*(.+)$", re.IGNORECASE | re.DOTALL)


def parts_of(sentence: str) -> list[str]:
    """A review sentence's clauses (`clauses`), a leading condition apart ("But if you can get past the mediocre
    service, this place offers ...")."""
    out = []
    for part in clauses(sentence):
        lead = _CONDITION.match(part)
        out += [lead.group(1), lead.group(2)] if lead else [part]
    return out


_JOINT = re.compile(r"\s*[;,]\s*(?:and\s+|but\s+)?|\s+and\s+", re.IGNORECASE)


def fragments(sentence: str, min_words: int = 3) -> list[str]:
    """A sentence's parts (`parts_of`) cut further at commas and "and" ("Drinks are expensive here and the view is not
    much"), a piece of fewer than `min_words` words joined to its neighbour: to the one before it ("clean and
    spacious" stays whole), or, when it comes first, to the one after it ("However, once you get past that hump, ...").
    Words unchanged."""
    out: list[str] = []
    for part in parts_of(sentence):
        spans, start = [], 0
        for joint in _JOINT.finditer(part):
            spans.append((start, joint.start()))
            start = joint.end()
        spans.append((start, len(part)))
        kept: list[tuple[int, int]] = []
        for begin, end in spans:
            if not part[begin:end].strip():
                continue
            short = len(part[begin:end].split()) < min_words
            if kept and (short or len(part[kept[-1][0] : kept[-1][1]].split()) < min_words):
                kept[-1] = (kept[-1][0], end)
            else:
                kept.append((begin, end))
        out += [part[begin:end].strip() for begin, end in kept]
    return [p for p in out if p] or [sentence.strip()]


_BACK = frozenset("them they these those".split())
_BE = frozenset("is was were has had".split())
_BACK_NOUNS = frozenset("aspect part thing issue problem feature".split())
# "This place definitely delivered in that regard": anywhere in the sentence, it speaks of what the one before named
_IN_THAT_REGARD = re.compile(r"\b(?:in|on) (?:that|this) (?:regard|respect)\b", re.IGNORECASE)


def leans_back(text: str, within: int = 4) -> bool:
    """Whether a review sentence's opening words point back to the sentence before it ("I found them to be
    overpriced", of the drinks named before; "I didn't enjoy that aspect at all"; "It was amazing."), or words
    anywhere in it ("This place delivered in that regard"): judged or quoted alone, it reads as about the place."""
    words = [w.lower() for w in re.findall(r"[A-Za-z]+(?:['\u2019][A-Za-z]+)?", text)]
    if not words:
        return False
    first, _, contracted = words[0].replace("\u2019", "'").partition("'")
    if len(words) <= 5:  # "It was amazing.", "That's great.": what was, the sentence before says
        if first == "it" or first in ("this", "that") and (contracted or len(words) > 1 and words[1] in _BE):
            return True
    for k, w in enumerate(words[: within + 1]):  # "that aspect", "this part" (not "that part of town")
        after = words[k + 2] if k + 2 < len(words) else ""
        if w in ("that", "this") and k + 1 < len(words) and words[k + 1].rstrip("s") in _BACK_NOUNS:
            if after not in ("of", "with"):
                return True
    return bool(_BACK & set(words[:within])) or bool(_IN_THAT_REGARD.search(text))


def part_holding(sentence: str, piece: str) -> str:
    """The part of `sentence` (`parts_of`) that holds `piece` (a fragment of it), else the sentence: what a reply
    quotes of a sentence judged by one of its fragments. A part that points back (`leans_back`: "it was extremely
    well made" of "While the drink is overpriced, it was extremely well made") is no quote alone: the sentence."""
    part = next((part for part in parts_of(sentence) if piece in part), sentence.strip())
    return sentence.strip() if part != sentence.strip() and leans_back(part) else part


_FAQ = re.compile(r"\bA:\s*(.*)$", re.DOTALL)
_YES_NO = re.compile(r"^\s*(yes|no)\b[\s,.!;:-]*(.*)$", re.IGNORECASE | re.DOTALL)


def statements(text: str) -> list[tuple[str, bool]]:
    """What a piece of evidence states, each with whether it states it negatively. A FAQ with a yes/no answer states
    its question with that polarity and, when the answer goes on, the rest as it is: "Q: Is there free parking?
    A: No, parking costs 15 pounds." states "there is free parking" negatively and "parking costs 15 pounds"
    affirmatively. A leading "Yes,"/"No," of any other text answers something else and is left out. Any other text
    states each of its clauses ("The bathroom was clean but there was no shampoo" states a clean bathroom
    affirmatively)."""
    faq = _FAQ.search(text)
    if not faq:
        yes_no = _YES_NO.match(text)  # "No, it is not open" states "it is not open"
        if yes_no and content_words(yes_no.group(2)):
            text = yes_no.group(2)
        return [(part, negated(part)) for part in clauses(text)]
    answer, question = faq.group(1).strip(), text[: faq.start()]
    yes_no = _YES_NO.match(answer)
    if not yes_no:
        return [(answer, negated(answer))]
    out = [(question, (yes_no.group(1).lower() == "no") != negated(question))]
    if content_words(yes_no.group(2)):
        out.append((yes_no.group(2), negated(yes_no.group(2))))
    return out


def polarity_against(claim: str, evidence: str, ignore: frozenset = frozenset()) -> tuple[bool, bool, float]:
    """(the claim is negative, the evidence's statement closest to the claim is negative, the share of the claim's
    content words that statement holds). A polarity difference means something only where that share is high.
    `ignore`: words that tell nothing here (the place's name: "The Acorn does not have a view" shares "Acorn" with
    "No, the Acorn does not have a lift", which is no statement about a view)."""
    claim_text = claim
    yes_no = _YES_NO.match(claim)
    if yes_no and content_words(yes_no.group(2)):
        claim_text = yes_no.group(2)
    claim_negative = negated(claim_text)
    words = set(content_words(claim_text)) - ignore
    options = statements(evidence)
    closest = max(options, key=lambda o: len(words & set(content_words(o[0]))))
    overlap = len(words & set(content_words(closest[0]))) / len(words) if words else 0.0
    return claim_negative, closest[1], overlap
