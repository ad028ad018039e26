"""The Working Memory: the dialogue state (q, e, o, u, f, h_q) of the paper's section 2.1, plus the turn's trace."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, Field


class Action(str, Enum):
    """What the policy can ask the executor to do (paper section 2.2, plus self-ask)."""

    CONSOLIDATE_KNOWLEDGE = "consolidate_knowledge"
    CALL_LLM = "call_llm"
    VERIFY_UTILITY = "verify_utility"
    SEND = "send"
    ASK_NEED_KNOWLEDGE = "ask_need_knowledge"  # self-ask: the LLM says whether it needs external knowledge


# How a turn's reply came about: `WorkingMemory.outcome`, and the `outcome` of eval records and served summaries.
#   "answered"  a candidate the LLM drafted was sent as it is;
#   "quoted"    the knowledge's own words were sent, quoted (the knowledge's answer or sentences, a document's
#               passage, or a candidate's claims replaced by the sentences of knowledge they rest on);
#   "partial"   no candidate passed the check: only the supported claims of the best one were sent;
#   "abstained" nothing found answers the question for sure: the reply says so (with the best evidence found, or
#               what contradicts the candidate) instead of guessing;
#   "failed"    the LLM failed on this turn and nothing could be sent: a fixed apology was.
Outcome = Literal["answered", "quoted", "partial", "abstained", "failed"]


class Utterance(BaseModel):
    """One turn of dialogue history. `speaker` follows DSTC11: "U" for the user, "S" for the system."""

    speaker: Literal["U", "S"]
    text: str


class Location(BaseModel):
    """Where a passage of a user's document sits: the file (relative to the indexed folder), the page (PDFs, from
    1), the heading path (the document's title, then its headings) and the passage's own character span (its first
    word's first character to its last word's last), in the document's text as read (the page's text for a PDF)."""

    path: str
    page: int | None = None
    heading: list[str] = Field(default_factory=list)
    start: int | None = None
    end: int | None = None

    def label(self) -> str:
        """How a citation names it, e.g. `policies/travel.pdf, page 2, Travel Policy > Per Diem`."""
        parts = [self.path]
        if self.page is not None:
            parts.append(f"page {self.page}")
        if self.heading:
            parts.append(" > ".join(self.heading))
        return ", ".join(parts)


@dataclass(frozen=True)
class KnowledgeKind:
    """What a kind of knowledge (the `doc_type` of its snippets) declares to the generic state. `label`: what its
    snippets show before their text in a prompt (None: nothing, the text alone). `answers`: whether a snippet of it
    is the knowledge's own answer to the question (`WorkingMemory.knowledge_answers`; None: never)."""

    label: Callable[[Snippet], str] | None = None
    answers: Callable[[Snippet], bool] | None = None


# The kinds of knowledge declared by the rooms that own them (`register_kind`), by doc_type; a snippet of a kind
# no room declared shows its text alone.
KINDS: dict[str, KnowledgeKind] = {}


def register_kind(doc_type: str, kind: KnowledgeKind) -> None:
    """Declare what snippets of `doc_type` show and whether one answers the question (see KnowledgeKind); the room
    that owns the kind calls it on import."""
    KINDS[doc_type] = kind


class Snippet(BaseModel):
    """One piece of knowledge: a snippet of a knowledge base (`doc_type` names its kind, see KINDS), or a user's own
    passage (with its `location`)."""

    id: str
    text: str
    domain: str | None = None
    entity_id: int | str | None = None
    entity_name: str | None = None
    doc_type: str | None = None  # the kind of knowledge (a kind in KINDS, or free text)
    doc_id: int | str | None = None
    sent_id: int | None = None
    score: float | None = None  # retrieval score, when it came from a retriever
    context: list[str] = Field(default_factory=list)  # linked context (the evidence linker's), shown after the text
    stance: str | None = None  # its stance on the question's aspect (positive, negative, neutral), where read
    location: Location | None = None  # a document chunk's file, page, headings and span (augmenter.documents)

    def render(self) -> str:
        """The snippet as the prompt shows it: `[ENTITY NAME] `, the label its kind declares (see KnowledgeKind), the
        text, then each linked context in parentheses."""
        prefix = f"[{self.entity_name}] " if self.entity_name else ""
        kind = KINDS.get(self.doc_type or "")
        label = kind.label(self) if kind is not None and kind.label is not None else ""
        linked = "".join(f" ({c})" for c in self.context)
        return f"{prefix}{label}{self.text}{linked}"


