"""A pool of agents that answer turns for the server, one turn per agent at a time.

All agents share one LLM backend chain (one embedded model, one cache, one circuit breaker), each behind its own
usage meter, so a turn's trace counts only its own calls. With `workers=1` (the embedded model) turns queue up
FIFO; a server backend can answer several at once. Each agent carries a `Relay` callback that hands the turn's
events (the streamed draft, each action) to whoever holds the agent now.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from augmenter.memory import Utterance, WorkingMemory
from augmenter.redact import redact
from augmenter.serve.summary import action_summary

log = logging.getLogger(__name__)
Event = tuple[str, dict]  # ("draft", {"candidate", "text"}) | ("action", action_summary)
EventSink = Callable[[Event], None]


class Busy(Exception):
    """Too many requests are waiting for an agent."""


class Abandoned(Exception):
    """The client went away while its turn waited: the turn was not run."""


class Relay:
    """A pooled agent's callback: forwards the draft and each action to the current request's sink."""

    def __init__(self) -> None:
        self.target: EventSink | None = None

    def __call__(self, mem: WorkingMemory, record: Any) -> None:
        if self.target is not None:
            self.target(("action", action_summary(record, len(mem.trace))))

    def on_text(self, mem: WorkingMemory, text: str) -> None:
        if self.target is not None:
            self.target(("draft", {"candidate": len(mem.o), "text": text}))


@dataclass
class TurnResult:
    memory: WorkingMemory
    queue_seconds: float
    seconds: float


class AgentPool:
    """`build(callbacks)` makes one agent; `workers` of them answer, at most `max_queue` requests wait."""

    def __init__(
        self,
        build: Callable[[Sequence[Any]], Any],
        workers: int = 1,
        max_queue: int = 64,
        model: str = "augmenter",
        llm: str = "",
    ):
        self._build, self.workers, self.max_queue = build, workers, max_queue
        self.model, self.llm = model, llm
        self.state, self.error = "loading", ""
        self._free: list[tuple[Any, Relay]] = []
        self._waiters: collections.deque = collections.deque()  # (loop, future) in arrival order
        self._lock = threading.Lock()
        self._tasks: set[asyncio.Task] = set()
        self.busy = 0

    def build(self) -> AgentPool:
        """Build every agent now (errors propagate: the CLI shows them as one line), its retrieval index too."""
        try:
            for _ in range(self.workers):
                relay = Relay()
                agent = self._build([relay])
                _warm_retrieval(agent)
                self._free.append((agent, relay))
        except BaseException as exc:
            self.state, self.error = "failed", str(exc)
            raise
        self.state = "ready"
        return self

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    async def _acquire(self) -> tuple[Any, Relay]:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._free:
                self.busy += 1
                return self._free.pop()
            if len(self._waiters) >= self.max_queue:
                raise Busy(f"the server is busy: {len(self._waiters)} requests are waiting; retry later")
            future = loop.create_future()
            self._waiters.append((loop, future))
        try:
            return await future
        except asyncio.CancelledError:
            with self._lock:
                if (loop, future) in self._waiters:
                    self._waiters.remove((loop, future))
            if future.done() and not future.cancelled():
                self._release(future.result())  # handed over as it was cancelled: pass it on
            raise

    def _release(self, held: tuple[Any, Relay]) -> None:
        with self._lock:
            while self._waiters:
                loop, future = self._waiters.popleft()
                if not future.done() and not loop.is_closed():
                    loop.call_soon_threadsafe(self._hand, future, held)
                    return
            self.busy -= 1
            self._free.append(held)

    def _hand(self, future: asyncio.Future, held: tuple[Any, Relay]) -> None:
        if future.done():  # its request was cancelled meanwhile: pass the agent on
            self._release(held)
        else:
            future.set_result(held)

    def check_capacity(self) -> None:
        """Raise Busy when a new request would have to wait and the queue is full."""
        with self._lock:
            if not self._free and len(self._waiters) >= self.max_queue:
                raise Busy(f"the server is busy: {len(self._waiters)} requests are waiting; retry later")

    async def answer(
        self,
        question: str,
        history: Sequence[Utterance],
        on_event: EventSink | None = None,
        abandoned: threading.Event | None = None,
    ) -> TurnResult:
        """Answer one turn on a free agent (waiting for one in turn), in a worker thread."""
        import anyio.to_thread

        start = time.perf_counter()
        held = await self._acquire()
        queued = time.perf_counter() - start
        try:
            if abandoned is not None and abandoned.is_set():
                raise Abandoned("the client went away before its turn began")
            # not abandoned when this coroutine is cancelled: the agent is released only once the turn is over
            mem, seconds = await anyio.to_thread.run_sync(self._turn, held, question, list(history), on_event)
        finally:
            self._release(held)
        return TurnResult(mem, queued, seconds)

    def start(
        self,
        question: str,
        history: Sequence[Utterance],
        on_event: EventSink | None = None,
        abandoned: threading.Event | None = None,
    ) -> asyncio.Task:
        """`answer` as a task of its own, so that a client going away does not cut the turn short."""
        task = asyncio.get_running_loop().create_task(self.answer(question, history, on_event, abandoned))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    @staticmethod
    def _turn(
        held: tuple[Any, Relay], question: str, history: list[Utterance], on_event: EventSink | None
    ) -> tuple[WorkingMemory, float]:
        agent, relay = held
        relay.target = on_event
        start = time.perf_counter()
        try:
            return agent.respond(question, history), time.perf_counter() - start
        finally:
            relay.target = None


def _warm_retrieval(agent: Any) -> None:
    """One search, so that the retriever builds its index now rather than in the first user's turn."""
    consolidator = getattr(getattr(agent, "executor", None), "consolidator", None)
    if consolidator is None:
        return
    try:
        consolidator.retrieve("hello", (), [])
    except Exception as exc:  # a warm-up only: the first turn will say what is wrong
        log.warning("warming up retrieval failed: %s", redact(str(exc)))


def pool_from_config(cfg, workers: int = 1, max_queue: int = 64, llm: Any = None) -> AgentPool:
    """A pool of `workers` agents built from a composed config, sharing one backend chain (`llm`, an LLM backend
    such as a FakeLLM, replaces the configured one). Not built yet: call `.build()`."""
    from augmenter.config import build_agent, build_llm
    from augmenter.llm import MeteredLLM
    from augmenter.llm.base import identity_of

    configured = build_llm(cfg)  # the backend chain and the sampling parameters (no model loads yet)
    backend, params = llm if llm is not None else configured.llm, configured.params

    def build(callbacks):
        return build_agent(cfg, llm=MeteredLLM(backend, params), callbacks=callbacks)

    return AgentPool(build, workers, max_queue, llm=identity_of(backend))


def warm_up(cfg) -> None:
    """Load the claim verifier's sentence encoder now, so that the first question does not wait for it."""
    utility = str(cfg.get("utility", {}).get("_target_", ""))
    verifier = str((cfg.get("verifier") or {}).get("_target_", ""))
    if utility.endswith("ClaimsUtility") and verifier.endswith(("FastVerifier", "CombinedVerifier")):
        from augmenter.verification.encoder import embed, minilm_path

        if minilm_path() is not None:
            embed(["warm-up"])
