"""The Working Memory: the dialogue state (q, e, o, u, f, h_q) of the paper's section 2.1, plus the turn's trace."""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field


class Action(str, Enum):
    """What the policy can ask the executor to do (paper section 2.2, plus self-ask)."""

    CONSOLIDATE_KNOWLEDGE = "consolidate_knowledge"
    CALL_LLM = "call_llm"
    VERIFY_UTILITY = "verify_utility"
    SEND = "send"
    ASK_NEED_KNOWLEDGE = "ask_need_knowledge"  # self-ask: the LLM says whether it needs external knowledge


class Utterance(BaseModel):
    """One turn of dialogue history. `speaker` follows DSTC11: "U" for the user, "S" for the system."""

    speaker: Literal["U", "S"]
    text: str


class Snippet(BaseModel):
    """One piece of knowledge: a FAQ, a review sentence, or a user's own passage."""

    id: str
    text: str
    domain: Optional[str] = None
    entity_id: Optional[int | str] = None
    entity_name: Optional[str] = None
    doc_type: Optional[str] = None  # "faq", "review" or free text
    doc_id: Optional[int | str] = None
    sent_id: Optional[int] = None
    score: Optional[float] = None  # retrieval score, when it came from a retriever
    context: list[str] = Field(default_factory=list)  # linked context (the evidence linker's), shown after the text

    def render(self) -> str:
        """The snippet as the prompt shows it, e.g. `[GONVILLE HOTEL] Review: The beds were comfy.`"""
        prefix = f"[{self.entity_name}] " if self.entity_name else ""
        kind = {"faq": "", "review": "Review: "}.get(self.doc_type or "", "")
        linked = "".join(f" ({c})" for c in self.context)
        return f"{prefix}{kind}{self.text}{linked}"


class EntityMention(BaseModel):
    """A knowledge-base entity found in the query or the history."""

    domain: Optional[str] = None
    entity_id: int | str
    name: str
    surface: str  # the text that matched
    in_query: bool  # found in q (True) or only in h_q (False)


class ActionRecord(BaseModel):
    """One step of the turn: what was done, with what, what came out, and what it cost."""

    action: Action
    requested: Optional[Action] = None  # the policy's choice, when the loop had to replace it
    note: Optional[str] = None
    inputs: dict[str, Any] = Field(default_factory=dict)
    outputs: dict[str, Any] = Field(default_factory=dict)
    seconds: float = 0.0  # time spent executing the action
    policy_seconds: float = 0.0  # time the policy took to choose it
    llm_calls: int = 0
    llm_cached_calls: int = 0  # of llm_calls, answered by the LLM cache (they cost no time)
    llm_seconds: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class WorkingMemory(BaseModel):
    """State of one user turn: q, e, o, u, f, h_q (paper section 2.1) and the trace of actions taken.

    `o`, `u` and `f` are parallel lists: candidate i has utility `u[i]` and feedback `f[i]` once verified
    (`f[i]` is None when the candidate passed). Unverified candidates have no entry yet.
    """

    q: str
    e: list[Snippet] = Field(default_factory=list)
    o: list[str] = Field(default_factory=list)
    u: list[float] = Field(default_factory=list)
    f: list[Optional[str]] = Field(default_factory=list)
    h_q: list[Utterance] = Field(default_factory=list)

    given: Optional[list[Snippet]] = None  # knowledge handed in with the turn (e.g. gold knowledge in evaluation)
    entities: list[EntityMention] = Field(default_factory=list)
    needs_knowledge: Optional[bool] = None  # the self-ask answer, when asked
    consolidated: bool = False  # whether the knowledge consolidator ran this turn
    trace: list[ActionRecord] = Field(default_factory=list)
    response: Optional[str] = None  # what was sent to the user
    warnings: list[str] = Field(default_factory=list)
    overhead_seconds: dict[str, float] = Field(default_factory=dict)  # non-action work, e.g. entity linking

    # ---- helpers every action and policy reads -------------------------------------------------------
    @property
    def has_evidence(self) -> bool:
        return bool(self.e)

    @property
    def has_candidate(self) -> bool:
        return bool(self.o)

    @property
    def has_unverified_candidate(self) -> bool:
        return len(self.u) < len(self.o)

    @property
    def last_utility(self) -> Optional[float]:
        return self.u[-1] if self.u else None

    @property
    def feedback(self) -> Optional[str]:
        """The feedback the next prompt should carry: that of the latest verified candidate."""
        return self.f[-1] if self.f else None

    @property
    def sent(self) -> bool:
        return self.response is not None

    def count(self, action: Action) -> int:
        return sum(1 for r in self.trace if r.action == action)

    @property
    def llm_calls(self) -> int:
        return sum(r.llm_calls for r in self.trace)

    @property
    def prompt_tokens(self) -> int:
        return sum(r.prompt_tokens for r in self.trace)

    @property
    def completion_tokens(self) -> int:
        return sum(r.completion_tokens for r in self.trace)

    @property
    def wall_seconds(self) -> float:
        return sum(r.seconds + r.policy_seconds for r in self.trace) + sum(self.overhead_seconds.values())

    @property
    def non_llm_seconds(self) -> float:
        """Time outside the LLM: retrieval, linking, utility, policy."""
        return self.wall_seconds - sum(r.llm_seconds for r in self.trace)

    def best_candidate(self) -> Optional[str]:
        """The verified candidate with the highest utility (latest wins ties), else the latest candidate."""
        if not self.o:
            return None
        if not self.u:
            return self.o[-1]
        best = max(range(len(self.u)), key=lambda i: (self.u[i], i))
        return self.o[best]

    def choose(self, select: str = "best") -> Optional[str]:
        """The candidate to send: "best" by utility (see best_candidate) or simply the "latest"."""
        if select == "latest":
            return self.o[-1] if self.o else None
        return self.best_candidate()

    def add_candidate(self, text: str) -> None:
        self.o.append(text)

    def add_verdict(self, score: float, feedback: Optional[str]) -> None:
        if not self.has_unverified_candidate:
            raise ValueError("no unverified candidate to score")
        self.u.append(float(score))
        self.f.append(feedback)

    def evidence_text(self) -> str:
        """All evidence as one string, for utilities such as Knowledge F1."""
        return " ".join(s.text for s in self.e)

    def summary(self) -> dict[str, Any]:
        """Cost figures of the turn."""
        return {
            "llm_calls": self.llm_calls,
            "cached_llm_calls": sum(r.llm_cached_calls for r in self.trace),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "wall_seconds": round(self.wall_seconds, 4),
            "non_llm_seconds": round(self.non_llm_seconds, 4),
            "knowledge_calls": self.count(Action.CONSOLIDATE_KNOWLEDGE),
        }

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str) -> "WorkingMemory":
        return cls.model_validate_json(text)
