"""A utility plus conversational checks: KF1 or the claims utility (`base`) with the repetition, dodge and answers
(does it answer what was asked) checks.

The score is the base's score times each check's (a reply said nine times keeps its KF1 times a small repetition
score); the candidate passes only when the base and every check pass; the feedback joins theirs. The claims of a
claims base are passed on, so the executor treats the combination as the claims utility (see Executor._send).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from augmenter.memory import WorkingMemory
from augmenter.settings import Positive, Share
from augmenter.utilities.answers import AnswersQuestion
from augmenter.utilities.dodge import DodgeUtility
from augmenter.utilities.repetition import RepetitionUtility
from augmenter.utilities.scorers import UtilityResult, as_check, utility_result

CHECKS = ("repetition", "dodge", "answers")


class CombinedUtility:
    """`base` (any utility, or None: the checks alone) with `checks`: names ("repetition", "dodge", "answers") or
    callables `(memory, candidate)`. `ngram`, `within_threshold`, `earlier_threshold`, `min_sentence_words`: the
    repetition check's settings (see RepetitionUtility)."""

    name = "combined"

    def __init__(
        self,
        base: Callable | None = None,
        checks: Sequence[str | Callable] = ("answers",),
        ngram: Positive = 4,
        within_threshold: Share = 0.2,
        earlier_threshold: Share = 0.5,
        min_sentence_words: Positive = 3,
    ):
        self.base = base
        self.checks = []
        for check in checks:
            if callable(check):
                self.checks.append(check)
            elif check == "repetition":
                self.checks.append(RepetitionUtility(ngram, within_threshold, earlier_threshold, min_sentence_words))
            elif check == "dodge":
                self.checks.append(DodgeUtility())
            elif check == "answers":
                self.checks.append(AnswersQuestion())
            else:
                raise ValueError(f"unknown check {check!r}; checks: {', '.join(CHECKS)}")
        if base is None and not self.checks:
            raise ValueError("a combined utility needs a base utility or at least one check")
        self.checks_claims = base is not None and as_check(base).checks_claims

    @property
    def answers_check(self) -> AnswersQuestion | None:
        """The answers check among the checks (None without one): what finds the evidence that answers."""
        return next((c for c in self.checks if isinstance(c, AnswersQuestion)), None)

    def on_topic(self, mem: WorkingMemory, sentence: str) -> bool:
        """Whether a sentence is on the question, by the answers check (True without one): the executor sends only
        such claims when it composes a reply from a failed candidate's supported claims."""
        check = self.answers_check
        return check is None or check.on_topic(mem, sentence)

    def answering_faqs(self, mem: WorkingMemory) -> list:
        """The FAQs of the evidence about the question, by the answers check ([] without one)."""
        check = self.answers_check
        return [] if check is None else check.answering_faqs(mem)

    def nearest_faqs(self, mem: WorkingMemory, threshold: float) -> list:
        """The FAQs of the evidence at least `threshold` close to the question, by the answers check ([] without)."""
        check = self.answers_check
        return [] if check is None else check.nearest_faqs(mem, threshold)

    def answering_reviews(self, mem: WorkingMemory) -> list:
        """The retrieved review sentences about the question, by the answers check ([] without one)."""
        check = self.answers_check
        return [] if check is None else check.answering_reviews(mem)

    def __call__(self, mem: WorkingMemory, candidate: str) -> UtilityResult:
        parts = [utility_result(self.base(mem, candidate))] if self.base is not None else []
        claims = parts[0].claims if parts else None
        parts += [utility_result(check(mem, candidate)) for check in self.checks]
        score = 1.0
        for part in parts:
            score *= part.score
        feedback = "\n".join(p.feedback for p in parts if p.feedback is not None) or None
        return UtilityResult(score, feedback, claims)
