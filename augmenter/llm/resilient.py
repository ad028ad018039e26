"""Fallback backends and a circuit breaker around an LLM (the idea of LiteLLM's router, for one deployment)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from augmenter.errors import CircuitOpenError, LLMError, LLMFatalError
from augmenter.llm.base import LLM, Completion, Messages, SamplingParams, TextSink, identity_of, stream_completion
from augmenter.redact import redact
from augmenter.settings import NonNegative, Positive


class ResilientLLM:
    """The LLM protocol over a primary backend and its fallbacks.

    A call tries the primary, then each fallback in order, while they raise `LLMError`; the completion's
    `served_by` names the fallback that answered (None: the primary did). A fatal error (401/403) falls back too,
    since a fallback is another endpoint with its own key; with no fallback it is raised as it is. When every
    backend fails, the call raises `LLMFatalError` if every failure was fatal, else `LLMError`, naming each reason.

    Circuit breaker: after `max_consecutive_failures` calls in a row on which every backend failed, every call
    raises `CircuitOpenError` at once, contacting no server, for `cooldown` seconds; then one trial call goes
    through (half-open): its success closes the breaker, its failure opens it for another `cooldown`.
    """

    def __init__(
        self,
        primary: LLM,
        fallbacks: Sequence[LLM] = (),
        max_consecutive_failures: Positive = 5,
        cooldown: NonNegative = 30.0,
    ):
        if (
            isinstance(max_consecutive_failures, bool)
            or not isinstance(max_consecutive_failures, int)
            or max_consecutive_failures < 1
        ):
            raise ValueError(
                f"llm_guard.max_consecutive_failures must be an integer >= 1, got {max_consecutive_failures!r}"
            )
        if isinstance(cooldown, bool) or not isinstance(cooldown, (int, float)) or not cooldown >= 0:
            raise ValueError(f"llm_guard.cooldown must be a number of seconds >= 0, got {cooldown!r}")
        self.backends = [primary, *fallbacks]
        self.backend, self.model, self.identity = primary.backend, primary.model, identity_of(primary)
        self.max_consecutive_failures, self.cooldown = max_consecutive_failures, cooldown
        self.failures = 0  # calls in a row on which every backend failed
        self.last_error = ""
        self._open_until: float | None = None  # monotonic time the breaker stays open until
        self._trial = False  # a half-open trial call is under way
        self._lock = threading.Lock()

    def _admit(self) -> None:
        """Let a call through, or raise CircuitOpenError while the breaker is open (or its trial is running)."""
        with self._lock:
            if self._open_until is None:
                return
            left = self._open_until - time.monotonic()
            if left <= 0 and not self._trial:
                self._trial = True
                return
            when = (datetime.now() + timedelta(seconds=max(left, 0))).strftime("%H:%M:%S")
            retry = f"retrying at {when}" if left > 0 else "a trial call is under way"
            raise CircuitOpenError(
                redact(
                    f"the LLM failed {self.failures} calls in a row (last: {self.last_error}); "
                    f"no calls are sent for {self.cooldown:g} s, {retry}"
                )
            )

    def _record(self, error: str | None) -> None:
        with self._lock:
            self._trial = False
            if error is None:
                self.failures, self._open_until = 0, None
                return
            self.failures += 1
            self.last_error = error
            if self.failures >= self.max_consecutive_failures:
                self._open_until = time.monotonic() + self.cooldown

    @property
    def primary(self) -> LLM:
        """The configured backend (its cache, when `llm_cache.enabled`), before any fallback."""
        return self.backends[0]

    def complete(self, messages: Messages, params: SamplingParams) -> Completion:
        return self._call(messages, params, None)

    def stream(self, messages: Messages, params: SamplingParams, on_text: TextSink) -> Completion:
        """`complete`, streaming each backend's reply to `on_text` (a fallback's after a failed backend's part)."""
        return self._call(messages, params, on_text)

    def _call(self, messages: Messages, params: SamplingParams, on_text: TextSink | None) -> Completion:
        self._admit()
        errors: list[LLMError] = []
        try:
            for backend in self.backends:
                try:
                    if on_text is None:
                        out = backend.complete(messages, params)
                    else:
                        out = stream_completion(backend, messages, params, on_text)
                except LLMError as exc:
                    errors.append(exc)
                    continue
                self._record(None)
                return out if backend is self.backends[0] else replace(out, served_by=identity_of(backend))
        except BaseException:  # not an LLM failure (a bug, an interrupt): no verdict on the backends
            with self._lock:
                self._trial = False
            raise
        if len(errors) == 1:
            self._record(str(errors[0]))
            raise errors[0]
        reasons = "; ".join(f"{identity_of(b)}: {e}" for b, e in zip(self.backends, errors))
        self._record(reasons)
        kind = LLMFatalError if all(isinstance(e, LLMFatalError) for e in errors) else LLMError
        raise kind(redact(f"all {len(errors)} LLM backends failed: {reasons}"))
