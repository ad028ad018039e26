"""The passages that answer: from the chunks retrieval found, the sentences (or code blocks) closest to the question,
each with what it needs to be read alone (the sentence before a code block, the code after a sentence that
introduces it), so that the prompt carries a few short passages instead of whole chunks.

A unit is a sentence of prose or a run of code lines. Its score mixes how close its meaning is to the question (the
packaged MiniLM's cosine) with how much of the question's rarer words it holds (with its headings; each word
weighted by its inverse document frequency over the whole folder), plus a small bonus for the chunk's retrieval
rank: `score = similarity_weight * cosine + (1 - similarity_weight) * words + rank_weight / (rank + 1)`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from augmenter.documents.model import strip_markup
from augmenter.knowledge.retrievers import tokenize
from augmenter.memory import Snippet

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9`])")
_PROSE_END = re.compile(r"[.!?:;,)\"'”]$")
_CODE_START = re.compile(r"^(\$ |>>> |\.\.\. |# |// |import |from \S+ import |def |class |@|\{|\}|<[a-z/!])")


@dataclass
class Unit:
    """A sentence or a run of code lines of a chunk (`chunk`: its index among the chunks given)."""

    text: str
    chunk: int
    code: bool


def is_code(line: str) -> bool:
    """Whether a line of a chunk reads as code or terminal output rather than prose."""
    stripped = line.strip()
    if not stripped:
        return False
    if line.startswith(("    ", "\t")) or _CODE_START.match(stripped):
        return True
    words = stripped.split()
    letters = sum(c.isalpha() or c.isspace() for c in stripped) / len(stripped)
    return (
        letters < 0.75
        or (len(words) < 5 and not _PROSE_END.search(stripped))
        or "=" in stripped
        and not _PROSE_END.search(stripped)
    )


def units(text: str, chunk: int = 0) -> list[Unit]:
    """A chunk's text as units: each prose line split into sentences, consecutive code lines kept together."""
    out: list[Unit] = []
    code: list[str] = []
    for line in text.split("\n"):
        if is_code(line):
            code.append(line)
            continue
        if code:
            out.append(Unit("\n".join(code), chunk, True))
            code = []
        out += [Unit(s, chunk, False) for s in _SENTENCE_END.split(line.strip()) if s.strip()]
    if code:
        out.append(Unit("\n".join(code), chunk, True))
    return out


class Idf:
    """Inverse document frequency of the stemmed words of a collection of texts."""

    def __init__(self, texts: Sequence[str]):
        self.n = max(1, len(texts))
        self.df = Counter(w for text in texts for w in set(tokenize(text)))

    def __call__(self, word: str) -> float:
        return math.log(1 + (self.n - self.df.get(word, 0) + 0.5) / (self.df.get(word, 0) + 0.5))


@dataclass
class Passage:
    """What the prompt shows and a reply quotes: consecutive units of one chunk, the chunk it comes from (its
    snippet, with the location to cite) and its score."""

    text: str
    snippet: Snippet
    score: float
    code: bool = False


class PassageSelector:
    """The `passages` best passages for a question among retrieved chunks (see the module docstring); at most
    `max_words` words in all (the first passage always). A passage is its best unit with `before` units before it
    and `after` after it in its chunk (the answer is often the sentence after the one that names the topic)."""

    def __init__(
        self,
        idf: Idf | None = None,
        passages: int = 3,
        max_words: int = 160,
        similarity_weight: float = 0.7,
        rank_weight: float = 0.05,
        before: int = 1,
        after: int = 2,
    ):
        self.idf = idf or Idf([])
        self.passages, self.max_words = passages, max_words
        self.similarity_weight, self.rank_weight = similarity_weight, rank_weight
        self.before, self.after = before, after

    def score_units(self, question: str, chunks: Sequence[Snippet]) -> tuple[list[Unit], np.ndarray]:
        """Every unit of the chunks and its score for the question."""
        from augmenter.verification.encoder import embed

        found = [u for n, chunk in enumerate(chunks) for u in units(strip_markup(chunk.text), n)]
        found = [u for u in found if tokenize(u.text)]
        if not found:
            return [], np.zeros(0)
        vectors = embed([question, *(u.text for u in found)])
        cosine = vectors[1:] @ vectors[0]
        terms = set(tokenize(question))
        total = sum(self.idf(t) for t in terms) or 1.0
        words = np.array(
            [
                sum(
                    self.idf(t)
                    for t in terms
                    & set(
                        tokenize(
                            " ".join([u.text, *(chunks[u.chunk].location.heading if chunks[u.chunk].location else [])])
                        )
                    )
                )
                / total
                for u in found
            ]
        )
        rank = np.array([1.0 / (u.chunk + 1) for u in found])
        w = self.similarity_weight
        return found, w * cosine + (1 - w) * words + self.rank_weight * rank

    def select(self, question: str, chunks: Sequence[Snippet]) -> list[Passage]:
        found, scores = self.score_units(question, chunks)
        taken: set[int] = set()
        out: list[Passage] = []
        words = 0
        for i in np.argsort(-scores, kind="stable"):
            if len(out) >= self.passages or i in taken:
                continue
            span = self._expand(found, int(i))
            if taken & set(span):
                continue
            text = (
                "\n".join(found[j].text for j in span)
                if any(found[j].code for j in span)
                else " ".join(found[j].text for j in span)
            )
            size = len(text.split())
            if out and words + size > self.max_words:
                continue
            taken.update(span)
            words += size
            out.append(Passage(text, chunks[found[int(i)].chunk], float(scores[i]), any(found[j].code for j in span)))
        return out

    def _expand(self, found: list[Unit], i: int) -> list[int]:
        """The unit with `before` units before and `after` after it in its chunk; and with what it needs to be read
        alone: a code block with the sentence before it, a sentence that introduces something (ends with ':') or
        is followed by code with the code after it."""
        chunk = found[i].chunk

        def same(j):
            return 0 <= j < len(found) and found[j].chunk == chunk

        first, last = i, i
        if found[i].code and same(i - 1) and not found[i - 1].code:
            first = i - 1
        elif not found[i].code and same(i + 1) and (found[i].text.rstrip().endswith(":") or found[i + 1].code):
            last = i + 1
        for _ in range(self.before):
            first -= same(first - 1)
        for _ in range(self.after):
            last += same(last + 1)
        return list(range(first, last + 1))
