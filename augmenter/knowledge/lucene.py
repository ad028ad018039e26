"""BM25 over an on-disk Lucene index with Pyserini, for corpora that do not fit the in-process index.

Same interface and same scoring as `BM25sRetriever`: the texts are tokenised by augmenter's own `tokenize`
(stopwords, Snowball stems) and indexed pre-tokenised with a whitespace analyzer, so both backends score the
same terms with Lucene's BM25. Lucene stores document lengths in one lossy byte, so near-tied scores can swap
places (tests/test_lucene.py measures the agreement). The index is built once under `index_dir` (default:
`<cache>/lucene/<hash of the texts>`) and reused. Needs Java 17 and `pyserini==0.25.0` (0.35+ needs Java 21).
`search` runs a batch through Lucene's `batch_search` on `threads` threads; for `rows` it filters the query to
those documents' ids inside Lucene, so the hits are the best among those rows, not the rows among the best.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from augmenter.errors import ConfigError
from augmenter.knowledge.retrievers import Hits, check_search, settle, tokenize
from augmenter.paths import cache_dir
from augmenter.settings import NonNegative, Positive, Share
from augmenter.storage import content_hash

EMPTY = "__empty__"  # stands for a text without terms; no query term can match it (tokens are [a-z0-9]+)


def _import_searcher():
    saved = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = saved or "not-used"  # pyserini's search package builds an OpenAI client on import
    try:  # optional (augmenter[lucene]), needs Java
        from pyserini.pyclass import autoclass
        from pyserini.search.lucene import LuceneSearcher
    except ImportError as exc:
        raise ConfigError(
            f"retriever=lucene needs Pyserini and Java 17: pip install 'pyserini==0.25.0' ({exc})"
        ) from None
    finally:
        if saved is None:
            del os.environ["OPENAI_API_KEY"]
        else:
            os.environ["OPENAI_API_KEY"] = saved
    return LuceneSearcher, autoclass("org.apache.lucene.analysis.core.WhitespaceAnalyzer")


@lru_cache(maxsize=1)
def _java():
    from pyserini.pyclass import autoclass

    names = (
        "java.util.ArrayList",
        "org.apache.lucene.util.BytesRef",
        "org.apache.lucene.search.BooleanClause$Occur",
        "org.apache.lucene.search.BooleanQuery$Builder",
        "org.apache.lucene.search.TermInSetQuery",
        "io.anserini.search.query.BagOfWordsQueryGenerator",
    )
    return [autoclass(name) for name in names]


def _only(rows: np.ndarray):
    """A Lucene filter matching the documents of `rows` (by their id field) alone."""
    array_list, bytes_ref, _, _, term_in_set, _ = _java()
    ids = array_list()
    for row in rows.tolist():
        ids.add(bytes_ref(str(row).encode()))
    return term_in_set("id", ids)


def _filtered(terms: str, analyzer, only):
    """Lucene's query for `terms`, as `search(str)` builds it, restricted to the documents `only` matches."""
    _, _, occur, builder, _, bag_of_words = _java()
    query = builder()
    query.add(bag_of_words().buildQuery("contents", analyzer, terms), occur.MUST)
    query.add(only, occur.FILTER)
    return query.build()


class LuceneRetriever:
    name = "lucene"

    def __init__(
        self,
        index_dir: str | Path | None = None,
        k1: NonNegative = 1.5,
        b: Share = 0.75,
        threads: Positive = 1,
        hits: Positive = 100,
    ):
        self.index_dir = Path(index_dir) if index_dir else None
        self.k1, self.b, self.threads, self.hits = k1, b, threads, hits
        self._searcher = self._analyzer = None
        self._n = 0
        self.built = False  # whether the last index() built the index (False: an existing one was opened)

    def _build(self, texts: Sequence[str], target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            docs = Path(tmp) / "docs"
            docs.mkdir()
            with (docs / "docs.jsonl").open("w", encoding="utf-8") as sink:
                for i, text in enumerate(texts):
                    terms = " ".join(tokenize(text)) or EMPTY  # Lucene would drop an empty document
                    sink.write(json.dumps({"id": str(i), "contents": terms}) + "\n")
            built = Path(tmp) / "index"
            cmd = [
                sys.executable,
                "-m",
                "pyserini.index.lucene",
                "--collection",
                "JsonCollection",
                "--input",
                str(docs),
                "--index",
                str(built),
                "--generator",
                "DefaultLuceneDocumentGenerator",
                "--threads",
                str(self.threads),
                "--pretokenized",
            ]
            done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "OPENAI_API_KEY": "x"})
            if done.returncode != 0:
                tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
                raise ConfigError(f"building the Lucene index failed: {' | '.join(tail)}")
            if target.exists():
                shutil.rmtree(target)
            os.replace(built, target)

    def index(self, texts: Sequence[str]) -> None:
        searcher_class, whitespace = _import_searcher()
        self._n = len(texts)
        target = self.index_dir or (
            cache_dir() / "lucene" / f"{content_hash(['augmenter-tokenize-v1', *texts], 20)}-{len(texts)}"
        )
        self.built = not (target / "segments_1").exists() and not any(target.glob("segments_*"))
        if self.built:
            self._build(texts, target)
        self._searcher = searcher_class(str(target))
        if self._searcher.num_docs != len(texts):
            raise ConfigError(
                f"{target}: a Lucene index of {self._searcher.num_docs} documents, not {len(texts)}: "
                "remove it or point retriever.index_dir elsewhere"
            )
        self._searcher.set_bm25(self.k1, self.b)
        self._analyzer = whitespace()
        self._searcher.set_analyzer(self._analyzer)

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(self._n, dtype=np.float32)
        terms = " ".join(tokenize(query))
        if not terms or self._searcher is None:
            return out
        for hit in self._searcher.search(terms, k=min(self.hits, self._n)):
            out[int(hit.docid)] = hit.score
        return out

    def _ask(self, terms: str, n: int, only=None) -> Hits:
        query = terms if only is None else _filtered(terms, self._analyzer, only)
        return [(int(h.docid), h.score) for h in self._searcher.search(query, k=n)]

    def search(self, queries: Sequence[str], k: int, rows: Sequence[int] | None = None) -> list[Hits]:
        queries, k, rows = check_search(queries, k, rows, self._n)
        out: list[Hits] = [[] for _ in queries]
        terms = {str(i): " ".join(tokenize(q)) for i, q in enumerate(queries)}
        terms = {i: t for i, t in terms.items() if t}
        if self._searcher is None or k == 0 or not terms or (rows is not None and len(rows) == 0):
            return out
        limit = self._n if rows is None else len(rows)
        asked = min(k + 1, limit)  # one more than k: whether the k-th ties with the next (see `settle`)
        only = None if rows is None else _only(rows)
        if rows is None:
            batch = self._searcher.batch_search(list(terms.values()), list(terms), k=asked, threads=self.threads)
            found = {i: [(int(h.docid), h.score) for h in hits] for i, hits in batch.items()}
        else:
            found = {i: self._ask(t, asked, only) for i, t in terms.items()}
        for i, t in terms.items():
            out[int(i)] = settle(found[i], k, asked, limit, lambda n, t=t: self._ask(t, n, only))
        return out
