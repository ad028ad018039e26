"""How answers are made from a folder of documents: the evidence the prompt carries, the drafting prompt, the check
of a draft and the reply sent (the executor's `Composer` for `knowledge=docs`).

1. Retrieval: the question, and each of its parts when it asks two things, searched over the whole folder (a word
   of the question that is a document's title no longer confines the search to that document, unless
   `focus_titles`); the rankings interleaved, `chunks` in all.
2. The passages that answer (`PassageSelector`): a few sentences or code blocks, not whole chunks.
3. A prompt of its own (`prompt`, the packaged `documents`): short, no examples, the answer first, a marker when
   the passages do not answer. Before the draft, one scoring pass of the same prompt (its KV cache is then reused by
   the draft) reads how likely the answer starts with that marker (`mem.signals["refusal"]`).
4. The check (`DocumentCheck`): every number, piece of code and name of the draft in the passages; its yes/no
   agreeing with theirs.
5. The reply (`augmenter.documents.replies`): a draft that passes, then the passage it rests on, quoted, with its
   file and section; a draft that fails: "not found" with the closest passage (with `min_quote_score`, the passage
   it rests on in its own words when that scores at least this much: on the development questions the drafts that
   fail were mostly made-up values for questions the documents do not answer, so it is off by default); a draft that
   refuses: "not found".
   A question asked for a yes or a no is answered by the passage that settles it, quoted (the embedded model says
   "yes" to nearly every such question the documents answer with "no"), unless the refusal probability reaches
   `max_refusal`: then "not found".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from augmenter.documents.check import DocumentCheck, refuses
from augmenter.documents.passages import Idf, PassageSelector
from augmenter.documents.replies import answered, cited, from_passage, not_found, plain, quote
from augmenter.knowledge.ranking import interleave
from augmenter.memory import ClaimCheck, Outcome, Snippet, WorkingMemory
from augmenter.prompts.engine import PromptTemplate
from augmenter.settings import Positive, Share
from augmenter.text import is_yes_no

_PARTS = re.compile(
    r"\?\s+|;\s+|,?\s+(?:and|or|also)\s+(?=(?:what|how|which|where|when|who|why|is|are|does|do|can|"
    r"should|will|would|could|must)\b)",
    re.IGNORECASE,
)


def question_parts(question: str, min_words: int = 3) -> list[str]:
    """The parts of a question that asks two things ("How do I set a timeout, and what is the default?"), each of
    at least `min_words` words; [question] when it asks one."""
    parts = [p.strip(" ,?") for p in _PARTS.split(question) if len(p.split()) >= min_words]
    return parts if len(parts) > 1 else [question]


@dataclass
class Reply:
    """What is sent: the text, how it came about, the candidate sent (if one was) and its citations."""

    text: str
    outcome: Outcome  # "answered", "quoted" or "abstained"
    index: int | None = None
    claims: list[ClaimCheck] = field(default_factory=list)


class DocumentComposer:
    """See the module docstring. `idf`: the folder's word weights for the passage selector."""

    refusal_marker = ("NOT", "Not")  # the first tokens of the prompt's "NOT FOUND"

    def __init__(
        self,
        idf: Idf | None = None,
        prompt: str = "documents",
        chunks: Positive = 6,
        passages: Positive = 3,
        max_passage_words: Positive = 160,
        split_questions: bool = True,
        focus_titles: bool = False,
        min_quote_score: float | None = None,
        quote_words: Positive = 60,
        max_refusal: Share = 0.8,
        yes_no_quoted: bool = True,
    ):
        self.prompt = PromptTemplate.load(prompt)
        self.selector = PassageSelector(idf, passages=passages, max_words=max_passage_words)
        self.chunks, self.split_questions, self.focus_titles = chunks, split_questions, focus_titles
        self.min_quote_score, self.quote_words = min_quote_score, quote_words
        self.max_refusal, self.yes_no_quoted = max_refusal, yes_no_quoted
        self.check = DocumentCheck()

    def refusal(self, top_logprobs: dict[str, float]) -> float:
        """The probability that the draft starts with the refusal marker, from its first token's log-probs."""
        return sum(math.exp(v) for k, v in top_logprobs.items() if k.strip() in self.refusal_marker)

    def queries(self, q: str) -> list[str]:
        """What is searched: the question, and its parts when it asks two things."""
        parts = question_parts(q) if self.split_questions else [q]
        return [q, *parts] if len(parts) > 1 else [q]

    def retrieve(self, mem: WorkingMemory, consolidator) -> list[Snippet]:
        """The `chunks` best chunks for the turn: each query's ranking, interleaved."""
        entities = mem.entities if self.focus_titles else []
        rankings = [consolidator.search(q, mem.h_q, entities, k=self.chunks)[1] for q in self.queries(mem.q)]
        return interleave(rankings, self.chunks, key=lambda s: s.id)

    def gather(self, mem: WorkingMemory, consolidator) -> tuple[str, list[Snippet]]:
        """(the query, the passages for the prompt) of the turn."""
        passages = self.selector.select(mem.q, self.retrieve(mem, consolidator))
        return " | ".join(self.queries(mem.q)), [
            Snippet(
                id=p.snippet.id,
                text=p.text,
                entity_id=p.snippet.entity_id,
                entity_name=p.snippet.entity_name,
                doc_type="passage",
                doc_id=p.snippet.doc_id,
                score=round(p.score, 4),
                location=p.snippet.location,
            )
            for p in passages
        ]

    def messages(self, mem: WorkingMemory, max_history_turns: int = 2, max_chars: int = 300):
        history = (
            [{"speaker": t.speaker, "text": t.text[:max_chars]} for t in mem.h_q[-max_history_turns:]]
            if max_history_turns > 0
            else []
        )
        return self.prompt.render(
            q=mem.q, history=history, evidence=[s.render() for s in mem.e], feedback=None, previous=None
        )

    def reply(self, mem: WorkingMemory) -> Reply:
        """What is sent (see the module docstring, step 5)."""
        best = max(mem.e, key=lambda s: s.score or 0.0, default=None)
        if best is None:
            return Reply(not_found(None), "abstained")
        if self.yes_no_quoted and is_yes_no(mem.q):
            if mem.signals.get("refusal", 0.0) >= self.max_refusal:
                return Reply(not_found(best, mem.q), "abstained")
            return self._quoted(best, mem.q)
        passing = [i for i in range(len(mem.u)) if mem.f[i] is None]
        if passing:
            index = max(passing, key=lambda i: (mem.u[i], i))
            passage = mem.e[max(0, self.check.support(mem.o[index], mem.e))]
            draft = plain(mem.o[index])
            return Reply(
                answered(draft, passage, self.quote_words),
                "answered",
                index,
                [cited(draft, passage, self.quote_words, draft)],
            )
        drafts = [d for d in mem.o if not refuses(plain(d))]
        if drafts and self.min_quote_score is not None:  # the model answered, not in the passages' terms
            passage = mem.e[max(0, self.check.support(drafts[-1], mem.e))]
            if (passage.score or 0.0) >= self.min_quote_score:
                return self._quoted(passage, mem.q)
        return Reply(not_found(best, mem.q), "abstained")

    def _quoted(self, passage: Snippet, question: str) -> Reply:
        said = quote(passage.text, self.quote_words, question)
        return Reply(
            from_passage(passage, question, self.quote_words),
            "quoted",
            None,
            [cited(said, passage, self.quote_words, question)],
        )