class Verdict(str, Enum):
    """A claim's verdict against the evidence (WikiChat's and FEVER's three labels)."""

    SUPPORTED = "supported"
    REFUTED = "refuted"
    NOT_ENOUGH_INFO = "not_enough_info"


class EvidenceRef(BaseModel):
    """The evidence a claim was judged against: a snippet id and the sentence of it that matched best; for a
    document's passage also its location and the whole passage the sentence was quoted from."""

    id: str
    text: str
    similarity: float | None = None
    location: Location | None = None
    passage: str | None = None

    @property
    def quote(self) -> str:
        """The quoted sentence without the title and headings the evidence puts in front (`location` names them)."""
        prefix = f"[{' > '.join(self.location.heading)}] " if self.location and self.location.heading else ""
        return self.text[len(prefix) :] if prefix and self.text.startswith(prefix) else self.text


class ClaimCheck(BaseModel):
    """One atomic claim of a candidate, its verdict, how sure the verifier is, and the evidence it cites."""

    claim: str
    verdict: Verdict
    p_supported: float  # the verifier's probability that the evidence supports the claim
    evidence: list[EvidenceRef] = Field(default_factory=list)  # best first; the citations of a supported claim
    reason: str | None = None  # e.g. "the evidence says 15, the claim 12"

    @property
    def supported(self) -> bool:
        return self.verdict == Verdict.SUPPORTED

    def cited(self, within: float = 0.1) -> list[EvidenceRef]:
        """The evidence the claim cites: its best, and the second when within `within` of the best similarity."""
        best = self.evidence[0].similarity if self.evidence and self.evidence[0].similarity is not None else None
        return [r for r in self.evidence[:2] if best is None or r.similarity is None or r.similarity >= best - within]


class EntityMention(BaseModel):
    """A knowledge-base entity found in the query or the history."""

    domain: str | None = None
    entity_id: int | str
    name: str
    surface: str  # the text that matched
    in_query: bool  # found in q (True) or only in h_q (False)


