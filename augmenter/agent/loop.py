"""The agent loop: the Policy picks an action from the Working Memory, the Executor performs it, until the
policy sends or the per-turn budget forces the best candidate out. And a Session over many turns."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from augmenter.agent.executor import Executor
from augmenter.agent.protocols import Callback, Policy, as_policy
from augmenter.errors import CircuitOpenError, LLMError, LLMFatalError
from augmenter.memory import Action, ActionRecord, Snippet, Utterance, WorkingMemory
from augmenter.settings import Positive

EMPTY_REPLY = "It looks like your message was empty. What would you like to know?"
FAILED_REPLY = "Sorry, I cannot answer right now: the language model is unavailable."


class Agent:
    """Runs one user turn.

    Budget: at most `max_llm_calls` LLM calls (of any kind) per turn — once reached, a request for another
    call sends the best candidate instead; a turn without any candidate may still make its first
    response call. At most `max_steps` actions per turn. Invalid choices are replaced, and the trace says so:
    sending with no candidate calls the LLM first (unless the executor can answer in the knowledge's own words:
    `Executor.answers_from_knowledge`); verifying with nothing new to verify sends.
    Queries longer than `max_query_chars` are cut (with a warning in the memory).
    `policy` may be a plain function of the memory; each of `callbacks` is called as `callback(memory, record)`
    after every action (for a UI, logging or streaming); a callback with an `on_text(memory, text)` method also
    gets each response call's reply piece by piece while it is generated (the draft, before any check).
    """

    def __init__(
        self,
        policy: Any,
        executor: Executor,
        max_llm_calls: Positive = 1,
        max_steps: Positive = 12,
        max_query_chars: Positive = 2000,
        callbacks: Sequence[Callback] = (),
    ):
        if max_llm_calls < 1:
            raise ValueError(f"max_llm_calls must be at least 1, got {max_llm_calls}")
        self.policy: Policy = as_policy(policy)
        self.callbacks = list(callbacks)
        self.executor = executor
        self.max_llm_calls = max_llm_calls
        self.max_steps = max_steps
        self.max_query_chars = max_query_chars

    def _admissible(self, action: Action, mem: WorkingMemory) -> tuple[Action, str | None]:
        if action == Action.SEND and not mem.has_candidate and not self.executor.answers_from_knowledge(mem):
            return Action.CALL_LLM, "nothing to send yet: called the LLM first"
        if action == Action.VERIFY_UTILITY and not mem.has_unverified_candidate:
            if not mem.has_candidate:
                return Action.CALL_LLM, "nothing to verify yet: called the LLM first"
            return Action.SEND, "every candidate is verified: sent the best"
        if action in (Action.CALL_LLM, Action.ASK_NEED_KNOWLEDGE) and mem.llm_calls >= self.max_llm_calls:
            if mem.has_candidate:
                return Action.SEND, f"LLM-call budget ({self.max_llm_calls}) reached: send"
            if action == Action.ASK_NEED_KNOWLEDGE:
                return Action.CALL_LLM, f"LLM-call budget ({self.max_llm_calls}) reached: answered directly"
        return action, None

    def respond(
        self, q: str, history: Sequence[Utterance] = (), given: Sequence[Snippet] | None = None
    ) -> WorkingMemory:
        """Answer `q`. `given` hands in the turn's knowledge (gold knowledge): consolidating then uses it
        instead of retrieval (an empty list: no knowledge)."""
        mem = self.begin(q, history, given)
        while not mem.sent:
            start = time.perf_counter()
            requested = self.policy.next_action(mem)
            self.act(mem, requested, policy_seconds=time.perf_counter() - start)
        return mem

    def begin(self, q: str, history: Sequence[Utterance] = (), given: Sequence[Snippet] | None = None) -> WorkingMemory:
        """A new turn's Working Memory, observed (entities linked). An empty `q` is answered at once."""
        text = (q or "").strip()
        mem = WorkingMemory(q=text, h_q=list(history), given=None if given is None else list(given))
        if not text:
            mem.response = EMPTY_REPLY
            mem.warnings.append("empty utterance: answered without calling the LLM")
            return mem
        if len(text) > self.max_query_chars:
            mem.q = text[: self.max_query_chars]
            mem.warnings.append(f"utterance of {len(text)} characters cut to {self.max_query_chars}")
        self.executor.observe(mem)
        return mem

    def act(self, mem: WorkingMemory, requested: Action, policy_seconds: float = 0.0) -> bool:
        """One policy decision (replaced when inadmissible, see the class docstring); True once the turn is
        over. The `max_steps`-th decision ends the turn: the best candidate is sent (after a first LLM call
        if there is none)."""
        if mem.sent:
            return True
        action, note = self._admissible(requested, mem)
        if self._step(mem, action, note, requested, policy_seconds):
            return True
        if len(mem.trace) >= self.max_steps:
            note = f"step budget ({self.max_steps}) reached"
            if not mem.has_candidate and self._step(mem, Action.CALL_LLM, note):  # the first call is always allowed
                return True
            self._step(mem, Action.SEND, note)
        return mem.sent

    def _step(
        self,
        mem: WorkingMemory,
        action: Action,
        note: str | None = None,
        requested: Action | None = None,
        policy_seconds: float = 0.0,
    ) -> bool:
        """Execute one action and record it; True once the turn is over (sent, or the LLM failed)."""
        try:
            sink = self._text_sink(mem) if action == Action.CALL_LLM else None
            record = self.executor.execute(action, mem, on_text=sink) if sink else self.executor.execute(action, mem)
        except (LLMFatalError, CircuitOpenError):
            raise  # not this turn's failure: the caller stops (fatal) or pauses (breaker open)
        except LLMError as exc:
            self._record(mem, ActionRecord(action=action, note=f"failed: {exc}"))
            mem.warnings.append(str(exc))
            if mem.has_candidate:  # send what may be sent (never a candidate a check failed or did not clear)
                self._record(mem, self.executor.execute(Action.SEND, mem))
            if not mem.has_candidate or (mem.outcome == "abstained" and not any(mem.checks)):
                mem.response, mem.outcome = FAILED_REPLY, "failed"
            return True
        record.policy_seconds = policy_seconds
        if requested is not None and requested != action:
            record.requested = requested
        if note:
            record.note = f"{note}; {record.note}" if record.note else note
        self._record(mem, record)
        return mem.sent

    def _text_sink(self, mem: WorkingMemory) -> Callable[[str], None] | None:
        """What a response call streams its reply to: every callback's `on_text` (None: no callback streams)."""
        streams = [cb.on_text for cb in self.callbacks if callable(getattr(cb, "on_text", None))]
        if not streams:
            return None

        def sink(text: str) -> None:
            for stream in streams:
                stream(mem, text)

        return sink

    def _record(self, mem: WorkingMemory, record: ActionRecord) -> None:
        mem.trace.append(record)
        for callback in self.callbacks:
            callback(mem, record)


class Session:
    """A conversation: keeps h_q and every turn's Working Memory."""

    def __init__(self, agent: Agent, history: Sequence[Utterance] = ()):
        self.agent = agent
        self.history: list[Utterance] = list(history)
        self.turns: list[WorkingMemory] = []

    def say(self, utterance: str) -> WorkingMemory:
        mem = self.agent.respond(utterance, self.history)
        self.turns.append(mem)
        if mem.q:
            self.history += [Utterance(speaker="U", text=mem.q), Utterance(speaker="S", text=mem.response or "")]
        return mem
