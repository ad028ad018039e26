"""The BM25 index of the chunks, kept incremental: every chunk's terms (augmenter's `tokenize`) are stored as ids
(`Terms`), so an update tokenises only the chunks of changed files and rebuilds the score matrix from the ids with
numpy in one pass. The matrix is the one bm25s builds (Lucene's BM25: idf = ln(1 + (N - df + 0.5) / (df + 0.5)),
tf / (tf + k1 (1 - b + b dl / avgdl))), saved with bm25s's own `save`, so `BM25sRetriever.load` reads it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from augmenter.knowledge.retrievers import tokenize


@dataclass
class Terms:
    """Term ids of chunks, concatenated (`ids`), chunk i's being ids[offsets[i]:offsets[i + 1]]; `vocab` names them."""

    vocab: list[str] = field(default_factory=list)
    ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    offsets: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))

    @property
    def chunks(self) -> int:
        return len(self.offsets) - 1

    def save(self, directory: Path) -> None:
        np.save(directory / "term_ids.npy", self.ids)
        np.save(directory / "term_offsets.npy", self.offsets)
        (directory / "terms.json").write_text(json.dumps(self.vocab), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> Terms:
        return cls(
            json.loads((directory / "terms.json").read_text(encoding="utf-8")),
            np.load(directory / "term_ids.npy"),
            np.load(directory / "term_offsets.npy"),
        )


class TermsBuilder:
    """Assembles the terms of a new state: ranges of chunks kept from an old `Terms`, and new texts tokenised."""

    def __init__(self, old: Terms | None = None):
        self.vocab = list(old.vocab) if old else []
        self._index = {t: i for i, t in enumerate(self.vocab)}
        self._old = old
        self._old_lengths = np.diff(old.offsets) if old else None
        self._pieces: list[np.ndarray] = []
        self._lengths: list[np.ndarray] = []

    def keep(self, first: int, last: int) -> None:
        """Chunks first..last-1 of the old terms, unchanged."""
        offsets = self._old.offsets
        self._pieces.append(self._old.ids[offsets[first] : offsets[last]])
        self._lengths.append(self._old_lengths[first:last])

    def add(self, texts: Sequence[str]) -> None:
        ids, lengths = [], []
        for text in texts:
            tokens = tokenize(text)
            for token in tokens:
                if token not in self._index:
                    self._index[token] = len(self.vocab)
                    self.vocab.append(token)
            ids.extend(self._index[t] for t in tokens)
            lengths.append(len(tokens))
        self._pieces.append(np.asarray(ids, dtype=np.int32))
        self._lengths.append(np.asarray(lengths, dtype=np.int64))

    def build(self) -> Terms:
        ids = np.concatenate(self._pieces) if self._pieces else np.zeros(0, dtype=np.int32)
        lengths = np.concatenate(self._lengths) if self._lengths else np.zeros(0, dtype=np.int64)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        vocab = self.vocab
        used = np.flatnonzero(np.bincount(ids, minlength=len(vocab)))
        if len(used) < len(vocab) // 2:  # terms of deleted chunks pile up: renumber the ones still used
            remap = np.full(len(vocab), -1, dtype=np.int32)
            remap[used] = np.arange(len(used), dtype=np.int32)
            ids, vocab = remap[ids], [vocab[i] for i in used.tolist()]
        return Terms(vocab, ids.astype(np.int32, copy=False), offsets)


def score_matrix(terms: Terms, k1: float, b: float) -> dict:
    """bm25s's score matrix (term-major CSC: data, indices = chunk rows, indptr per term) of these terms."""
    n, vocab = terms.chunks, len(terms.vocab)
    lengths = np.diff(terms.offsets)
    docs = np.repeat(np.arange(n, dtype=np.int64), lengths)
    keys, tf = np.unique(terms.ids.astype(np.int64) * max(n, 1) + docs, return_counts=True)  # by term, then chunk
    term, doc = keys // max(n, 1), keys % max(n, 1)
    df = np.bincount(term, minlength=vocab)
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
    avg = lengths.mean() if n else 0.0
    tf = tf.astype(np.float32)
    tfc = tf / (k1 * (1 - b + b * lengths[doc] / avg) + tf) if n else tf
    indptr = np.zeros(vocab + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    return {
        "data": (idf[term] * tfc).astype(np.float32),
        "indices": doc.astype(np.int32),
        "indptr": indptr,
        "num_docs": n,
    }


def save_bm25(directory: Path, terms: Terms, k1: float, b: float) -> None:
    """The BM25 index of `terms` in bm25s's format (its own `save`), for `BM25sRetriever.load`."""
    import bm25s

    model = bm25s.BM25(method="lucene", k1=k1, b=b)
    model.scores = score_matrix(terms, k1, b)
    model.vocab_dict = {t: i for i, t in enumerate(terms.vocab)}
    model.nonoccurrence_array = None  # Lucene's BM25 has none (bm25s sets it when it indexes)
    model.save(str(directory), show_progress=False)