class ActionRecord(BaseModel):
    """One step of the turn: what was done, with what, what came out, and what it cost."""

    action: Action
    requested: Action | None = None  # the policy's choice, when the loop had to replace it
    note: str | None = None
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
    f: list[str | None] = Field(default_factory=list)
    h_q: list[Utterance] = Field(default_factory=list)
    checks: list[list[ClaimCheck]] = Field(default_factory=list)  # per verified candidate: its claims ([] unchecked)

    given: list[Snippet] | None = None  # knowledge handed in with the turn (e.g. gold knowledge in evaluation)
    entities: list[EntityMention] = Field(default_factory=list)
    needs_knowledge: bool | None = None  # the self-ask answer, when asked
    consolidated: bool = False  # whether the knowledge consolidator ran this turn
    trace: list[ActionRecord] = Field(default_factory=list)
    response: str | None = None  # what was sent to the user
    sent_index: int | None = None  # which candidate was sent (None: an "I don't know" or a composed reply)
    outcome: Outcome | None = None  # how the reply came about (see Outcome); None until one is sent
    sent_claims: list[ClaimCheck] = Field(default_factory=list)  # the claims of a composed (partial) reply
    signals: dict[str, float] = Field(default_factory=dict)  # scores read off the LLM this turn, e.g. "refusal": the
    # probability that the drafting prompt's answer starts with its refusal marker
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
    def knowledge_answers(self) -> bool:
        """The evidence holds the knowledge's own answer to the question: a snippet its kind says answers it (see
        KnowledgeKind.answers)."""
        for s in self.e:
            kind = KINDS.get(s.doc_type or "")
            if kind is not None and kind.answers is not None and kind.answers(s):
                return True
        return False

    @property
    def has_unverified_candidate(self) -> bool:
        return len(self.u) < len(self.o)

    @property
    def last_utility(self) -> float | None:
        return self.u[-1] if self.u else None

    @property
    def feedback(self) -> str | None:
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

    def contradicts(self, i: int) -> bool:
        """Whether a verified claim of candidate i is refuted by the knowledge."""
        return i < len(self.checks) and any(c.verdict == Verdict.REFUTED for c in self.checks[i])

    def verdict_counts(self, i: int) -> dict[Verdict, int]:
        """How many claims of candidate i got each verdict (all zero when it was not claim-checked)."""
        checks = self.checks[i] if i < len(self.checks) else []
        return {v: sum(c.verdict == v for c in checks) for v in Verdict}

    @property
    def claims_supported(self) -> bool:
        """The latest verified candidate was claim-checked and every claim of it is supported."""
        return bool(self.checks and self.checks[-1]) and all(c.supported for c in self.checks[-1])

    @property
    def contradicted(self) -> bool:
        """The latest verified candidate has a claim the knowledge contradicts."""
        return bool(self.u) and self.contradicts(len(self.u) - 1)

    def best_index(self, select: str = "best") -> int | None:
        """The candidate to send: "best" = the verified one with the highest utility (latest wins ties), else the
        latest; "latest" = the last one. A candidate with a refuted claim is never chosen (None if all are)."""
        allowed = [i for i in range(len(self.o)) if not self.contradicts(i)]
        if not allowed:
            return None
        if select == "latest":
            return allowed[-1]
        verified = [i for i in allowed if i < len(self.u)]
        if not verified:
            return allowed[-1]
        return max(verified, key=lambda i: (self.u[i], i))

    def best_candidate(self) -> str | None:
        i = self.best_index()
        return None if i is None else self.o[i]

    def choose(self, select: str = "best") -> str | None:
        """The candidate text to send (see best_index)."""
        i = self.best_index(select)
        return None if i is None else self.o[i]

    def add_candidate(self, text: str) -> None:
        self.o.append(text)

    def add_verdict(self, score: float, feedback: str | None, checks: list[ClaimCheck] | None = None) -> None:
        if not self.has_unverified_candidate:
            raise ValueError("no unverified candidate to score")
        self.u.append(float(score))
        self.f.append(feedback)
        self.checks.append(list(checks or []))

    @property
    def citations(self) -> list[ClaimCheck]:
        """The supported claims of the sent response with their evidence (empty when nothing was checked)."""
        if self.sent_index is None or self.sent_index >= len(self.checks) or not self.checks[self.sent_index]:
            return [c for c in self.sent_claims if c.supported]
        return [c for c in self.checks[self.sent_index] if c.supported]

    def sources(self) -> tuple[list[EvidenceRef], list[tuple[str, list[int]]]]:
        """The sent response's sources, numbered from 1 in order of first use, and each supported claim with the
        numbers of its sources (the evidence it was judged on that is best, or within 0.1 of the best similarity)."""
        sources: list[EvidenceRef] = []
        position: dict[tuple[str, str], int] = {}
        claims = []
        for check in self.citations:
            numbers = []
            for ref in check.cited():
                key = (ref.id, ref.text)
                if key not in position:
                    sources.append(ref)
                    position[key] = len(sources)
                numbers.append(position[key])
            claims.append((check.claim, numbers))
        return sources, claims

    def citation_records(self) -> list[dict]:
        """The citations as JSON: each supported claim of the sent response with its sources' snippet ids (and,
        for a document's passages, `where` each is: file, page, headings)."""
        sources, claims = self.sources()
        records = []
        for claim, numbers in claims:
            cited = [sources[n - 1] for n in numbers]
            record = {"claim": claim, "sources": [s.id for s in cited]}
            if any(s.location for s in cited):
                record["where"] = [s.location.label() if s.location else s.id for s in cited]
            records.append(record)
        return records

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
    def from_json(cls, text: str) -> WorkingMemory:
        return cls.model_validate_json(text)
