"""BotChat's three judges (Duan et al. 2023, section 3), prompts written anew in `augmenter/prompts/files/judge_*`.

- UniEval: is one conversation AI-involved, and from which utterance? It passes @N when the judge says no, or
  names a first AI utterance after the N-th.
- Arena: which of two conversations is AI-involved (1, 2, both, neither)? The other one wins; both or neither is a
  tie. Asked in both orders (see `augmenter.judges.run`) to cancel position bias.
- GTEval: the Arena question for a generated conversation beside the human one it continues; the generated one
  wins when the judge picks the human one as AI-involved.
"""

from __future__ import annotations

from collections.abc import Sequence

from augmenter.judges.base import FAILED, OK, UNPARSED, Dialogue, Judgment, LLMJudge, transcript
from augmenter.judges.parsing import parse_pair_choice, parse_yes_no_index


class UniEvalJudge(LLMJudge):
    """verdict: {"ai": bool, "index": the first AI utterance (1-based) or None, "length": utterances shown}."""

    name = "unieval"
    arity = 1

    def __init__(self, llm, prompt: str = "judge_unieval", **settings):
        super().__init__(llm, prompt, **settings)

    def judge(self, dialogues: Sequence[Dialogue], seed: int = 0) -> Judgment:
        self.check_arity(dialogues)
        dialogue = dialogues[0]
        text, error, seconds = self.ask(
            seed, conversation=transcript(dialogue, self.max_chars), utterances=len(dialogue.utterances)
        )
        if text is None:
            return Judgment(self.name, FAILED, error=error, llm_calls=1, seconds=seconds)
        verdict = parse_yes_no_index(text, len(dialogue.utterances))
        if verdict is None:
            return Judgment(self.name, UNPARSED, raw=[text], llm_calls=1, seconds=seconds)
        return Judgment(
            self.name, OK, {**verdict, "length": len(dialogue.utterances)}, [text], llm_calls=1, seconds=seconds
        )


def passes_at(verdict: dict, n: int) -> bool | None:
    """UniEval pass@N: the judge says "not AI-involved", or its first AI utterance comes after the N-th. None when
    the judge said "AI-involved" without a usable index and N is below the dialogue's length (undecidable)."""
    if not verdict["ai"]:
        return True
    if verdict.get("index") is not None:
        return verdict["index"] > n
    return False if n >= verdict.get("length", 0) else None


def first_score(choice: str) -> float:
    """The first-shown conversation's result from a pair choice (the AI-involved one loses; both/neither: a tie)."""
    return {"1": 0.0, "2": 1.0}.get(choice, 0.5)


class ArenaJudge(LLMJudge):
    """verdict: {"choice": "1" | "2" | "both" | "neither", "first": the first-shown conversation's result (1 win,
    0.5 tie, 0 loss)}. Both conversations are shown cut to the shorter one's length."""

    name = "arena"
    arity = 2

    def __init__(self, llm, prompt: str = "judge_arena", **settings):
        super().__init__(llm, prompt, **settings)

    def judge(self, dialogues: Sequence[Dialogue], seed: int = 0) -> Judgment:
        self.check_arity(dialogues)
        length = min(len(d.utterances) for d in dialogues)
        first, second = (d.cut(length) for d in dialogues)
        text, error, seconds = self.ask(
            seed, first=transcript(first, self.max_chars), second=transcript(second, self.max_chars)
        )
        if text is None:
            return Judgment(self.name, FAILED, error=error, llm_calls=1, seconds=seconds)
        choice = parse_pair_choice(text)
        if choice is None:
            return Judgment(self.name, UNPARSED, raw=[text], llm_calls=1, seconds=seconds)
        return Judgment(
            self.name,
            OK,
            {"choice": choice, "first": first_score(choice), "length": length},
            [text],
            llm_calls=1,
            seconds=seconds,
        )


class GTEvalJudge(ArenaJudge):
    """The Arena question with the ground truth beside a generated conversation (the prompt says one of them is
    human): the caller shows (generated, ground truth) or (ground truth, generated); `first` is as in Arena."""

    name = "gteval"
    against_truth = True  # compared with the dialogue's ground truth, not with another system

    def __init__(self, llm, prompt: str = "judge_gteval", **settings):
        super().__init__(llm, prompt, **settings)
