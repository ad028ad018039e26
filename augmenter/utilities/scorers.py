"""Utility functions: plain callables `(memory, candidate) -> UtilityResult(score, feedback)`.

`feedback` is None when the candidate passes; otherwise it is the verbal feedback f that the Prompt
Engine puts into the next prompt (paper section 2.4). What sending may rely on besides the score is declared by a
`Check`; `as_check` makes one of any utility.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from numbers import Real
from typing import Any, Protocol, runtime_checkable

from augmenter.llm.base import MeteredLLM, SamplingParams
from augmenter.memory import WorkingMemory
from augmenter.prompts import PromptEngine
from augmenter.settings import Positive, Share
from augmenter.utilities.kf1 import knowledge_f1, normalize_answer

PAPER_FEEDBACK = "The response is inconsistent with the knowledge. Please generate again."  # footnote 3


@dataclass
class UtilityResult:
    score: float
    feedback: str | None = None
    claims: list | None = None  # the candidate's ClaimChecks, from a utility that checks claims

    @property
    def passed(self) -> bool:
        return self.feedback is None


def utility_result(value: Any) -> UtilityResult:
    """A utility's answer as a UtilityResult: one as it is, a `(score, feedback)` pair, or a bare score."""
    if isinstance(value, UtilityResult):
        return value
    if isinstance(value, Real) and not isinstance(value, bool):
        return UtilityResult(float(value))
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], Real):
        return UtilityResult(float(value[0]), None if value[1] is None else str(value[1]))
    raise TypeError(f"a utility returns a UtilityResult, a (score, feedback) pair or a score, got {value!r}")


@runtime_checkable
class Check(Protocol):
    """A utility that declares what sending may rely on (the executor reads nothing else of it):

    - `checks_claims`: True when it verifies a candidate's claims against the knowledge; the executor then sends only
      a candidate it passed and no claim of which is refuted, else the knowledge's own words, the supported claims,
      or "the knowledge does not answer" (also for a turn whose results carried claims: `UtilityResult.claims`).
      False: the paper's rule, the best-scored candidate goes out whether or not it passed.
    - `on_topic(memory, sentence)`: whether a supported claim is on the question, when a reply is made of a failed
      candidate's supported claims.
    """

    checks_claims: bool

    def __call__(self, mem: WorkingMemory, candidate: str) -> Any: ...

    def on_topic(self, mem: WorkingMemory, sentence: str) -> bool: ...


class Checked:
    """A utility that declares neither (a plain function, KF1) as a Check: `checks_claims` as given (default False:
    the paper's rule) and every sentence on the question. `Checked(fn, checks_claims=True)` gives a plain function
    the claims utility's safety on send: a candidate it fails is never sent."""

    def __init__(self, utility: Callable[[WorkingMemory, str], Any], checks_claims: bool = False):
        if not callable(utility):
            raise TypeError(f"a utility is a callable (memory, candidate), got {type(utility).__name__}")
        self.utility, self.checks_claims = utility, checks_claims

    def __call__(self, mem: WorkingMemory, candidate: str) -> Any:
        return self.utility(mem, candidate)

    def on_topic(self, mem: WorkingMemory, sentence: str) -> bool:
        return True


def as_check(utility: Any) -> Check:
    """`utility` itself when it is a Check, else `Checked(utility)`. One that declares only one of the two is an
    error, not a silent default."""
    if isinstance(utility, Check):
        return utility
    declared = [name for name in ("checks_claims", "on_topic") if hasattr(utility, name)]
    if declared:
        missing = "on_topic" if declared == ["checks_claims"] else "checks_claims"
        raise TypeError(
            f"utility {type(utility).__name__} declares {declared[0]} but not {missing}: a Check "
            "declares both (augmenter.utilities.scorers.Check)"
        )
    return Checked(utility)


class KF1Utility:
    """Rule-based utility: Knowledge F1 of the candidate against the evidence in e, with the paper's
    template feedback (footnote 3) when KF1 falls below `threshold`.

    With no evidence there is nothing to check against: the candidate scores 0 and passes.
    `gate=False` gives the feedback to every candidate, whatever its score (paper Fig. 5, "always feedback").
    """

    name = "kf1"

    def __init__(self, threshold: Share = 0.2, feedback: str = PAPER_FEEDBACK, gate: bool = True):
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold is a KF1 in [0, 1], got {threshold}")
        self.threshold = threshold
        self.feedback = feedback
        self.gate = gate

    def score(self, mem: WorkingMemory, candidate: str) -> float:
        return knowledge_f1(candidate, [s.text for s in mem.e]) if mem.e else 0.0

    def __call__(self, mem: WorkingMemory, candidate: str) -> UtilityResult:
        score = self.score(mem, candidate)
        failed = bool(mem.e) and (score < self.threshold or not self.gate)
        return UtilityResult(score, self.feedback if failed else None)


class SelfCritiqueUtility(KF1Utility):
    """Self-criticism feedback (paper section 3.2, Table 4): scored with KF1 like the rule-based utility,
    but when the candidate falls below the threshold the LLM itself writes the feedback."""

    name = "self_critique"

    def __init__(
        self,
        llm: MeteredLLM,
        prompts: PromptEngine,
        threshold: Share = 0.2,
        max_tokens: Positive = 80,
        gate: bool = True,
    ):
        super().__init__(threshold=threshold, gate=gate)
        self.llm = llm
        self.prompts = prompts
        self.params = SamplingParams(max_tokens=max_tokens, temperature=0.0)

    def __call__(self, mem: WorkingMemory, candidate: str) -> UtilityResult:
        result = super().__call__(mem, candidate)
        if result.passed:
            return result
        raw = self.llm.complete(self.prompts.self_critique(mem, candidate), self.params).text
        critique = self.prompts.self_critique_prompt.cut(raw)
        return UtilityResult(result.score, critique or self.feedback)


RECALL_FEEDBACK = (
    "The answer is not supported by the knowledge. Please answer again with a short answer taken from the knowledge."
)


class RecallUtility:
    """Wiki QA's utility (paper section 4.2, "recall": token overlap with the evidence): the share of the answer's
    normalised tokens that occur in the evidence, i.e. how much of a short answer the evidence supports (the
    evidence's own recall by a few-word answer would always be near 0). Below `threshold` the template feedback
    names the unsupported words. No evidence: 0, and it passes."""

    name = "recall"

    def __init__(self, threshold: Share = 0.8, feedback: str = RECALL_FEEDBACK, gate: bool = True):
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold is a recall in [0, 1], got {threshold}")
        self.threshold, self.feedback, self.gate = threshold, feedback, gate

    @staticmethod
    def _unsupported(mem: WorkingMemory, candidate: str) -> tuple[list[str], list[str]]:
        evidence = set(normalize_answer(" ".join(s.text for s in mem.e)).split())
        tokens = normalize_answer(candidate).split()
        return tokens, [t for t in tokens if t not in evidence]

    def score(self, mem: WorkingMemory, candidate: str) -> float:
        if not mem.e:
            return 0.0
        tokens, missing = self._unsupported(mem, candidate)
        return 1.0 - len(missing) / len(tokens) if tokens else 0.0

    def __call__(self, mem: WorkingMemory, candidate: str) -> UtilityResult:
        score = self.score(mem, candidate)
        if not mem.e or (score >= self.threshold and self.gate):
            return UtilityResult(score, None)
        _, missing = self._unsupported(mem, candidate)
        words = f" Not in the knowledge: {', '.join(dict.fromkeys(missing))}." if missing else ""
        return UtilityResult(score, self.feedback + words)
