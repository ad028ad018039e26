"""LLM backends behind one small protocol: local (llama.cpp, the embedded default), openai, fake; the disk cache,
fallbacks with a circuit breaker (resilient) and the usage meter wrap any of them."""

from augmenter.llm.base import LLM, Completion, Messages, MeteredLLM, SamplingParams, Usage
from augmenter.llm.cache import CachedLLM
from augmenter.llm.fake import FakeLLM
from augmenter.llm.local import LocalLLM
from augmenter.llm.openai_compat import OpenAICompatLLM
from augmenter.llm.resilient import ResilientLLM

__all__ = [
    "CachedLLM",
    "Completion",
    "FakeLLM",
    "LLM",
    "LocalLLM",
    "Messages",
    "MeteredLLM",
    "OpenAICompatLLM",
    "ResilientLLM",
    "SamplingParams",
    "Usage",
]
