"""Sparse retrievers over a list of texts. Both backends score with Lucene's BM25 and agree on the ranking.

A retriever scores every document for a query (`scores`), or finds the best k for a batch of queries itself
(`search`), optionally among a subset of rows (the entity linker's focus). `top_k` keeps the best k of a score
vector. Ties break by row index (the lower first), so results are deterministic.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import bm25s
import numpy as np
import Stemmer  # PyStemmer: Snowball stemmers
from bm25s.stopwords import STOPWORDS_EN
from rank_bm25 import BM25Okapi

from augmenter.errors import ConfigError, InputError
from augmenter.knowledge.topk import NUMBA, best_rows, column_bounds, csc_row_scores, csc_top_k
from augmenter.settings import NonNegative, Share

_TOKEN = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(STOPWORDS_EN)
Hits = list[tuple[int, float]]  # (row, score), best first
NUMBA_FROM = 50_000


@lru_cache(maxsize=1)
def _stemmer():
    return Stemmer.Stemmer("english")


def tokenize(text: str) -> list[str]:
    """Lower-case alphanumeric words, English stopwords dropped, Snowball-stemmed; same for documents and queries."""
    return _stemmer().stemWords([t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS])


class Retriever(Protocol):
    """Anything that indexes texts once, scores all of them for a query, and finds the best k for queries."""

    name: str

    def index(self, texts: Sequence[str]) -> None: ...

    def scores(self, query: str) -> np.ndarray: ...

    def search(self, queries: Sequence[str], k: int, rows: Sequence[int] | None = None) -> list[Hits]:
        """Per query, its k best (row, score) with a positive score, among `rows` if given."""
        ...


def top_k(scores: np.ndarray, k: int, rows: Sequence[int] | None = None) -> Hits:
    """The k best (row, score) pairs with a positive score, best first, among `rows` if given."""
    candidates = np.arange(len(scores)) if rows is None else np.unique(np.asarray(rows, dtype=np.int64))
    if len(candidates) == 0 or k <= 0:
        return []
    return best_rows(candidates, np.asarray(scores)[candidates], k)


def check_search(
    queries: Sequence[str], k: int, rows: Sequence[int] | None, n: int
) -> tuple[list[str], int, np.ndarray | None]:
    """`search`'s arguments checked: (the queries as a list, k, rows sorted and unique or None)."""
    if not isinstance(queries, (list, tuple)) or not all(isinstance(q, str) for q in queries):
        raise InputError(f"search takes a list of query strings, got {type(queries).__name__}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise InputError(f"search needs k, the number of hits, as an integer >= 0, got {k!r}")
    if rows is None:
        return list(queries), int(k), None
    array = np.asarray(rows)
    if array.size and (array.ndim != 1 or array.dtype.kind not in "iu"):
        raise InputError("search's rows must be a list of row indices (integers)")
    array = np.unique(array.astype(np.int64))
    if array.size and (array[0] < 0 or array[-1] >= n):
        raise InputError(
            f"search's rows must lie in 0..{n - 1} (the indexed texts), got {int(array[0])}..{int(array[-1])}"
        )
    return list(queries), int(k), array


def search_by_scores(retriever: Retriever, queries: Sequence[str], k: int, rows=None) -> list[Hits]:
    """`search` for a backend without a top-k of its own: its full score vector per query, then `top_k`."""
    return [top_k(retriever.scores(q), k, rows) for q in queries]


def settle(hits: Hits, k: int, asked: int, limit: int, refetch: Callable[[int], Hits]) -> Hits:
    """The top k, ties to the lower row, from a backend whose own top-`asked` breaks ties its own way: while the
    k-th score ties the last one returned (and more rows could tie), ask again for twice as many."""
    while True:
        best = sorted(((r, s) for r, s in hits if s > 0), key=lambda h: (-h[1], h[0]))
        if len(best) <= k or len(hits) < asked or asked >= limit or best[k - 1][1] > min(s for _, s in hits):
            return best[:k]
        asked = min(limit, 2 * asked)
        hits = refetch(asked)


class BM25sRetriever:
    """BM25 with `bm25s` (default): scores are precomputed into a sparse matrix at index time. `search` takes
    the top k straight from that matrix, and scores an entity's few rows alone by binary search in the postings.
    Its top-k is compiled by numba (`numba=None`: where installed, from `NUMBA_FROM` texts up: below, numpy takes
    well under a millisecond a query and numba's first compile, several seconds once per machine, would not pay;
    True or False forces it), whatever `backend` the full `scores` use."""

    name = "bm25s"

    def __init__(self, k1: NonNegative = 1.5, b: Share = 0.75, backend: str = "numpy", numba: bool | None = None):
        if numba and not NUMBA:
            raise ConfigError("BM25sRetriever(numba=True) needs numba: pip install numba")
        self.k1, self.b, self._numba = k1, b, numba
        self._bm25 = bm25s.BM25(method="lucene", k1=k1, b=b, backend=backend)
        self._n = 0
        self._bounds: np.ndarray | None = None  # each term's highest score, for search's pruning

    def index(self, texts: Sequence[str]) -> None:
        self.index_tokens([tokenize(t) for t in texts])

    def index_tokens(self, tokens: Sequence[list[str]]) -> None:
        """Index texts already tokenised by `tokenize`."""
        self._n, self._bounds = len(tokens), None
        self._bm25.index(list(tokens), show_progress=False)

    def save(self, directory: str | Path) -> None:
        """The index in bm25s's own format (its `save`), for `load`."""
        self._bm25.save(str(directory), show_progress=False)

    def load(self, directory: str | Path, n: int) -> bool:
        """Load an index `save` wrote, if it holds `n` texts scored with this retriever's k1 and b (else False)."""
        try:
            params = json.loads((Path(directory) / "params.index.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        if (params.get("method"), params.get("k1"), params.get("b"), params.get("num_docs")) != (
            "lucene",
            self.k1,
            self.b,
            n,
        ):
            return False
        backend = self._bm25.backend
        self._bm25 = bm25s.BM25.load(str(directory), show_progress=False)
        self._bm25.backend = backend
        self._n, self._bounds = n, None
        return True

    @property
    def numba(self) -> bool:
        """Whether `search` runs numba's compiled top-k."""
        return NUMBA and self._n >= NUMBA_FROM if self._numba is None else self._numba

    @numba.setter
    def numba(self, value: bool | None) -> None:
        self._numba = value

    def scores(self, query: str) -> np.ndarray:
        tokens = [t for t in tokenize(query) if t in self._bm25.vocab_dict]
        if not tokens:
            return np.zeros(self._n, dtype=np.float32)
        return np.asarray(self._bm25.get_scores(tokens))

    def search(self, queries: Sequence[str], k: int, rows: Sequence[int] | None = None) -> list[Hits]:
        queries, k, picked = check_search(queries, k, rows, self._n)
        if self._n == 0 or k == 0 or (picked is not None and len(picked) == 0):
            return [[] for _ in queries]
        m, vocab = self._bm25.scores, self._bm25.vocab_dict
        terms = [np.array([vocab[t] for t in tokenize(q) if t in vocab], dtype=np.int64) for q in queries]
        if picked is not None and (16 * len(picked) <= self._n or not self.numba):  # a few rows: score them alone
            return [
                best_rows(picked, csc_row_scores(m["data"], m["indices"], m["indptr"], t, picked), k) for t in terms
            ]
        mask = None
        if picked is not None:
            mask = np.zeros(self._n, dtype=np.bool_)
            mask[picked] = True
        if self._bounds is None and self.numba:
            self._bounds = column_bounds(m["data"], m["indptr"])
        return csc_top_k(m["data"], m["indices"], m["indptr"], self._n, terms, k, mask, self._bounds, self.numba)


class _LuceneIdfBM25(BM25Okapi):
    """rank-bm25's Okapi BM25 with Lucene's idf."""

    def _calc_idf(self, nd):
        for word, freq in nd.items():
            self.idf[word] = math.log(1 + (self.corpus_size - freq + 0.5) / (freq + 0.5))


class RankBM25Retriever:
    """BM25 with `rank-bm25`, set to Lucene's idf and scaled like `bm25s`, so both give the same scores."""

    name = "rank_bm25"

    def __init__(self, k1: NonNegative = 1.5, b: Share = 0.75):
        self.k1, self.b = k1, b
        self._bm25: _LuceneIdfBM25 | None = None
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

    def search(self, queries: Sequence[str], k: int, rows: Sequence[int] | None = None) -> list[Hits]:
        """rank-bm25 has no top-k of its own: every row's score, or only `rows`' (its `get_batch_scores`)."""
        queries, k, picked = check_search(queries, k, rows, self._n)
        if picked is None:
            return search_by_scores(self, queries, k)
        out: list[Hits] = []
        for q in queries:
            tokens = tokenize(q)
            if not tokens or self._bm25 is None or len(picked) == 0 or k == 0:
                out.append([])
                continue
            sub = np.asarray(self._bm25.get_batch_scores(tokens, picked.tolist())) / (self.k1 + 1)
            out.append(best_rows(picked, sub, k))
        return out
