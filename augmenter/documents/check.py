"""The check of a draft answer over documents: strict on what would betray a user, free on ordinary words.

A draft passes when
- it answers (it is not the prompt's refusal marker, nor an "I don't know");
- every specific it states is in the passages it was shown (or the question): each number, each piece of code (an
  identifier with `_` or `.`, a call, an option such as `--name` or `verify=False`, a backticked or quoted span),
  each name written with a capital inside a sentence;
- it does not turn the passages' polarity around: a negative answer ("No", "not", "cannot") needs a negative
  statement in the passage closest to it, and a plain "Yes" a passage without one;
- it says what one sentence of the passages says: of the content words it adds to the question (two or more), at
  least `min_support` are in a single sentence (or line of code) of the passages. An answer made of ordinary words
  the passages never use ("employees must wear a suit and a tie") is invented, and one that splices words from
  several sentences ("at least two weeks before the end of the pay period") was, on the development labels, more
  often wrong than right; one or two words of its own in a right answer are no reason to refuse it.
Ordinary words are otherwise free: "put", "syntax" or "dictionary" in a right answer are no reason to refuse it. What
fails is not revised: the reply is then the passage's own words, or a refusal (see `augmenter.documents.replies`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from augmenter.documents.replies import plain
from augmenter.memory import Snippet, WorkingMemory
from augmenter.utilities.scorers import UtilityResult
from augmenter.verification.lexical import content_words, names, negated, numbers, tokens
from augmenter.verification.splitter import is_abstention, split_sentences

_MARK = re.compile(r"\b(?:not|no)\s+(?:found|in\s+the\s+(?:passages?|documents?|documentation))\b", re.IGNORECASE)
_BACKTICKED = re.compile(r"`([^`\n]+)`")
_QUOTED = re.compile(r"[\"“]([^\"”\n]{2,80})[\"”]")
_TOKEN = re.compile(r"\S+")
_CODE = re.compile(
    r"(?:^-{1,2}[A-Za-z]|[A-Za-z0-9][_=()\[\]/\\<>.][A-Za-z0-9_(\[\"'/-]|^[A-Za-z]+[a-z][A-Z]\w*$|"
    r"^[A-Z]{2,}\w*[a-z])"
)
_PARTS = re.compile(r"[\s(),\[\]{}'\"“”‘’]+")
_YES_NO = re.compile(r"^\s*(yes|no)\b", re.IGNORECASE)


def _norm(text: str) -> str:
    """Lower case, quotes and backticks dropped, no space around `=`, whitespace collapsed."""
    text = re.sub(r"\s*=\s*", "=", re.sub(r"[`'\"“”‘’]", "", text).lower())
    return " ".join(text.split())


def refuses(draft: str) -> bool:
    """The draft says the passages do not answer (the prompt's marker, or an "I don't know" with nothing else)."""
    if _MARK.search(draft):
        return True
    sentences = split_sentences(draft)
    return bool(sentences) and all(is_abstention(s) for s in sentences)


def code_terms(text: str) -> list[str]:
    """The pieces of code a text states: backticked spans, and words that read as code (an identifier with `_` or
    `.`, a call, an assignment, an option, camelCase), each cut at brackets, commas, quotes and spaces into parts
    that must each appear whole (`locate=True`, not `locate` and `True` apart)."""
    spans = _BACKTICKED.findall(text)
    rest = _BACKTICKED.sub(" ", text)
    for word in _TOKEN.findall(rest):
        word = word.strip(".,;:!?)(\"'“”‘’[]")
        if len(word) > 1 and _CODE.search(word):
            spans.append(word)
    parts = []
    for span in spans:
        parts += [p.strip(".:;") for p in _PARTS.split(span)]
    return list(
        dict.fromkeys(
            p for p in parts if len(p) > 1 and any(c.isalnum() for c in p) and p.lower() not in ("the", "and", "or")
        )
    )


@dataclass
class DraftCheck:
    """What the check found in one draft: the specifics the passages lack, a polarity turned around, a refusal."""

    refused: bool = False
    missing: list[str] = field(default_factory=list)
    polarity: str = ""  # why the draft's yes/no or negation does not match its passage ("" when it does)
    support: int = -1  # the passage (index in the evidence) the draft rests on
    coverage: float = 1.0  # the most of the content words the draft adds to the question that one sentence holds
    min_support: float = 0.0

    @property
    def passed(self) -> bool:
        return not self.refused and not self.missing and not self.polarity and self.coverage >= self.min_support

    def feedback(self) -> str | None:
        if self.passed:
            return None
        if self.refused:
            return "The draft says the passages do not answer the question."
        why = []
        if self.missing:
            why.append(f"the passages do not say: {', '.join(self.missing)}")
        if self.polarity:
            why.append(self.polarity)
        if self.coverage < self.min_support:
            why.append(f"no sentence of theirs says what it adds (at most {self.coverage:.0%} of it)")
        return "The draft is not backed by the passages: " + "; ".join(why) + "."


class DocumentCheck:
    """The check as a utility `(memory, draft)`: score 1 when the draft passes, else 0, with feedback."""

    name = "documents"
    checks_claims = True  # a draft that fails is never sent: the reply is then the passages' own words or a refusal

    def __init__(self, min_support: float = 0.6):
        self.min_support = min_support

    def inspect(self, mem: WorkingMemory, draft: str) -> DraftCheck:
        draft = plain(draft)
        if refuses(draft):
            return DraftCheck(refused=True)
        passages = list(mem.e)
        shown = "\n".join(
            [mem.q, *(s.text for s in passages), *(" ".join(s.location.heading) for s in passages if s.location)]
        )
        found = DraftCheck(missing=self.missing(draft, shown), min_support=self.min_support)
        found.coverage = self.coverage(mem.q, draft, passages)
        found.support = self.support(draft, passages)
        if found.support >= 0:
            found.polarity = self.polarity(mem.q, draft, self.closest_sentence(draft, passages[found.support].text))
        return found

    @staticmethod
    def coverage(question: str, draft: str, passages: list[Snippet]) -> float:
        """The largest share of the content words (stemmed) the draft adds to the question that one sentence (or
        line of code) of the passages holds; 1 when it adds fewer than two."""
        added = set(content_words(draft)) - set(content_words(question))
        if len(added) < 2:
            return 1.0
        sentences = [p for s in passages for line in s.text.split("\n") for p in split_sentences(line)]
        return max((len(added & set(content_words(p))) / len(added) for p in sentences), default=0.0)

    @staticmethod
    def closest_sentence(draft: str, passage: str) -> str:
        """The sentence (or line of code) of the passage sharing most words with the draft."""
        words = set(tokens(draft))
        pieces = [s for line in passage.split("\n") for s in split_sentences(line)] or [passage]
        return max(pieces, key=lambda s: len(words & set(tokens(s))))

    @staticmethod
    def missing(draft: str, shown: str) -> list[str]:
        """The specifics of the draft that `shown` (the question and the passages) does not hold."""
        text, plain = _norm(shown), set(tokens(shown))
        out = [n for n in sorted(numbers(draft) - numbers(shown))]
        out += [t for t in code_terms(draft) if _norm(t) not in text]
        quoted = [q for q in _QUOTED.findall(draft) if _norm(q) not in text]
        out += quoted
        code = {_norm(t) for t in code_terms(draft)}
        out += sorted(w for w in names(draft) if not set(tokens(w)) <= plain and w not in code)
        return list(dict.fromkeys(out))

    @staticmethod
    def support(draft: str, passages: list[Snippet]) -> int:
        """The passage the draft rests on: the one sharing most of its words (-1 without passages)."""
        words = set(tokens(draft))
        if not passages:
            return -1
        return max(range(len(passages)), key=lambda i: (len(words & set(tokens(passages[i].text))), -i))

    @staticmethod
    def polarity(question: str, draft: str, passage: str) -> str:
        """Why the draft's polarity does not match the passage's ("" when it does): a "No" or a negation the
        passage does not have, or a bare "Yes" where the passage says not."""
        lead = _YES_NO.match(draft)
        body = draft[lead.end() :] if lead else draft
        says_no = (lead is not None and lead.group(1).lower() == "no") or negated(body)
        passage_no = negated(passage)
        if says_no and not passage_no and not negated(question):
            return "the draft says no or not, the passage does not"
        if (
            lead is not None
            and lead.group(1).lower() == "yes"
            and passage_no
            and not negated(body)
            and not negated(question)
        ):
            return "the draft says yes, the passage says not"
        return ""

    def __call__(self, mem: WorkingMemory, draft: str) -> UtilityResult:
        found = self.inspect(mem, draft)
        return UtilityResult(1.0 if found.passed else 0.0, found.feedback())
