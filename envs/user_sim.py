"""User simulators: where the environment's user turns come from.

`DSTC11Replay` replays the user turns of a DSTC11 split, knowledge-seeking and not (so that "when to consolidate"
is learnable), each with its gold knowledge (empty for turns that need none); its `dialogue` replays one
dialogue's user turns in order. `LLMUserSimulator` writes the user's side of a multi-turn conversation with an LLM,
starting from a seed (BotChat's ChatSEEDs: the opening utterances of MuTual dialogues); its turns carry no gold
knowledge, so their reward is the costs alone (chit-chat: consolidating there only costs).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol

import numpy as np

from augmenter.errors import InputError
from augmenter.knowledge.base import KnowledgeBase
from augmenter.llm.base import SamplingParams
from augmenter.memory import Utterance
from augmenter.prompts import PromptTemplate
from augmenter.prompts.leakage import fewshot_leaks
from augmenter.storage import content_hash, json_error
from augmenter.tasks.base import Turn, seeded_sample
from augmenter.tasks.dstc11 import load_turns

UserTurn = Turn  # the environment's name for a turn: the one turn model of augmenter.tasks


class Conversation(Protocol):
    """A whole dialogue as the environment sees it: the first user turn, then each next one given the reply."""

    def first(self) -> UserTurn: ...

    def next(self, response: str) -> UserTurn | None: ...  # None: the user is done


class UserSimulator(Protocol):
    def __len__(self) -> int: ...

    def sample(self, rng: np.random.Generator) -> UserTurn: ...

    def dialogue(self, rng: np.random.Generator) -> Conversation: ...


class Replayed:
    """A recorded dialogue's user turns, in order; the agent's replies do not change what the user says next."""

    def __init__(self, turns: list[UserTurn]):
        self.turns, self.i = turns, 0

    def first(self) -> UserTurn:
        self.i = 0
        return self.turns[0]

    def next(self, response: str) -> UserTurn | None:
        self.i += 1
        return self.turns[self.i] if self.i < len(self.turns) else None


PARTS = ("all", "train", "heldout")


def heldout_dialogue(history: list[Utterance], q: str, share: float = 0.2) -> bool:
    """Whether a turn's dialogue is held out: decided by a hash of the dialogue's first utterance, so every
    prefix of one dialogue falls on the same side (no training on the start of a held-out conversation)."""
    first = (history[0].text if history else q).strip().lower()
    return int(content_hash(first, length=8), 16) / 0xFFFFFFFF < share


class DSTC11Replay:
    """User turns of a DSTC11 split (`<root>/<split>/logs.json`, `labels.json`); `limit` keeps a seeded sample.
    `seeking_share` (0..1, or None for the split's own mix) sets how often a knowledge-seeking turn is drawn.
    `part`: "train" or "heldout" keeps one side of a fixed dialogue-level split (`heldout_share` of the
    dialogues are held out; DSTC11 publishes no training logs, so policies learn on dev and are scored on
    held-out dev dialogues), "all" keeps every turn."""

    def __init__(
        self,
        root: str | Path,
        split: str,
        knowledge: KnowledgeBase,
        limit: int | None = None,
        seed: int = 0,
        seeking_share: float | None = None,
        part: str = "all",
        heldout_share: float = 0.2,
    ):
        if part not in PARTS:
            raise InputError(f"part must be one of {', '.join(PARTS)}, got {part!r}")
        turns = load_turns(Path(root) / split, knowledge)
        if part != "all":
            turns = [x for x in turns if heldout_dialogue(x.history, x.q, heldout_share) == (part == "heldout")]
        self.turns = [replace(x, id=f"dstc11-{split}-{x.id}") for x in seeded_sample(turns, limit, seed)]
        self.seeking = [i for i, t in enumerate(self.turns) if t.knowledge_seeking]
        self.other = [i for i, t in enumerate(self.turns) if not t.knowledge_seeking]
        if not self.turns:
            raise InputError(f"{root}/{split}: no user turns")
        if seeking_share is not None and not 0.0 <= seeking_share <= 1.0:
            raise InputError(f"seeking_share must be in [0, 1], got {seeking_share}")
        self.seeking_share = seeking_share

    def __len__(self) -> int:
        return len(self.turns)

    def dialogue(self, rng: np.random.Generator) -> Replayed:
        """One dialogue (the turns sharing a first utterance), its turns in order of their history's length."""
        if not hasattr(self, "_dialogues"):
            groups: dict[str, list[UserTurn]] = {}
            for t in self.turns:
                groups.setdefault((t.history[0].text if t.history else t.q).strip().lower(), []).append(t)
            self._dialogues = [sorted(g, key=lambda t: len(t.history)) for g in groups.values()]
        return Replayed(self._dialogues[int(rng.integers(len(self._dialogues)))])

    def sample(self, rng: np.random.Generator) -> UserTurn:
        if self.seeking_share is None or not self.seeking or not self.other:
            return self.turns[int(rng.integers(len(self.turns)))]
        pool = self.seeking if rng.random() < self.seeking_share else self.other
        return self.turns[pool[int(rng.integers(len(pool)))]]


def load_chat_seeds(path: str | Path, utterances: int = 2) -> list[list[str]]:
    """BotChat's ChatSEEDs (`MuTual_test_starts.jsonl`: a JSON list of utterances in `conv-GT`), each cut to its
    first `utterances` utterances."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"chat seeds not found: {path}")
    seeds = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            conv = json.loads(json.loads(line)["conv-GT"])
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{n}: not valid JSON: {json_error(exc, n)}") from None
        except (KeyError, TypeError) as exc:
            raise InputError(f"{path}:{n}: not a ChatSEED line ({type(exc).__name__}: {exc})") from None
        if len(conv) >= utterances and all(isinstance(u, str) and u.strip() for u in conv[:utterances]):
            seeds.append([u.strip() for u in conv[:utterances]])
    if not seeds:
        raise InputError(f"{path}: no seed with {utterances} utterances")
    return seeds


# what an assistant says and a customer does not (2 of the 9,205 distinct DSTC11 dev user messages match)
_ASSISTANT_SPEAK = re.compile(
    r"\b(i can(?:not|'?t) (?:assist|help)|as an ai|how (?:can|may) i (?:help|assist)|"
    r"(?:i'?d|i would) be (?:happy|glad) to help|let me (?:look|check|find)|"
    r"i'?ll (?:look|check|find) (?:it|that|for you)|"
    r"what (?:would|do) you (?:like|want|need)|you(?:'re| are) (?:interested|looking)|"
    r"any other questions|based on the information|here(?: i|')s|i'?ll provide|you (?:could|should) consider)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9']+")


def _trigrams(text: str) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


def unusable(text: str, history: Sequence[Utterance], max_words: int = 60) -> str | None:
    """Why a simulated user message cannot be used, or None: empty, too long, the prompt's labels, the assistant's
    words (a refusal, an offer to help), half or more of its word trigrams copied from the assistant's last reply,
    or the same as an earlier user message."""
    words = _WORD.findall(text.lower())
    if not words:
        return "empty"
    if len(words) > max_words:
        return "too long"
    if re.match(r"\s*(user|assistant|customer|chatbot)\s*:", text, re.IGNORECASE) or re.search(
        r"next message|says next|in other words", text, re.IGNORECASE
    ):
        return "prompt labels"
    if _ASSISTANT_SPEAK.search(text):
        return "speaks as the assistant"
    last = next((u.text for u in reversed(history) if u.speaker == "S"), "")
    mine = _trigrams(text)
    if mine and len(mine & _trigrams(last)) >= 0.5 * len(mine):
        return "copies the assistant"
    if any(u.speaker == "U" and _WORD.findall(u.text.lower()) == words for u in history):
        return "repeats an earlier user message"
    return None


class LLMConversation:
    """One simulated conversation: the opening `history`, then a user message per turn. `goals`: what the human
    user of the seed dialogue said next, turn by turn (the simulator's hint, and its fallback); `sources` records
    who wrote each user message (see `LLMUserSimulator.next_message`)."""

    def __init__(
        self, simulator: LLMUserSimulator, name: str, history: list[Utterance], seed: int, goals: Sequence[str] = ()
    ):
        self.sim, self.name, self.history, self.seed, self.turn = simulator, name, history, seed, 0
        self.goals, self.sources = list(goals), []

    def _user_turn(self) -> UserTurn | None:
        goal = self.goals[self.turn] if self.turn < len(self.goals) else None
        text, source = self.sim.next_message(self.history, self.seed + self.turn, goal)
        if not text:
            return None
        self.sources.append(source)
        turn = Turn(f"{self.name}-t{self.turn}", text, list(self.history), knowledge_seeking=False)
        self.history = [*self.history, Utterance(speaker="U", text=text)]
        self.turn += 1
        return turn

    def first(self) -> UserTurn:
        """The first user message; "Hello!" (source "default") when the simulator has none."""
        turn = self._user_turn()
        if turn is None:
            turn = Turn(f"{self.name}-t0", "Hello!", list(self.history), knowledge_seeking=False)
            self.sources.append("default")
            self.history = [*self.history, Utterance(speaker="U", text=turn.q)]
            self.turn += 1
        return turn

    def next(self, response: str) -> UserTurn | None:
        if self.turn >= self.sim.max_turns:
            return None
        self.history = [*self.history, Utterance(speaker="S", text=response)]
        return self._user_turn()


class LLMUserSimulator:
    """The user's side of a conversation, written by an LLM from a seed: the seed's utterances open the dialogue
    (alternating user and assistant, ending with the assistant's so that the user speaks next), then the LLM
    writes each user message (prompt file `user_simulator`, seeded sampling: reproducible and cacheable), up to
    `max_turns` user turns. A message that `unusable` rejects (a small model refusing, speaking as the assistant,
    copying the assistant or repeating itself) or that copies the prompt's example is written again (not under
    greedy decoding, which would write it the same way) with another seed, up to `retries` times; then the
    goal (the human user's own next message, when the seed dialogue has one) is said instead, or the user is done."""

    def __init__(
        self,
        llm,
        seeds: list[list[str]],
        prompt: str = "user_simulator",
        max_turns: int = 3,
        temperature: float = 0.7,
        max_tokens: int = 60,
        retries: int = 2,
        guard: bool = True,
    ):
        if not seeds:
            raise InputError("the LLM user simulator needs at least one seed conversation")
        if max_turns < 1:
            raise InputError(f"max_turns must be at least 1, got {max_turns}")
        if retries < 0:
            raise InputError(f"retries must be at least 0, got {retries}")
        self.llm, self.seeds, self.max_turns, self.retries, self.guard = llm, seeds, max_turns, retries, guard
        self.prompt = PromptTemplate.load(prompt)
        self.temperature, self.max_tokens = temperature, max_tokens

    def __len__(self) -> int:
        return len(self.seeds)

    def _opening(self, seed: list[str]) -> list[Utterance]:
        speakers = ["U", "S"] * len(seed)
        return [Utterance(speaker=sp, text=u) for sp, u in zip(speakers[-len(seed) :], seed)]

    def write(self, history: list[Utterance], seed: int, goal: str | None = None) -> str:
        """One LLM-written user message (its first line, the prompt's labels cut), unchecked."""
        params = SamplingParams(max_tokens=self.max_tokens, temperature=self.temperature, seed=seed)
        messages = self.prompt.render(q="", history=[u.model_dump() for u in history], goal=goal or "")
        raw = self.prompt.cut(self.llm.complete(messages, params).text)
        line = next((ln for ln in raw.splitlines() if ln.strip()), "")
        return line.strip().strip('"').strip()

    def next_message(self, history: list[Utterance], seed: int, goal: str | None = None) -> tuple[str, str]:
        """(the user's next message, who wrote it): "llm" (the first try), "llm_retry" (a later try), "llm_goal" (a
        try that says the goal word for word), "goal" (the human's own next message, after every try was unusable)
        or "none" ("": the user is done). Without `guard`, the first try is the message, whatever it is."""
        if not self.guard:
            text = self.write(history, seed, goal)
            return (text, "llm") if text else ("", "none")
        own = "\n".join([*(u.text for u in history), goal or ""])
        tries = self.retries + 1 if self.temperature > 0 else 1  # greedy decoding: another seed, the same text
        for attempt in range(tries):
            text = self.write(history, seed + 7919 * attempt, goal)
            if unusable(text, history) is None and not self._copies_example(text, own):
                if goal and _WORD.findall(text.lower()) == _WORD.findall(goal.lower()):
                    return text, "llm_goal"
                return text, "llm" if attempt == 0 else "llm_retry"
        if goal and goal.strip():
            return " ".join(goal.split()), "goal"
        return "", "none"

    def _copies_example(self, text: str, own: str) -> bool:
        """Half or more of the message's words are phrases of the prompt's few-shot example that the dialogue and
        the goal do not contain (a generic phrase such as "do you think I need" alone is no copy)."""
        copied = sum(len(phrase.split()) for phrase in fewshot_leaks(text, self.prompt, own))
        return copied >= 0.5 * max(1, len(_WORD.findall(text.lower())))

    def dialogue(self, rng: np.random.Generator) -> LLMConversation:
        i = int(rng.integers(len(self.seeds)))
        return LLMConversation(self, f"chatseed-{i}", self._opening(self.seeds[i]), int(rng.integers(2**31)))

    def sample(self, rng: np.random.Generator) -> UserTurn:
        return self.dialogue(rng).first()
