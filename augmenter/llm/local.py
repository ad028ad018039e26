"""The embedded default: a GGUF chat model run in-process by llama.cpp (llama-cpp-python), fully offline."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Optional

from augmenter.errors import LLMError
from augmenter.llm.assets import model_path
from augmenter.llm.base import Completion, Messages, SamplingParams


class LocalLLM:
    """llama.cpp chat completion.

    `model` names an embedded model (see `augmenter.llm.assets.MODELS`) or is a path to any GGUF file.
    The model loads on first use. Prompts longer than the context window are cut from the middle of the
    conversation (the system message and the final user message are kept) before llama.cpp sees them.
    """

    backend = "local"

    def __init__(self, model: str = "qwen2.5-coder-0.5b-instruct", n_ctx: int = 4096,
                 n_threads: Optional[int] = None, verbose: bool = False):
        self.model = model
        self.n_ctx = n_ctx
        self.n_threads = n_threads or max(1, min(4, os.cpu_count() or 1))
        self.verbose = verbose
        self._llm = None
        self._lock = threading.Lock()

    def _load(self):
        if self._llm is None:
            try:
                from llama_cpp import Llama
            except ImportError:
                raise LLMError("the local LLM needs llama-cpp-python: pip install 'augmenter[local]' "
                               "(build it with CMAKE_ARGS=-DGGML_NATIVE=OFF; see README)") from None
            path = Path(self.model) if self.model.endswith(".gguf") else model_path(self.model)
            if not path.exists():
                raise LLMError(f"GGUF model file not found: {path}")
            self._llm = Llama(model_path=str(path), n_ctx=self.n_ctx, n_threads=self.n_threads,
                              seed=0, verbose=self.verbose)
        return self._llm

    def _fit(self, llm, messages: Messages, max_tokens: int) -> Messages:
        """Drop middle messages, then shorten the last one, until the prompt fits the context window."""
        budget = self.n_ctx - max_tokens - 32
        count = lambda text: len(llm.tokenize(text.encode("utf-8", "ignore"), add_bos=False, special=False))
        msgs = [dict(m) for m in messages]
        sizes = [count(m["content"]) + 8 for m in msgs]
        while sum(sizes) > budget and len(msgs) > 2:
            del msgs[1], sizes[1]
        over = sum(sizes) - budget
        if over > 0:
            content = msgs[-1]["content"]
            keep = max(0, len(content) - over * 6)  # ~at most 6 characters per token
            msgs[-1]["content"] = content[:keep // 2] + "\n...\n" + content[len(content) - keep // 2:]
        return msgs

    def complete(self, messages: Messages, params: SamplingParams) -> Completion:
        with self._lock:
            llm = self._load()
            msgs = self._fit(llm, messages, params.max_tokens)
            try:
                out = llm.create_chat_completion(
                    messages=msgs, max_tokens=params.max_tokens, temperature=params.temperature,
                    top_p=params.top_p, seed=params.seed, stop=params.stop or None,
                )
            except (ValueError, RuntimeError) as exc:
                raise LLMError(f"llama.cpp failed: {exc}") from None
        usage = out.get("usage") or {}
        return Completion(
            text=(out["choices"][0]["message"].get("content") or "").strip(),
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
        )
