"""What the agent needs from its parts: a Policy, a Consolidator, a Utility, and a knowledge kind's own ways of
answering (a Composer, or ReplyComposer for its replies alone), each a small protocol.

Plain functions work where a protocol is a single call: `as_policy(fn)` turns `fn(memory) -> Action | str` into a
Policy, and a utility is any callable `(memory, candidate)` returning a `UtilityResult`, a `(score, feedback)`
pair or a bare score (which always passes); `utility_result` reads any of them. What sending relies on besides the
score, a utility declares as a `Check` (`checks_claims`, `on_topic`); `as_check` gives a plain function the paper's
rule (it checks no claims: the best-scored candidate is sent, passed or not), and `Checked(fn, checks_claims=True)`
the claims utility's (a candidate it fails is never sent).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from augmenter.memory import Action, ClaimCheck, EntityMention, Outcome, Snippet, Utterance, WorkingMemory
from augmenter.utilities.scorers import (  # noqa: F401 (part of this module's API)
    Check,
    Checked,
    UtilityResult,
    as_check,
    utility_result,
)


@runtime_checkable
class Policy(Protocol):
    """Chooses the next action from the Working Memory."""

    def next_action(self, mem: WorkingMemory) -> Action: ...


@runtime_checkable
class Consolidator(Protocol):
    """The Knowledge Consolidator: links the entities q and h_q mention, then retrieves the top-k evidence."""

    k: int

    def link(self, q: str, history: Sequence[Utterance]) -> list[EntityMention]: ...

    def retrieve(
        self, q: str, history: Sequence[Utterance], entities: Sequence[EntityMention]
    ) -> tuple[str, list[Snippet]]: ...


class ComposedReply(Protocol):
    """What a Composer sends: the text, how it came about, the candidate sent (None: none was) and its claims."""

    @property
    def text(self) -> str: ...

    @property
    def outcome(self) -> Outcome: ...

    @property
    def index(self) -> int | None: ...

    @property
    def claims(self) -> list[ClaimCheck]: ...


class Composer(Protocol):
    """How one kind of knowledge is answered from (e.g. `augmenter.documents.DocumentComposer`): the evidence the
    prompt carries (after retrieval), the drafting prompt, how likely a draft is to refuse (the executor scores the
    prompt's first token before the turn's first draft: `mem.signals["refusal"]`), the check of a draft and the
    reply sent. The builder takes it from the knowledge base (`knowledge.composer()`)."""

    prompt: Any  # its PromptTemplate: `cut` trims a draft to the reply

    def gather(self, mem: WorkingMemory, consolidator: Consolidator) -> tuple[str, list[Snippet]]: ...

    def messages(self, mem: WorkingMemory) -> list[dict]: ...

    def refusal(self, top_logprobs: dict[str, float]) -> float: ...  # P(the draft refuses), from its first token

    def check(self, mem: WorkingMemory, candidate: str) -> UtilityResult: ...

    def reply(self, mem: WorkingMemory) -> ComposedReply: ...


class ReplyComposer(Protocol):
    """A knowledge kind's replies in its own words on the executor's own path (no `Composer`), e.g.
    `augmenter.reviews.ReviewReplies` for FAQs and reviews; the builder makes it for the knowledge it builds.
    Each reply has `.text`, `.claims` (its citations: supported claims resting on snippets), `.note` and `.outputs`
    (what the turn's trace records of it)."""

    def answers(self, mem: WorkingMemory) -> bool: ...  # whether `answer` would write one (no LLM call)

    def answer(self, mem: WorkingMemory) -> Any | None: ...  # the answer when no candidate may be sent, or None

    # a candidate that may be sent, re-said where its checked claims rest on the knowledge; None: sent as written
    def quote(self, mem: WorkingMemory, checks: Sequence[ClaimCheck]) -> Any | None: ...


class Utility(Protocol):
    """Scores a candidate of the turn and writes the feedback that revises the prompt (None: it passes)."""

    def __call__(self, mem: WorkingMemory, candidate: str) -> UtilityResult: ...


class FunctionPolicy:
    """A plain function `fn(memory) -> Action | action name` as a Policy."""

    def __init__(self, fn: Callable[[WorkingMemory], Any]):
        self.fn = fn

    def next_action(self, mem: WorkingMemory) -> Action:
        choice = self.fn(mem)
        try:
            return Action(choice)
        except ValueError:
            raise ValueError(
                f"policy function returned {choice!r}; actions: {', '.join(a.value for a in Action)}"
            ) from None


def as_policy(policy: Any) -> Policy:
    """`policy` if it has `next_action`, a FunctionPolicy if it is a plain callable."""
    if hasattr(policy, "next_action"):
        return policy
    if callable(policy):
        return FunctionPolicy(policy)
    raise TypeError(f"a policy has next_action(memory) or is a function of the memory, got {type(policy).__name__}")


Callback = Callable[[WorkingMemory, Any], None]  # (memory, the ActionRecord just taken): for a UI, logging, streaming
# A callback may also have `on_text(memory, text)`: each response call's reply, piece by piece, as it is generated.
OptionalCallbacks = Sequence[Callback] | None
