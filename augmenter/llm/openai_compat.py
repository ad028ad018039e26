"""Any OpenAI-compatible chat server (OpenAI, vLLM, llama.cpp's server, Ollama...)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from contextlib import contextmanager
from typing import NoReturn
from urllib.parse import urlsplit

from augmenter.errors import ConfigError, LLMError, LLMFatalError
from augmenter.llm.base import Completion, Messages, SamplingParams, TextSink, identity
from augmenter.redact import header_safe, redact, register_secret
from augmenter.settings import Count, NonNegative, Seconds
from augmenter.text import one_line

DEFAULT_BASE_URL = "https://api.openai.com/v1"
NO_KEY = "sk-no-key-needed"  # sent when the key's variable is unset: servers that need no key accept it
MAX_WAIT = 30.0  # the longest pause between attempts (a server's Retry-After included), in seconds


class _Transient(Exception):
    """A failed attempt worth retrying (429, 408, 409, 5xx, connection error, timeout)."""

    def __init__(self, reason: str, retry_after: float | None = None):
        super().__init__(reason)
        self.retry_after = retry_after


class _NoStream(Exception):
    """The server refused a streaming request (400, 404, 415, 422): it is asked without streaming from then on."""


def _retry_after(response) -> float | None:
    try:
        return max(0.0, float(response.headers.get("retry-after")))
    except (AttributeError, TypeError, ValueError):
        return None  # absent, or an HTTP date: exponential backoff instead


def _int(value) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


class OpenAICompatLLM:
    """Chat completions over HTTP with the `openai` client, which is built with `max_retries=0`: the retries are
    done here. 429 (after its Retry-After, at most `MAX_WAIT`), 408, 409, 5xx, connection errors and timeouts are
    retried up to `max_retries` times with exponential backoff (`backoff`, 2×`backoff`, ...); 401/403 raise
    `LLMFatalError` at once; other 4xx and every malformed or empty reply raise `LLMError` at once. Each attempt
    waits at most `timeout` seconds for the server, and no attempt starts after `deadline` seconds from the call.

    The key is read from the environment variable named by `api_key_env`, registered for redaction, and never
    shown: every error message is one line naming the endpoint and what was wrong, passed through `redact`.
    `stream` asks for a streamed reply (with `stream_options.include_usage`) and retries only until its first
    text arrives; a server that refuses streaming is asked without it from then on.
    """

    backend = "openai"

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: Seconds = 120.0,
        deadline: Seconds = 300.0,
        max_retries: Count = 3,
        backoff: NonNegative = 0.5,
    ):
        if not model:
            raise LLMError("llm.model must name the server's model")
        for name, value in (("timeout", timeout), ("deadline", deadline)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"llm.{name} must be a number of seconds > 0, got {value!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"llm.max_retries must be an integer >= 0, got {max_retries!r}")
        if isinstance(backoff, bool) or not isinstance(backoff, (int, float)) or not backoff >= 0:
            raise ValueError(f"llm.backoff must be a number of seconds >= 0, got {backoff!r}")
        url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"llm.base_url must be an http(s) URL like http://127.0.0.1:8000/v1, got {redact(one_line(url, 300))!r}"
            )
        register_secret(parts.password)
        self.model = model
        self.base_url = url
        # shown in messages and the trace: no user:password@, no query string (where some services put keys)
        self.endpoint = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}".rstrip("/")
        self.api_key_env = api_key_env
        key = os.environ.get(api_key_env) or ""
        register_secret(key)
        if not header_safe(key):  # said now, once, not as every turn's UnicodeEncodeError; the key is not shown
            raise ConfigError(
                f"${api_key_env} holds characters an HTTP header cannot carry (not printable ASCII: "
                "an accent, a typographic quote or a line break?); set it to the key alone"
            )
        self.timeout, self.deadline, self.max_retries, self.backoff = timeout, deadline, max_retries, backoff
        self._client = None
        self._no_stream = False

    @property
    def identity(self) -> str:
        return identity(self.backend, self.model, self.endpoint)

    def __repr__(self) -> str:  # never show the key
        return f"OpenAICompatLLM(model={self.model!r}, base_url={self.endpoint!r}, api_key_env={self.api_key_env!r})"

    def _fail(self, reason: str, error: type[LLMError] = LLMError) -> NoReturn:
        raise error(redact(f"{self.model} at {self.endpoint}: {one_line(reason, 300)}")) from None

    def _get_client(self):
        if self._client is None:
            from openai import OpenAI

            key = os.environ.get(self.api_key_env)
            register_secret(key)
            self._client = OpenAI(base_url=self.base_url, api_key=key or NO_KEY, timeout=self.timeout, max_retries=0)
        return self._client

    def _kwargs(self, messages: Messages, params: SamplingParams) -> dict:
        kwargs = dict(
            model=self.model,
            messages=messages,
            max_tokens=params.max_tokens,
            temperature=params.temperature,
            top_p=params.top_p,
        )
        if params.seed is not None:
            kwargs["seed"] = params.seed
        if params.stop:
            kwargs["stop"] = params.stop
        if params.logprobs:
            kwargs["logprobs"], kwargs["top_logprobs"] = True, min(20, params.logprobs)
        if params.repeat_penalty != 1.0:  # not OpenAI's API: llama.cpp's server reads it, others may ignore it
            kwargs["extra_body"] = {"repeat_penalty": params.repeat_penalty}
        return kwargs

    def complete(self, messages: Messages, params: SamplingParams) -> Completion:
        kwargs = self._kwargs(messages, params)
        return self._retrying(lambda timeout: self._attempt(kwargs, params, timeout))

    def stream(self, messages: Messages, params: SamplingParams, on_text: TextSink) -> Completion:
        if not (params.logprobs or self._no_stream):
            kwargs = self._kwargs(messages, params)
            try:
                return self._retrying(lambda timeout: self._stream_attempt(kwargs, on_text, timeout))
            except _NoStream:
                self._no_stream = True
        out = self.complete(messages, params)
        if out.text:
            on_text(out.text)
        return out

    def _retrying(self, attempt_once: Callable[[float], Completion]) -> Completion:
        """`attempt_once(timeout)` until it answers, retrying transient failures (see the class docstring)."""
        end = time.monotonic() + self.deadline
        attempt = 0
        while True:
            attempt += 1
            try:
                return attempt_once(min(self.timeout, max(end - time.monotonic(), 1e-3)))
            except _Transient as exc:
                wait = exc.retry_after if exc.retry_after is not None else self.backoff * 2 ** (attempt - 1)
                wait = min(wait, MAX_WAIT)
                if attempt > self.max_retries:
                    self._fail(f"{exc} (gave up after {attempt} attempt{'s' * (attempt > 1)})")
                if wait >= end - time.monotonic():
                    self._fail(
                        f"{exc} (no answer within the {self.deadline:g} s deadline, {attempt} "
                        f"attempt{'s' * (attempt > 1)})"
                    )
                time.sleep(wait)

    def _attempt(self, kwargs: dict, params: SamplingParams, timeout: float) -> Completion:
        with self._api_errors(timeout):
            raw = self._get_client().chat.completions.with_raw_response.create(**kwargs, timeout=timeout)
        return self._parse(raw.http_response, params)

    def _stream_attempt(self, kwargs: dict, on_text: TextSink, timeout: float) -> Completion:
        """One streamed request; a failure after text was handed on is not retried (the text would repeat)."""
        import openai

        pieces: list[str] = []
        usage, finish = None, None
        try:
            with self._api_errors(timeout):
                try:
                    chunks = self._get_client().chat.completions.create(
                        **kwargs, stream=True, stream_options={"include_usage": True}, timeout=timeout
                    )
                except openai.APIStatusError as exc:
                    if exc.status_code in (400, 404, 415, 422):
                        raise _NoStream(exc.status_code) from None
                    raise
                seen = 0
                try:
                    for chunk in chunks:
                        seen += 1
                        usage = getattr(chunk, "usage", None) or usage
                        for choice in getattr(chunk, "choices", None) or []:
                            finish = getattr(choice, "finish_reason", None) or finish
                            text = getattr(getattr(choice, "delta", None), "content", None)
                            text = (text if pieces else text.lstrip()) if isinstance(text, str) else ""
                            if text:
                                pieces.append(text)
                                on_text(text)
                finally:
                    getattr(chunks, "close", lambda: None)()
                if not seen:  # not a stream of events (a server that ignores `stream`): ask without streaming
                    raise _NoStream("no events")
        except _Transient as exc:
            if pieces:
                self._fail(f"{exc} (the stream broke off after {sum(map(len, pieces))} characters)")
            raise
        text = "".join(pieces).strip()
        if not text:
            self._fail(f"the reply is empty (finish_reason: {finish})")
        return Completion(
            text=text,
            prompt_tokens=_int(getattr(usage, "prompt_tokens", 0)),
            completion_tokens=_int(getattr(usage, "completion_tokens", 0)) or len(pieces),
        )

    @contextmanager
    def _api_errors(self, timeout: float):
        """The client's errors as _Transient (worth retrying), LLMFatalError (401/403) or a one-line LLMError."""
        import httpx
        import openai

        try:
            yield
        except openai.APIStatusError as exc:
            status = exc.status_code
            body = exc.body.get("message", exc.body) if isinstance(exc.body, dict) else exc.body
            reason = f"HTTP {status}" + (f": {body}" if body else "")
            if status in (401, 403):
                self._fail(
                    f"{reason} (check the key in ${self.api_key_env} and the access to the model)", LLMFatalError
                )
            if status in (408, 409, 429) or status >= 500:
                raise _Transient(reason, _retry_after(exc.response)) from None
            self._fail(reason)
        except openai.APITimeoutError:
            raise _Transient(f"no answer within {timeout:.3g} s") from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise _Transient(f"connection failed: {type(cause).__name__}: {cause}") from None
        except openai.APIError as exc:
            self._fail(f"{type(exc).__name__}: {exc.message}")
        except httpx.TimeoutException:  # while reading a stream, the client's errors come through unwrapped
            raise _Transient(f"no answer within {timeout:.3g} s") from None
        except httpx.HTTPError as exc:
            raise _Transient(f"connection failed: {type(exc).__name__}: {exc}") from None

    def _parse(self, response, params: SamplingParams) -> Completion:
        """The completion in a 200 reply, or a one-line LLMError saying what is wrong with the reply."""
        text = response.text
        try:
            data = json.loads(text)
        except ValueError:
            kind = response.headers.get("content-type", "no content type").split(";")[0]
            self._fail(f"the reply is not JSON ({kind}, {len(text)} characters: {one_line(text, 80)})")
        if not isinstance(data, dict):
            self._fail(f"the reply is JSON but not an object: {one_line(text, 80)}")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices:
            error = data.get("error")
            detail = f" (error: {error.get('message', error) if isinstance(error, dict) else error})" if error else ""
            self._fail(f"the reply has {'an empty' if choices == [] else 'no'} `choices` list{detail}")
        choice = choices[0] if isinstance(choices[0], dict) else {}
        message = choice.get("message")
        if not isinstance(message, dict):
            self._fail("the reply's choices[0] has no `message`")
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            self._fail(f"the reply's message content is {type(content).__name__}, not text")
        top = self._top_logprobs(choice) if params.logprobs else None
        if not (content or "").strip() and not top:
            self._fail(f"the reply is empty (finish_reason: {choice.get('finish_reason')})")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return Completion(
            text=(content or "").strip(),
            prompt_tokens=_int(usage.get("prompt_tokens")),
            completion_tokens=_int(usage.get("completion_tokens")),
            top_logprobs=top,
        )

    def _top_logprobs(self, choice: dict) -> list[dict[str, float]] | None:
        logprobs = choice.get("logprobs")
        tokens = logprobs.get("content") if isinstance(logprobs, dict) else None
        if not tokens:
            return None
        try:
            return [
                {alt["token"]: float(alt["logprob"]) for alt in tok.get("top_logprobs") or []}
                or {tok["token"]: float(tok["logprob"])}
                for tok in tokens
            ]
        except (AttributeError, KeyError, TypeError, ValueError):
            self._fail("the reply's logprobs are malformed")
