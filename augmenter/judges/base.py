"""What every judge shares: the dialogue it reads, the judgment it returns, the one protocol, and the LLM call that
never lets a failed call pass as a verdict."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

from augmenter.errors import AugmenterError, CircuitOpenError, LLMFatalError
from augmenter.llm.base import SamplingParams
from augmenter.prompts import PromptTemplate
from augmenter.text import one_line

log = logging.getLogger(__name__)

OK, UNPARSED, PARTIAL, FAILED = "ok", "unparsed", "partial", "failed"  # a judgment's status
COPIED = "copied"  # set by the results, never stored: the answer copies the prompt's worked example


@dataclass
class Dialogue:
    """A conversation to judge: `utterances` as (speaker, text) pairs, speaker "U" (user) or "S" (assistant);
    the first `human` utterances are the human opening (a ChatSEED, or a DSTC11 dialogue's history)."""

    id: str
    system: str
    utterances: list[tuple[str, str]]
    human: int = 0
    ground_truth: list[tuple[str, str]] = field(default_factory=list)  # the human dialogue it continues, if known

    def cut(self, length: int) -> Dialogue:
        """The first `length` utterances."""
        return Dialogue(self.id, self.system, self.utterances[:length], min(self.human, length), self.ground_truth)

    def truth(self) -> Dialogue | None:
        """The ground-truth dialogue as a Dialogue (system "ground truth"), or None."""
        if not self.ground_truth:
            return None
        return Dialogue(self.id, "ground truth", list(self.ground_truth), len(self.ground_truth))


@dataclass
class Judgment:
    """A judge's answer. `status`: ok, unparsed (the model's answer has no verdict in the asked format: counted as
    such, never as a win or a default score), partial (some per-turn scores unparsed) or failed (the LLM call
    failed: retried on resume). `verdict` is the judge's own (see each judge); `raw`: the model's answers."""

    judge: str
    status: str
    verdict: dict[str, Any] = field(default_factory=dict)
    raw: list[str] = field(default_factory=list)
    error: str | None = None
    llm_calls: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@runtime_checkable
class Judge(Protocol):
    """Judges `arity` dialogues (1: UniEval, WikiChat; 2: Arena, GTEval, which compare two) with one sampling seed.
    A judge may set `recompute = True` (free and deterministic, like the rule checks): `JudgeRun` then judges anew
    on every run instead of resuming its stored verdicts."""

    name: str
    arity: int

    def judge(self, dialogues: Sequence[Dialogue], seed: int = 0) -> Judgment: ...


def transcript(dialogue: Dialogue, max_chars: int = 600) -> str:
    """The dialogue as BotChat shows it: numbered utterances, speakers A and B in turn, each ending in <chat_end>."""
    lines = []
    for i, (_, text) in enumerate(dialogue.utterances):
        text = " ".join(text.split())
        text = text if len(text) <= max_chars else text[: max_chars - 1] + "…"
        lines.append(f"{i + 1}. {'AB'[i % 2]}: {text} <chat_end>")
    return "\n".join(lines)


class LLMJudge:
    """A judge that asks an LLM (anything with `complete(messages, params)`) with a prompt file."""

    name = "judge"
    arity = 1

    def __init__(self, llm, prompt: str, max_tokens: int = 256, temperature: float = 0.0, max_chars: int = 600):
        self.llm, self.prompt, self.prompt_name = llm, PromptTemplate.load(prompt), prompt
        self.max_tokens, self.temperature, self.max_chars = max_tokens, temperature, max_chars

    def ask(self, seed: int, **variables) -> tuple[str | None, str | None, float]:
        """(the model's answer, None, seconds), or (None, why the call failed, seconds). A rejected key or an open
        circuit breaker is raised: no judgment can be had until it is fixed."""
        start = time.perf_counter()
        params = SamplingParams(max_tokens=self.max_tokens, temperature=self.temperature, seed=seed)
        try:
            text = self.llm.complete(self.prompt.render(**variables), params).text
        except (LLMFatalError, CircuitOpenError):
            raise
        except AugmenterError as exc:
            return None, one_line(exc, 300), time.perf_counter() - start
        except Exception as exc:  # a bug in a backend: this judgment fails, the run goes on
            log.debug("judge call crashed", exc_info=True)
            return None, one_line(f"crash: {type(exc).__name__}: {exc}", 300), time.perf_counter() - start
        return text or "", None, time.perf_counter() - start

    def check_arity(self, dialogues: Sequence[Dialogue]) -> None:
        if len(dialogues) != self.arity:
            raise ValueError(f"{self.name} judges {self.arity} dialogue(s) at a time, got {len(dialogues)}")
