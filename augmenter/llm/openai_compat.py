"""Any OpenAI-compatible chat server (OpenAI, vLLM, llama.cpp's server, Ollama...)."""

from __future__ import annotations

import os
from typing import Optional

from augmenter.errors import LLMError
from augmenter.llm.base import Completion, Messages, SamplingParams


class OpenAICompatLLM:
    """Chat completions over HTTP with the `openai` client (which retries transient errors itself).

    The key is read from the environment variable named by `api_key_env` and never logged or stored;
    servers that need no key (a local llama.cpp server) accept the placeholder used when it is unset.
    """

    backend = "openai"

    def __init__(self, model: str, base_url: Optional[str] = None, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = 120.0, max_retries: int = 3):
        if not model:
            raise LLMError("llm.model must name the server's model")
        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_retries = max_retries
        self._client = None

    def __repr__(self) -> str:  # never show the key
        return f"OpenAICompatLLM(model={self.model!r}, base_url={self.base_url!r}, api_key_env={self.api_key_env!r})"

    def _get_client(self):
        if self._client is None:
            from openai import OpenAI

            key = os.environ.get(self.api_key_env) or "sk-no-key-needed"
            self._client = OpenAI(base_url=self.base_url, api_key=key, timeout=self.timeout,
                                  max_retries=self.max_retries)
        return self._client

    def complete(self, messages: Messages, params: SamplingParams) -> Completion:
        import openai

        kwargs = dict(model=self.model, messages=messages, max_tokens=params.max_tokens,
                      temperature=params.temperature, top_p=params.top_p)
        if params.seed is not None:
            kwargs["seed"] = params.seed
        if params.stop:
            kwargs["stop"] = params.stop
        if params.logprobs:
            kwargs["logprobs"], kwargs["top_logprobs"] = True, min(20, params.logprobs)
        try:
            out = self._get_client().chat.completions.create(**kwargs)
        except openai.APIError as exc:
            where = self.base_url or "the OpenAI API"
            raise LLMError(f"{where}: {type(exc).__name__}: {getattr(exc, 'message', exc)}") from None
        usage = out.usage
        top = None
        content = getattr(getattr(out.choices[0], "logprobs", None), "content", None)
        if params.logprobs and content:
            top = [{alt.token: alt.logprob for alt in (tok.top_logprobs or [])} or {tok.token: tok.logprob}
                   for tok in content]
        return Completion(
            text=(out.choices[0].message.content or "").strip(),
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            top_logprobs=top,
        )
