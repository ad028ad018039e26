"""How answers are made from a folder of documents: the evidence the prompt carries, the drafting prompt, the check
of a draft and the reply sent (the executor's `Composer` for `knowledge=docs`).

1. Retrieval: the question, and each of its parts when it asks two things, searched over the whole folder (a word
   of the question that is a document's title no longer confines the search to that document, unless
   `focus_titles`); the rankings interleaved, `chunks` in all.
2. The passages that answer (`PassageSelector`): a few sentences or code blocks, not whole chunks.
3. A prompt of its own (`prompt`, the packaged `documents`): short, no examples, the answer first.
4. The check (`DocumentCheck`): every number, piece of code and name of the draft in the passages; its yes/no
   agreeing with theirs.
5. The reply (`augmenter.documents.replies`): a draft that passes, then the passage it rests on, quoted, with its
   file and section; a draft that fails: the best passage in its own words when it scores at least
   `min_quote_score`, else "not found" with the closest passage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from augmenter.documents.check import DocumentCheck
from augmenter.documents.passages import Idf, PassageSelector
from augmenter.documents.replies import answered, cited, from_passage, not_found
from augmenter.knowledge.ranking import interleave
from augmenter.memory import ClaimCheck, Snippet, WorkingMemory
from augmenter.prompts.engine import PromptTemplate

_PARTS = re.compile(r"\?\s+|;\s+|,?\s+(?:and|or|also)\s+(?=(?:what|how|which|where|when|who|why|is|are|does|do|can|"
                    r"should|will|would|could|must)\b)", re.IGNORECASE)


def question_parts(question: str, min_words: int = 3) -> list[str]:
    """The parts of a question that asks two things ("How do I set a timeout, and what is the default?"), each of
    at least `min_words` words; [question] when it asks one."""
    parts = [p.strip(" ,?") for p in _PARTS.split(question) if len(p.split()) >= min_words]
    return parts if len(parts) > 1 else [question]


@dataclass
class Reply:
    """What is sent: the text, how it came about, the candidate sent (if one was) and its citations."""

    text: str
    outcome: str
    index: Optional[int] = None
    claims: list[ClaimCheck] = field(default_factory=list)


class DocumentComposer:
    """See the module docstring. `idf`: the folder's word weights for the passage selector."""

    def __init__(self, idf: Optional[Idf] = None, prompt: str = "documents", chunks: int = 6, passages: int = 3,
                 max_passage_words: int = 160, split_questions: bool = True, focus_titles: bool = False,
                 min_quote_score: float = 0.6, quote_words: int = 60):
        self.prompt = PromptTemplate.load(prompt)
        self.selector = PassageSelector(idf, passages=passages, max_words=max_passage_words)
        self.chunks, self.split_questions, self.focus_titles = chunks, split_questions, focus_titles
        self.min_quote_score, self.quote_words = min_quote_score, quote_words
        self.check = DocumentCheck()

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
        return " | ".join(self.queries(mem.q)), [Snippet(id=p.snippet.id, text=p.text, entity_id=p.snippet.entity_id,
                                             entity_name=p.snippet.entity_name, doc_type="passage",
                                             doc_id=p.snippet.doc_id, score=round(p.score, 4),
                                             location=p.snippet.location) for p in passages]

    def messages(self, mem: WorkingMemory, max_history_turns: int = 2, max_chars: int = 300):
        history = [{"speaker": t.speaker, "text": t.text[:max_chars]} for t in mem.h_q[-max_history_turns:]] \
            if max_history_turns > 0 else []
        return self.prompt.render(q=mem.q, history=history, evidence=[s.render() for s in mem.e], feedback=None,
                                  previous=None)

    def answering(self, mem: WorkingMemory) -> Optional[Snippet]:
        """The passage that answers the question in its own words: the best, when it scores `min_quote_score`."""
        best = max(mem.e, key=lambda s: s.score or 0.0, default=None)
        return best if best is not None and (best.score or 0.0) >= self.min_quote_score else None

    def reply(self, mem: WorkingMemory) -> Reply:
        passing = [i for i in range(len(mem.u)) if mem.f[i] is None]
        if passing:
            index = max(passing, key=lambda i: (mem.u[i], i))
            draft = mem.o[index]
            support = self.check.support(draft, mem.e)
            if support >= 0:
                passage = mem.e[support]
                return Reply(answered(draft, passage, self.quote_words), "answered", index, [cited(draft, passage)])
            return Reply(draft, "answered", index)
        passage = self.answering(mem)
        if passage is not None:
            return Reply(from_passage(passage, self.quote_words), "quoted", None, [cited(passage.text, passage)])
        closest = max(mem.e, key=lambda s: s.score or 0.0, default=None)
        return Reply(not_found(closest), "abstained")
