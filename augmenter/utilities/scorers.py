"""Utility functions: plain callables `(memory, candidate) -> UtilityResult(score, feedback)`.

`feedback` is None when the candidate passes; otherwise it is the verbal feedback f that the Prompt
Engine puts into the next prompt (paper section 2.4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from augmenter.llm.base import MeteredLLM, SamplingParams
from augmenter.memory import WorkingMemory
from augmenter.prompts import PromptEngine
from augmenter.utilities.kf1 import knowledge_f1

PAPER_FEEDBACK = "The response is inconsistent with the knowledge. Please generate again."  # footnote 3


@dataclass
class UtilityResult:
    score: float
    feedback: Optional[str] = None

    @property
    def passed(self) -> bool:
        return self.feedback is None


class KF1Utility:
    """Rule-based utility: Knowledge F1 of the candidate against the evidence in e, with the paper's
    template feedback (footnote 3) when KF1 falls below `threshold`.

    With no evidence there is nothing to check against: the candidate scores 0 and passes.
    `gate=False` gives the feedback to every candidate, whatever its score (paper Fig. 5, "always feedback").
    """

    name = "kf1"

    def __init__(self, threshold: float = 0.2, feedback: str = PAPER_FEEDBACK, gate: bool = True):
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

    def __init__(self, llm: MeteredLLM, prompts: PromptEngine, threshold: float = 0.2, max_tokens: int = 80,
                 gate: bool = True):
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
