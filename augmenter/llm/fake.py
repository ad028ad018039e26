"""A scripted LLM for unit tests (in the spirit of DSPy's DummyLM)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable

from augmenter.llm.base import Completion, Messages, SamplingParams, TextSink, identity
from augmenter.settings import NonNegative

Reply = str | Completion | Exception | Callable[[Messages], str | Completion]


class FakeLLM:
    """Answers from a script.

    - `responses`: replies used in order (a reply may be a function of the messages); when they run out,
      `default` answers (or an error is raised if there is no default);
    - a reply may also be a `Completion` (to script `top_logprobs`), returned as it is, or an exception
      (e.g. an `LLMError`), raised;
    - `rules`: {substring: reply} — when any message contains the substring, that reply wins.
    Every call is kept in `calls` so tests can look at the prompts. `stream` hands the reply to `on_text` word by
    word, `stream_delay` seconds apart (to watch a draft stream in).
    """

    backend = "fake"

    def __init__(
        self,
        responses: Iterable[Reply] | None = (),
        rules: dict[str, Reply] | None = None,
        default: Reply | None = "This is a scripted reply from the fake LLM.",
        model: str = "scripted",
        stream_delay: NonNegative = 0.0,
    ):
        self.model = model
        self.stream_delay = stream_delay
        self.responses = list(responses or [])
        self.rules = dict(rules or {})
        self.default = default
        self.calls: list[Messages] = []

    @property
    def identity(self) -> str:
        return identity(self.backend, self.model)

    def complete(self, messages: Messages, params: SamplingParams) -> Completion:
        self.calls.append(messages)
        prompt = "\n".join(m["content"] for m in messages)
        reply: Reply | None = None
        for needle, rule_reply in self.rules.items():
            if needle in prompt:
                reply = rule_reply
                break
        if reply is None:
            reply = self.responses.pop(0) if self.responses else self.default
        if reply is None:
            raise RuntimeError("FakeLLM ran out of scripted responses")
        if isinstance(reply, Exception):
            raise reply
        text = reply(messages) if callable(reply) else reply
        if isinstance(text, Completion):  # a scripted completion, e.g. with top_logprobs
            return text
        prompt_tokens = sum(len(m["content"].split()) for m in messages)
        return Completion(text=text, prompt_tokens=prompt_tokens, completion_tokens=len(text.split()))

    def stream(self, messages: Messages, params: SamplingParams, on_text: TextSink) -> Completion:
        out = self.complete(messages, params)
        for piece in re.findall(r"\s*\S+\s*", out.text):
            if self.stream_delay:
                time.sleep(self.stream_delay)
            on_text(piece)
        return out
