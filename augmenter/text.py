"""Text made safe to show or log (terminal control sequences stripped, messages on one masked line), and text
normalised for comparing words (ParlAI's answer normalisation, which KF1 and the few-shot guard share)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

from augmenter.redact import redact

_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI: colours, cursor moves, erases
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC (titles, hyperlinks), DCS, SOS, PM, APC strings
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"  # other escape sequences (and a lone ESC)
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # any other C0 or C1 control character but \t and \n
)


def strip_controls(text: Any) -> str:
    """`text` as a string without terminal control sequences (newlines and tabs are kept)."""
    return _CONTROL.sub("", "" if text is None else str(text))


def one_line(message: Any, limit: int | None = None) -> str:
    """A message fit for one line of a terminal, log or record: secrets masked, control sequences and line
    breaks removed, at most `limit` characters (cut with "…")."""
    line = " ".join(strip_controls(redact(str(message))).split())
    return line if limit is None or len(line) <= limit else line[: limit - 1] + "…"


def clip(text: str, limit: int = 200) -> str:
    """`text` cut to `limit` characters (ending with "…") for a quote in a reply."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The choice closest to `word` (difflib), or None when none is close."""
    close = difflib.get_close_matches(word, [str(c) for c in choices if str(c) != word], n=1, cutoff=0.6)
    return close[0] if close else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """ " (did you mean 'x'?)" for the choice closest to `word`, or "" when none is close."""
    match = closest(word, choices)
    return f" (did you mean {match!r}?)" if match else ""


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = re.compile(r"[!\"#$%&()*+,\-./:;<=>?@\[\]\\^`{|}~_']")


def normalize_answer(text: str) -> str:
    """ParlAI's normalize_answer: lower-case, punctuation to spaces, drop articles, squeeze whitespace."""
    text = _PUNCTUATION.sub(" ", text.lower())
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


_AUXILIARY = re.compile(
    r"^(?:is|are|am|was|were|do|does|did|can|could|will|would|should|shall|may|might|must|has|have|"
    r"had|isn't|aren't|doesn't|don't|can't|won't)\b",
    re.IGNORECASE,
)
_CLAUSE = re.compile(
    r"[.?!;:,]\s+|\s+(?:and|but|so)\s+(?=(?:is|are|do|does|can|will|should|may|must|has|have)\b)", re.IGNORECASE
)


def is_yes_no(question: str) -> bool:
    """Whether the question asks for a yes or a no: its last clause opens with an auxiliary verb ("Can I ...?",
    "I left my card at home, is it fine to ...?")."""
    clauses = [c.strip() for c in _CLAUSE.split(question.strip()) if c.strip()]
    return bool(clauses) and bool(_AUXILIARY.match(clauses[-1])) or bool(_AUXILIARY.match(question.strip()))


_WHICH = re.compile(
    r"\b(?:which|whichever)\b|\bwhat (?:place|hotel|restaurant|guest ?house)s?\b"
    r"|\bany (?:place|hotel|restaurant|guest ?house|of (?:them|those|these))\b",
    re.IGNORECASE,
)


def asks_which(question: str) -> bool:
    """Whether the question asks which place ("Which one has the best view?", "Does any place have big rooms?"): the
    answer names the places, even one the conversation named already."""
    return bool(_WHICH.search(question))


# words that ask how good something is ("Is it quiet?", "Are the beds comfortable?"), not whether it is there
QUALITY_WORDS = frozenset(
    """good nice great quiet clean comfortable comfy large big spacious small friendly helpful reliable fast quick
    worth value cheap affordable expensive pricey reasonable tasty fresh generous noisy loud peaceful calm safe
    beautiful pleasant excellent decent quality attractive lovely spotless delicious best better convenient wonderful
    amazing fantastic cosy cozy modern tidy hygienic polite attentive efficient strong well enjoyable appealing stable
    sanitary relaxing roomy welcoming impressive plentiful extensive varied fair""".split()
)


def asks_quality(question: str) -> bool:
    """Whether the question asks how good something is ("Is it quiet?", "Do they have comfortable beds?"): a
    complaint answers it No, where it does not answer one that asks whether the thing is there ("Do they serve
    wine?")."""
    return bool(QUALITY_WORDS & set(re.findall(r"[a-z]+", question.lower())))


# words that speak of what something costs: a review sentence on the price of the beer does not answer whether the
# beer list is long, and praise of fast wifi does not answer whether it costs a fee
PRICE_WORDS = frozenset(
    """price prices priced pricey pricy overpriced overprice overprices expensive inexpensive cheap cheaper cheapest
    cost costs costly fee fees charge charges charged free pay paid paying payment value money budget afford
    affordable bill dollars pounds valued buck bucks spend spent""".split()
)
_FREE_OF = re.compile(r"\b[a-z]+-free\b")
_MONEY = re.compile(r"[$\u00a3\u20ac]\s?\d")


def speaks_of_price(text: str) -> bool:
    """Whether the text speaks of what something costs (`PRICE_WORDS`, or a sum: "$4 a pint"); "gluten-free" and
    "smoke-free" do not."""
    words = set(re.findall(r"[a-z]+", _FREE_OF.sub(" ", text.lower())))
    return bool(PRICE_WORDS & words) or bool(_MONEY.search(text))


def asks_price_alone(question: str) -> bool:
    """Whether the question asks what something costs and nothing of how good it is ("Is there a fee for wifi?",
    not "Do they serve good but fairly priced korma?")."""
    words = set(re.findall(r"[a-z]+", question.lower()))
    return speaks_of_price(question) and not (QUALITY_WORDS - PRICE_WORDS - _HOW_GOOD) & words


# words for how good something is that say nothing of what: "a good value" asks the price
_HOW_GOOD = frozenset(
    "good nice great best better decent well excellent quality wonderful amazing fantastic reasonable worth".split()
)


_FAQ = re.compile(r"^\s*Q:\s*(?P<q>.*?)\s*A:\s*(?P<a>.*)$", re.DOTALL)


def faq_parts(text: str) -> tuple[str, str] | None:
    """A FAQ snippet's question and answer ("Q: Is there parking? A: Yes."), each stripped; None for other text."""
    m = _FAQ.match(text)
    return (m.group("q").strip(), m.group("a").strip()) if m else None
