"""The repetition utility: a reply that repeats itself, or repeats what the assistant already said, is penalised.

Two measures, each the share of the reply that is repeated (0: nothing, 1: everything):
- within the reply: its word n-grams that occur more than once, or its sentences said twice or more;
- against the previous turns: its n-grams (or whole sentences) found in the assistant's earlier turns of h_q.
Score = 1 - the larger one; the reply fails (with template feedback quoting the repeated sentence) when either is
above its threshold. KF1 rewards a sentence said nine times (more overlapping words); this does not.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from augmenter.memory import Utterance, WorkingMemory
from augmenter.utilities.scorers import UtilityResult

WITHIN_FEEDBACK = (
    'The response repeats itself: "{sentence}" is said {count} times. Say each thing once, in a short answer.'
)
EARLIER_FEEDBACK = (
    'The response repeats what was already said earlier in the conversation: "{sentence}". Answer '
    "the latest message without repeating earlier answers."
)

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text or "") if s.strip()]


def ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def _key(sentence: str) -> str:
    return " ".join(words(sentence))


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class Repetition:
    """How much of a reply is repeated: `within` itself and against `earlier` assistant turns (shares in [0, 1]),
    with the sentence that shows it (`within_sentence` said `within_count` times; `earlier_sentence`)."""

    within: float = 0.0
    earlier: float = 0.0
    within_sentence: str | None = None
    within_count: int = 0
    earlier_sentence: str | None = None


def measure(reply: str, previous: Sequence[str] = (), n: int = 4, min_sentence_words: int = 3) -> Repetition:
    """The repetition of `reply` within itself and against `previous` (the assistant's earlier turns)."""
    result = Repetition()
    tokens = words(reply)
    grams = ngrams(tokens, n)
    said = sentences(reply)
    keys = [_key(s) for s in said]
    counts = Counter(k for k in keys if len(k.split()) >= min_sentence_words)
    if grams:
        result.within = (len(grams) - len(set(grams))) / len(grams)
    if said and counts:
        extra_copies = sum(c - 1 for c in counts.values())
        result.within = max(result.within, extra_copies / len(said))
        top, top_count = counts.most_common(1)[0]
        if top_count > 1:
            result.within_sentence, result.within_count = said[keys.index(top)], top_count
    if result.within > 0 and result.within_sentence is None and grams:  # repeated phrases, not whole sentences
        gram, count = Counter(grams).most_common(1)[0]
        result.within_sentence, result.within_count = " ".join(gram), count
    earlier_grams = {g for text in previous for g in ngrams(words(text), n)}
    earlier_keys = {_key(s) for text in previous for s in sentences(text)}
    if grams and earlier_grams:
        result.earlier = sum(g in earlier_grams for g in grams) / len(grams)
    copied = [s for s, k in zip(said, keys) if len(k.split()) >= min_sentence_words and k in earlier_keys]
    if copied:
        result.earlier = max(result.earlier, len(copied) / len(said))
        result.earlier_sentence = copied[0]
    elif result.earlier > 0:
        result.earlier_sentence = max(said, key=lambda s: sum(g in earlier_grams for g in ngrams(words(s), n)))
    return result


def assistant_turns(history: Sequence[Utterance]) -> list[str]:
    return [u.text for u in history if u.speaker == "S"]


class RepetitionUtility:
    """Score = 1 - the repeated share of the candidate (within itself or against the assistant's earlier turns in
    h_q); it fails above `within_threshold` or `earlier_threshold`, with template feedback quoting the repetition.
    `ngram`: the n-gram length; sentences shorter than `min_sentence_words` words are never counted as repeats."""

    name = "repetition"

    def __init__(
        self, ngram: int = 4, within_threshold: float = 0.2, earlier_threshold: float = 0.5, min_sentence_words: int = 3
    ):
        if ngram < 1:
            raise ValueError(f"ngram is an n-gram length >= 1, got {ngram}")
        for key, value in (("within_threshold", within_threshold), ("earlier_threshold", earlier_threshold)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{key} is a share in [0, 1], got {value}")
        self.ngram, self.within_threshold, self.earlier_threshold = ngram, within_threshold, earlier_threshold
        self.min_sentence_words = min_sentence_words

    def measure(self, candidate: str, history: Sequence[Utterance] = ()) -> Repetition:
        return measure(candidate, assistant_turns(history), self.ngram, self.min_sentence_words)

    def repeats(self, candidate: str, history: Sequence[Utterance] = ()) -> bool:
        """Whether `candidate` fails this check: it repeats itself or the assistant's earlier turns in `history`."""
        return self.feedback(self.measure(candidate, history)) is not None

    def copies(self, candidate: str, texts: Sequence[str]) -> bool:
        """Whether `candidate` copies `texts` (any speaker's) as this check counts a copy of earlier turns."""
        return measure(candidate, texts, self.ngram, self.min_sentence_words).earlier > self.earlier_threshold

    def feedback(self, rep: Repetition) -> str | None:
        if rep.within > self.within_threshold:
            return WITHIN_FEEDBACK.format(sentence=_clip(rep.within_sentence or ""), count=max(rep.within_count, 2))
        if rep.earlier > self.earlier_threshold:
            return EARLIER_FEEDBACK.format(sentence=_clip(rep.earlier_sentence or ""))
        return None

    def __call__(self, mem: WorkingMemory, candidate: str) -> UtilityResult:
        rep = self.measure(candidate, mem.h_q)
        return UtilityResult(1.0 - max(rep.within, rep.earlier), self.feedback(rep))
