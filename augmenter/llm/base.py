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
    served_by: Optional[str] = None  # the identity of the fallback backend that answered; None: the primary did


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


def identity(backend: str, model: str, base_url: Optional[str] = None) -> str:
    """An endpoint's identity: "openai|http://127.0.0.1:8000/v1|my-model", "local|qwen2.5-coder-0.5b-instruct"."""
    return "|".join((backend, base_url, model) if base_url else (backend, model))


def identity_of(llm) -> str:
    """`llm.identity`, or "backend|model" for an object that has none (a test double)."""
    return getattr(llm, "identity", None) or identity(llm.backend, llm.model)


@runtime_checkable
class LLM(Protocol):
    """A chat model: messages in, one completion out. `identity` names the endpoint (backend, URL if any, model):
    the cache keys on it and the trace shows it when a fallback answered."""

    backend: str
    model: str
    identity: str

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
        self.backend, self.model, self.identity = llm.backend, llm.model, identity_of(llm)
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
