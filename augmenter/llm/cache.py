"""A disk cache of LLM calls: a repeated (backend, model, messages, sampling) costs nothing the second time."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Optional

from augmenter.llm.base import LLM, Completion, Messages, SamplingParams
from augmenter.paths import cache_dir


def cache_key(backend: str, model: str, messages: Messages, params: SamplingParams) -> str:
    payload = json.dumps({"backend": backend, "model": model, "messages": messages, "params": params.key()},
                         sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class CachedLLM:
    """Wraps an LLM with a `diskcache` store (SQLite underneath: safe across processes and crashes).

    A hit returns the stored completion with `cached=True` and the original token counts, so cost
    reports can tell what a run would have cost and what it actually did.
    """

    def __init__(self, llm: LLM, directory: Optional[str | Path] = None):
        import diskcache

        self.llm = llm
        self.backend, self.model = llm.backend, llm.model
        self.directory = Path(directory) if directory else cache_dir() / "llm"
        self._cache = diskcache.Cache(str(self.directory))
        self.hits = self.misses = 0

    def complete(self, messages: Messages, params: SamplingParams) -> Completion:
        key = cache_key(self.backend, self.model, messages, params)
        stored = self._cache.get(key)
        if stored is not None:
            self.hits += 1
            return Completion(**stored, cached=True)
        self.misses += 1
        out = self.llm.complete(messages, params)
        stored = {"text": out.text, "prompt_tokens": out.prompt_tokens, "completion_tokens": out.completion_tokens}
        if out.top_logprobs is not None:
            stored["top_logprobs"] = out.top_logprobs
        self._cache.set(key, stored)
        return out
