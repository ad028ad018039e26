"""Sparse retrievers over a list of texts. Both backends score with Lucene's BM25 and agree on the ranking.

A retriever scores every document for a query; `top_k` then keeps the best k, optionally among a subset
of rows (the entity linker's focus). Ties break by row index, so results are deterministic.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Optional, Protocol, Sequence

import bm25s
import numpy as np
import Stemmer  # PyStemmer: Snowball stemmers
from bm25s.stopwords import STOPWORDS_EN
from rank_bm25 import BM25Okapi

_TOKEN = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(STOPWORDS_EN)


@lru_cache(maxsize=1)
def _stemmer():
    return Stemmer.Stemmer("english")


def tokenize(text: str) -> list[str]:
    """Lower-case alphanumeric words, English stopwords dropped, Snowball-stemmed; same for documents and queries."""
    return _stemmer().stemWords([t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS])


class Retriever(Protocol):
    """Anything that indexes texts once and scores all of them for a query."""

    name: str

    def index(self, texts: Sequence[str]) -> None: ...

    def scores(self, query: str) -> np.ndarray: ...


def top_k(scores: np.ndarray, k: int, rows: Optional[Sequence[int]] = None) -> list[tuple[int, float]]:
    """The k best (row, score) pairs with a positive score, best first, among `rows` if given."""
    candidates = np.arange(len(scores)) if rows is None else np.asarray(rows, dtype=np.int64)
    if len(candidates) == 0 or k <= 0:
        return []
    sub = scores[candidates]
    keep = sub > 0
    candidates, sub = candidates[keep], sub[keep]
    if len(candidates) > k:
        part = np.argpartition(-sub, k - 1)[:k]
        candidates, sub = candidates[part], sub[part]
    order = np.lexsort((candidates, -sub))
    return [(int(candidates[i]), float(sub[i])) for i in order]


class BM25sRetriever:
    """BM25 with `bm25s` (default): scores are precomputed into a sparse matrix at index time."""

    name = "bm25s"

    def __init__(self, k1: float = 1.5, b: float = 0.75, backend: str = "numpy"):
        self.k1, self.b = k1, b
        self._bm25 = bm25s.BM25(method="lucene", k1=k1, b=b, backend=backend)
        self._n = 0

    def index(self, texts: Sequence[str]) -> None:
        self._n = len(texts)
        self._bm25.index([tokenize(t) for t in texts], show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        tokens = [t for t in tokenize(query) if t in self._bm25.vocab_dict]
        if not tokens:
            return np.zeros(self._n, dtype=np.float32)
        return np.asarray(self._bm25.get_scores(tokens))


class _LuceneIdfBM25(BM25Okapi):
    """rank-bm25's Okapi BM25 with Lucene's idf."""

    def _calc_idf(self, nd):
        for word, freq in nd.items():
            self.idf[word] = math.log(1 + (self.corpus_size - freq + 0.5) / (freq + 0.5))


class RankBM25Retriever:
    """BM25 with `rank-bm25`, set to Lucene's idf and scaled like `bm25s`, so both give the same scores."""

    name = "rank_bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75):
        self.k1, self.b = k1, b
        self._bm25 = None
        self._n = 0

    def index(self, texts: Sequence[str]) -> None:
        self._n = len(texts)
        docs = [tokenize(t) or [""] for t in texts]  # rank-bm25 divides by document length
        self._bm25 = _LuceneIdfBM25(docs, k1=self.k1, b=self.b)

    def scores(self, query: str) -> np.ndarray:
        tokens = tokenize(query)
        if not tokens or self._bm25 is None:
            return np.zeros(self._n)
        # rank-bm25 multiplies the term-frequency part by (k1 + 1); Lucene (and bm25s) do not.
        return np.asarray(self._bm25.get_scores(tokens)) / (self.k1 + 1)
