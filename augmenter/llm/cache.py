"""A disk cache of LLM calls: a repeated (endpoint, messages, sampling) costs nothing the second time."""

from __future__ import annotations

import json
import sqlite3
import warnings
from datetime import datetime
from pathlib import Path

from augmenter.llm.base import (
    LLM,
    Completion,
    Messages,
    SamplingParams,
    TextSink,
    identity,
    identity_of,
    stream_completion,
)
from augmenter.paths import cache_dir
from augmenter.storage import content_hash

_DB_FILES = ("cache.db", "cache.db-wal", "cache.db-shm")  # diskcache's SQLite index (values may be files beside)


def cache_key(backend: str, model: str, messages: Messages, params: SamplingParams, endpoint: str | None = None) -> str:
    """The key of one call. `endpoint` is the backend's identity; it enters the key only when it says more than
    "backend|model" (a base URL), so keys of URL-less backends (the embedded `local` model) never change."""
    payload = {"backend": backend, "model": model, "messages": messages, "params": params.key()}
    if endpoint and endpoint != identity(backend, model):
        payload["endpoint"] = endpoint
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False)
    return content_hash(text, length=64)


def _answered(out: Completion) -> bool:
    """A reply worth keeping: some text, or the label log-probabilities of a scoring call."""
    return bool(out.text.strip() or out.top_logprobs)


class CachedLLM:
    """Wraps an LLM with a `diskcache` store (SQLite underneath: safe across processes and crashes).

    A hit returns the stored completion with `cached=True` and the original token counts, so cost
    reports can tell what a run would have cost and what it actually did. Errors and empty replies are never
    stored. The cache never breaks a run: an unreadable store is moved aside (`cache.db.corrupt-<time>`) and
    rebuilt, with a warning; a failed read or write later on is a miss, with a warning.
    """

    def __init__(self, llm: LLM, directory: str | Path | None = None):
        self.llm = llm
        self.backend, self.model, self.identity = llm.backend, llm.model, identity_of(llm)
        self.directory = Path(directory) if directory else cache_dir() / "llm"
        self._cache = self._open()
        self.hits = self.misses = 0

    def _open(self):
        import diskcache

        try:
            return diskcache.Cache(str(self.directory))
        except (sqlite3.Error, OSError) as first:
            try:
                stamp = datetime.now().strftime("%Y%m%dT%H%M%S%f")
                for name in _DB_FILES:
                    path = self.directory / name
                    if path.exists():
                        path.rename(path.with_name(f"{name}.corrupt-{stamp}"))
                cache = diskcache.Cache(str(self.directory))
            except (sqlite3.Error, OSError) as exc:
                warnings.warn(
                    f"LLM cache {self.directory} cannot be opened ({exc}): running without a cache",
                    RuntimeWarning,
                    stacklevel=3,
                )
                return None
            warnings.warn(
                f"LLM cache {self.directory} was unreadable ({first}): moved it aside to "
                f"cache.db.corrupt-{stamp} and started a new one",
                RuntimeWarning,
                stacklevel=3,
            )
            return cache

    def _read(self, key: str) -> Completion | None:
        if self._cache is None:
            return None
        try:  # the cache is an optimisation: whatever goes wrong reading it is a miss
            stored = self._cache.get(key)
            hit = Completion(**stored, cached=True) if stored is not None else None
        except Exception as exc:  # sqlite, pickle, file and shape errors alike
            warnings.warn(
                f"LLM cache read failed ({type(exc).__name__}: {exc}): calling the LLM", RuntimeWarning, stacklevel=3
            )
            return None
        return hit if hit is not None and _answered(hit) else None

    def complete(self, messages: Messages, params: SamplingParams) -> Completion:
        return self._call(messages, params, None)

    def stream(self, messages: Messages, params: SamplingParams, on_text: TextSink) -> Completion:
        """A hit hands its whole text to `on_text` at once; a miss streams from the backend."""
        return self._call(messages, params, on_text)

    def _call(self, messages: Messages, params: SamplingParams, on_text: TextSink | None) -> Completion:
        key = cache_key(self.backend, self.model, messages, params, self.identity)
        hit = self._read(key)
        if hit is not None:
            self.hits += 1
            if on_text is not None and hit.text:
                on_text(hit.text)
            return hit
        self.misses += 1
        if on_text is None:
            out = self.llm.complete(messages, params)
        else:
            out = stream_completion(self.llm, messages, params, on_text)
        if self._cache is not None and _answered(out):
            stored = {"text": out.text, "prompt_tokens": out.prompt_tokens, "completion_tokens": out.completion_tokens}
            if out.top_logprobs is not None:
                stored["top_logprobs"] = out.top_logprobs
            try:
                self._cache.set(key, stored)
            except Exception as exc:
                warnings.warn(f"LLM cache write failed ({type(exc).__name__}: {exc})", RuntimeWarning, stacklevel=2)
        return out
