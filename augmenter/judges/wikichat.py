"""WikiChat's conversationality judge (Semnani et al. 2023, section 5): every assistant turn after the human opening
is rated 1-5 on five criteria (relevant, informational, natural, non-repetitive, temporally correct), the judge
reasoning about each first. Prompt written anew: `augmenter/prompts/files/judge_wikichat.yaml`."""

from __future__ import annotations

from collections.abc import Sequence

from augmenter.judges.base import FAILED, OK, PARTIAL, UNPARSED, Dialogue, Judgment, LLMJudge
from augmenter.judges.parsing import CRITERIA, parse_criteria


class WikiChatJudge(LLMJudge):
    """verdict: {"turns": [{"index": the utterance's 0-based index, "scores": {criterion: 1-5 or None},
    "status": ok | unparsed | partial | failed}]}. One LLM call per assistant turn; `history`: the utterances
    before it that the judge sees."""

    name = "wikichat"
    arity = 1

    def __init__(self, llm, prompt: str = "judge_wikichat", history: int = 6, **settings):
        super().__init__(llm, prompt, **settings)
        self.history = history

    def _clip(self, text: str) -> str:
        text = " ".join(text.split())
        return text if len(text) <= self.max_chars else text[: self.max_chars - 1] + "…"

    def judge(self, dialogues: Sequence[Dialogue], seed: int = 0) -> Judgment:
        self.check_arity(dialogues)
        dialogue = dialogues[0]
        turns, raw, errors, seconds = [], [], [], 0.0
        for i, (speaker, text) in enumerate(dialogue.utterances):
            if speaker != "S" or i < dialogue.human:
                continue
            before = dialogue.utterances[max(0, i - self.history) : i]
            history = [{"speaker": "User" if s == "U" else "Chatbot", "text": self._clip(t)} for s, t in before]
            answer, error, took = self.ask(seed, history=history, response=self._clip(text))
            seconds += took
            if answer is None:
                errors.append(error)
                turns.append({"index": i, "scores": {c: None for c in CRITERIA}, "status": FAILED})
                continue
            raw.append(answer)
            scores = parse_criteria(answer)
            parsed = sum(v is not None for v in scores.values())
            status = OK if parsed == len(scores) else (UNPARSED if parsed == 0 else PARTIAL)
            turns.append({"index": i, "scores": scores, "status": status})
        calls = len(turns)
        if errors:  # any failed call: the whole judgment is retried on resume
            return Judgment(self.name, FAILED, {"turns": turns}, raw, errors[0], calls, seconds)
        statuses = {t["status"] for t in turns}
        status = OK if statuses <= {OK} else (UNPARSED if statuses == {UNPARSED} else PARTIAL)
        return Judgment(self.name, status, {"turns": turns}, raw, None, calls, seconds)
