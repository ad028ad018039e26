"""A judge without an LLM: augmenter's own rule checks (`augmenter.utilities`: a reply repeating itself or the
assistant's earlier replies, a reply asking for what the dialogue already gave) over two conversations, asked as
BotChat's Arena question. The conversation with more flagged replies is the "AI-involved" one; equal counts are a
tie. Deterministic and free, it is the reference a small LLM judge can be compared with: it sees only what its
checks see, but it sees it every time."""

from __future__ import annotations

import time
from collections.abc import Sequence

from augmenter.judges.base import OK, Dialogue, Judgment
from augmenter.judges.botchat import first_score
from augmenter.memory import Utterance, WorkingMemory
from augmenter.utilities.dodge import DodgeUtility
from augmenter.utilities.repetition import RepetitionUtility


class ChecksJudge:
    """verdict: {"choice": "1" | "2" | "neither", "first": the first-shown conversation's result (1 win, 0.5 tie,
    0 loss), "length": utterances compared, "flags": flagged replies of each, "replies": replies of each}. Only
    assistant replies after the human opening count; both conversations are cut to the shorter one's length."""

    name = "checks"
    arity = 2
    # Free and deterministic: judged anew on every run, so a changed check never mixes with old verdicts.
    recompute = True

    def __init__(self, repetition: RepetitionUtility | None = None, dodge: DodgeUtility | None = None):
        self.repetition, self.dodge = repetition or RepetitionUtility(), dodge or DodgeUtility()

    def flagged(self, dialogue: Dialogue) -> tuple[int, int]:
        """(flagged replies, replies) of the assistant after the human opening."""
        flags = replies = 0
        turns = [Utterance(speaker="S" if s == "S" else "U", text=t) for s, t in dialogue.utterances]
        for i, turn in enumerate(turns):
            if turn.speaker != "S" or i < dialogue.human:
                continue
            history, query = turns[: max(0, i - 1)], turns[i - 1].text if i > 0 else ""
            flags += (
                self.repetition.repeats(turn.text, history)
                or not self.dodge(WorkingMemory(q=query, h_q=history), turn.text).passed
            )
            replies += 1
        return flags, replies

    def judge(self, dialogues: Sequence[Dialogue], seed: int = 0) -> Judgment:
        if len(dialogues) != self.arity:
            raise ValueError(f"{self.name} judges {self.arity} dialogues at a time, got {len(dialogues)}")
        start = time.perf_counter()
        length = min(len(d.utterances) for d in dialogues)
        (f1, r1), (f2, r2) = (self.flagged(d.cut(length)) for d in dialogues)
        choice = "1" if f1 > f2 else "2" if f2 > f1 else "neither"
        verdict = {
            "choice": choice,
            "first": first_score(choice),
            "length": length,
            "flags": [f1, f2],
            "replies": [r1, r2],
        }
        return Judgment(self.name, OK, verdict, llm_calls=0, seconds=time.perf_counter() - start)
