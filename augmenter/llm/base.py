"""The one small protocol every LLM backend implements, and the usage meter around it."""

from __future__ import annotations

import time
from dataclasses import astuple, dataclass, field, replace
from typing import Optional, Protocol, runtime_checkable

Messages = list[dict[str, str]]  # OpenAI chat format: [{"role": "system" | "user" | "assistant", "content": ...}]


@dataclass
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False  # served from the disk cache: cost nothing
    top_logprobs: Optional[list[dict[str, float]]] = None  # per answer token, its most likely tokens' log-probs


@dataclass
class SamplingParams:
    max_tokens: int = 160
    temperature: float = 0.0
    top_p: float = 1.0
    seed: Optional[int] = 0
    stop: list[str] = field(default_factory=list)
    logprobs: int = 0  # > 0: return the top-`logprobs` log-probabilities of the first answer token

    def key(self) -> dict:
        key = {"max_tokens": self.max_tokens, "temperature": self.temperature, "top_p": self.top_p,
               "seed": self.seed, "stop": list(self.stop)}
        if self.logprobs:  # only when asked, so that earlier cache entries keep their keys
            key["logprobs"] = self.logprobs
        return key


@runtime_checkable
class LLM(Protocol):
    """A chat model: messages in, one completion out. `backend` and `model` identify it (for the cache)."""

    backend: str
    model: str

    def complete(self, messages: Messages, params: SamplingParams) -> Completion: ...


@dataclass
class Usage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cached_calls: int = 0  # of `calls`, served from the disk cache

    def minus(self, other: "Usage") -> "Usage":
        return Usage(*(mine - theirs for mine, theirs in zip(astuple(self), astuple(other))))

    def copy(self) -> "Usage":
        return replace(self)


class MeteredLLM:
    """Wraps an LLM and counts calls, tokens and seconds; every component shares one, so the trace sees all."""

    def __init__(self, llm: LLM, params: Optional[SamplingParams] = None):
        self.llm = llm
        self.backend, self.model = llm.backend, llm.model
        self.params = params or SamplingParams()
        self.usage = Usage()

    def complete(self, messages: Messages, params: Optional[SamplingParams] = None) -> Completion:
        start = time.perf_counter()
        out = self.llm.complete(messages, params or self.params)
        self.usage.calls += 1
        self.usage.prompt_tokens += out.prompt_tokens
        self.usage.completion_tokens += out.completion_tokens
        self.usage.seconds += time.perf_counter() - start
        self.usage.cached_calls += int(out.cached)
        return out
