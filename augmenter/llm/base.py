"""The one small protocol every LLM backend implements, and the usage meter around it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import astuple, dataclass, field, replace
from typing import Annotated, Protocol, runtime_checkable

from annotated_types import Gt, Interval

from augmenter.settings import Count, NonNegative, Positive

Messages = list[dict[str, str]]  # OpenAI chat format: [{"role": "system" | "user" | "assistant", "content": ...}]
TextSink = Callable[[str], None]  # receives a reply's text piece by piece as it is generated (streaming)


@dataclass
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False  # served from the disk cache: cost nothing
    top_logprobs: list[dict[str, float]] | None = None  # per answer token, its most likely tokens' log-probs
    served_by: str | None = None  # the identity of the fallback backend that answered; None: the primary did


@dataclass
class SamplingParams:
    max_tokens: Positive = 160
    temperature: NonNegative = 0.0
    top_p: Annotated[float, Interval(gt=0, le=1)] = 1.0
    seed: int | None = 0
    stop: list[str] = field(default_factory=list)
    logprobs: Count = 0  # > 0: return the top-`logprobs` log-probabilities of the first answer token
    repeat_penalty: Annotated[float, Gt(0)] = 1.0  # llama.cpp's penalty on tokens already in the context (1.0: off)

    def key(self) -> dict:
        key = {
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": self.seed,
            "stop": list(self.stop),
        }
        if self.logprobs:  # only when asked, so that earlier cache entries keep their keys
            key["logprobs"] = self.logprobs
        if self.repeat_penalty != 1.0:  # likewise
            key["repeat_penalty"] = self.repeat_penalty
        return key


def identity(backend: str, model: str, base_url: str | None = None) -> str:
    """An endpoint's identity: "openai|http://127.0.0.1:8000/v1|my-model", "local|qwen2.5-coder-0.5b-instruct"."""
    return "|".join((backend, base_url, model) if base_url else (backend, model))


def identity_of(llm) -> str:
    """`llm.identity`, or "backend|model" for an object that has none (a test double)."""
    return getattr(llm, "identity", None) or identity(llm.backend, llm.model)


@runtime_checkable
class LLM(Protocol):
    """A chat model: messages in, one completion out. `identity` names the endpoint (backend, URL if any, model):
    the cache keys on it and the trace shows it when a fallback answered. A backend may also have
    `stream(messages, params, on_text) -> Completion` (see `stream_completion`)."""

    backend: str
    model: str
    identity: str

    def complete(self, messages: Messages, params: SamplingParams) -> Completion: ...


def stream_completion(llm, messages: Messages, params: SamplingParams, on_text: TextSink) -> Completion:
    """`llm.stream(messages, params, on_text)` where the backend streams (an optional method: it hands each new
    piece of the reply to `on_text` and returns the whole Completion), else `llm.complete` with its text handed
    to `on_text` at once."""
    stream = getattr(llm, "stream", None)
    if callable(stream):
        return stream(messages, params, on_text)
    out = llm.complete(messages, params)
    if out.text:
        on_text(out.text)
    return out


@dataclass
class Usage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cached_calls: int = 0  # of `calls`, served from the disk cache

    def minus(self, other: Usage) -> Usage:
        return Usage(*(mine - theirs for mine, theirs in zip(astuple(self), astuple(other))))

    def copy(self) -> Usage:
        return replace(self)


class MeteredLLM:
    """Wraps an LLM and counts calls, tokens and seconds; every component shares one, so the trace sees all.
    `usage` is counted per thread: turns answered at once on several threads (`eval.concurrency`) each see only
    their own calls."""

    def __init__(self, llm: LLM, params: SamplingParams | None = None):
        self.llm = llm
        self.backend, self.model, self.identity = llm.backend, llm.model, identity_of(llm)
        self.params = params or SamplingParams()
        self._local = threading.local()

    def sharing_usage(self, llm: LLM) -> MeteredLLM:
        """A meter over another backend (e.g. a second instance of a local model, with a KV cache of its own) that
        counts into this one's usage: the calls of both show in the same trace and cost."""
        other = MeteredLLM(llm, self.params)
        other._local = self._local
        return other

    @property
    def usage(self) -> Usage:
        """This thread's calls, tokens and seconds so far."""
        if not hasattr(self._local, "usage"):
            self._local.usage = Usage()
        return self._local.usage

    def complete(
        self, messages: Messages, params: SamplingParams | None = None, on_text: TextSink | None = None
    ) -> Completion:
        """One call; with `on_text`, the reply's text is streamed to it as it is generated."""
        start = time.perf_counter()
        if on_text is None:
            out = self.llm.complete(messages, params or self.params)
        else:
            out = stream_completion(self.llm, messages, params or self.params, on_text)
        self.usage.calls += 1
        self.usage.prompt_tokens += out.prompt_tokens
        self.usage.completion_tokens += out.completion_tokens
        self.usage.seconds += time.perf_counter() - start
        self.usage.cached_calls += int(out.cached)
        return out
