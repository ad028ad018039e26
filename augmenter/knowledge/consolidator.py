"""The Knowledge Consolidator (paper section 2.3.1): link entities, build a query, retrieve top-k evidence."""

from __future__ import annotations

from collections.abc import Sequence

from augmenter.errors import KnowledgeFormatError
from augmenter.knowledge.base import KnowledgeBase
from augmenter.knowledge.linker import EntityLinker, EvidenceLinker, strip_names
from augmenter.knowledge.ranking import interleave
from augmenter.knowledge.retrievers import Retriever, tokenize
from augmenter.memory import EntityMention, Snippet, Utterance
from augmenter.reviews.evidence import OpinionSettings, with_opinions
from augmenter.settings import Count, Positive


class KnowledgeConsolidator:
    """Retrieves the evidence e for q from a knowledge base.

    - h_q reaches retrieval through the entity linker (entities named earlier in the dialogue; not for a
      knowledge base with `focus_from_history = False`, such as a folder of documents, whose titles are no topic;
      with `misspelt_names`, a name written with one slip counts: `EntityLinker`);
    - with `focus_entities` and linked entities, retrieval runs over those entities' snippets with q
      alone, their names removed (on DSTC11 dev, adding history text to a focused query lowers
      recall@5 from 0.44 to 0.30);
    - otherwise the query is q plus the last `history_turns` utterances of h_q, over all snippets (for documents,
      q's own hits and that query's alternate, q's first: an earlier question is context there, not the topic);
    - the top `k` snippets become e;
    - with `review_window` or `faq_context` above 0, the evidence linker attaches to each review snippet its
      neighbouring review sentences and its entity's best FAQs for the query (`EvidenceLinker`);
    - with `opinions` (the reviews room's `OpinionSettings`, or a node of them; false: the reviews as retrieved),
      the reviews found for a linked entity are replaced by every review sentence of it on the question's aspect,
      each with its stance, after a line that counts the reviews on each side (`with_opinions`), only for the
      places the question names when it names any, else for up to three linked ones; the other evidence found
      (FAQs) comes first.
    """

    def __init__(
        self,
        knowledge: KnowledgeBase,
        retriever: Retriever,
        k: Positive = 5,
        history_turns: Count = 1,
        focus_entities: bool = True,
        misspelt_names: bool = True,
        review_window: Count = 0,
        faq_context: Count = 0,
        opinions: OpinionSettings | bool | None = OpinionSettings(),  # noqa: B008 (frozen: one shared default)
    ):
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        if not isinstance(knowledge, KnowledgeBase):
            raise ValueError(
                f"this consolidator retrieves snippets; {type(knowledge).__name__} needs its own "
                "(for knowledge=ottqa: task=ottqa)"
            )
        self.kb = knowledge
        self.retriever = retriever
        self.k = k
        self.history_turns = history_turns
        self.focus_entities = focus_entities
        self.linker = EntityLinker(knowledge.entities, misspelt_names)
        self.evidence_linker = (
            EvidenceLinker(knowledge, review_window, faq_context) if review_window or faq_context else None
        )
        if not any(tokenize(s.text) for s in knowledge.snippets):
            raise KnowledgeFormatError(
                f"{knowledge.source or 'the knowledge'}: no snippet has a word to search by "
                "(only punctuation or stopwords)"
            )
        self.opinion_settings = OpinionSettings.of(opinions)  # the reviews' opinion gatherer and its settings
        self.opinions = self.opinion_settings.gatherer(knowledge) if self.opinion_settings else None
        index = getattr(knowledge, "index_retriever", None)  # a document index loads its saved retrieval index
        if index is not None:
            index(self.retriever)
        else:
            self.retriever.index([s.text for s in knowledge.snippets])

    def use_llm(self, llm) -> None:
        """The LLM the opinion gatherer's judge asks (with `opinions.stance="llm"`; the agent hands it over)."""
        if self.needs_llm:
            self.opinions.judge = self.opinion_settings.judge(llm)

    def link(self, q: str, history: Sequence[Utterance] = ()) -> list[EntityMention]:
        return self.linker.link(q, history)

    def query(self, q: str, history: Sequence[Utterance] = ()) -> str:
        recent = [t.text for t in history[-self.history_turns :]] if self.history_turns > 0 else []
        return " ".join([*recent, q])

    @property
    def needs_llm(self) -> bool:
        """Whether the opinion gatherer's judge asks an LLM (hand it one with `use_llm`)."""
        return self.opinions is not None and self.opinion_settings.needs_llm

    def retrieve(
        self, q: str, history: Sequence[Utterance] = (), entities: Sequence[EntityMention] | None = None
    ) -> tuple[str, list[Snippet]]:
        """Return (the query used, the top-k snippets with their scores)."""
        return self._retrieve(q, history, entities, opinions=True)

    def search(
        self,
        q: str,
        history: Sequence[Utterance] = (),
        entities: Sequence[EntityMention] | None = None,
        k: int | None = None,
    ) -> tuple[str, list[Snippet]]:
        """`retrieve` without the opinion gatherer: the snippets for a claim's evidence (the claims utility), or
        the `k` best (default: the consolidator's k) for a composer that selects its own evidence."""
        return self._retrieve(q, history, entities, opinions=False, k=k)

    def _retrieve(
        self,
        q: str,
        history: Sequence[Utterance],
        entities: Sequence[EntityMention] | None,
        opinions: bool,
        k: int | None = None,
    ) -> tuple[str, list[Snippet]]:
        k = k or self.k
        hits, focused = [], q
        if not getattr(self.kb, "focus_from_history", True):  # documents: a title named earlier is no topic now
            entities = [m for m in entities or () if m.in_query]
        if self.focus_entities and entities:
            # Within an entity's own snippets its name carries no signal: search without it.
            query = focused = strip_names(q, [m.surface for m in entities])
            rows = sorted({r for m in entities for r in self.kb.rows_of(m.domain, m.entity_id)})
            hits = self.retriever.search([query], k, rows)[0]
        if not hits:
            query = self.query(q, history)
            if not getattr(self.kb, "focus_from_history", True) and query != q:
                # documents: the earlier question is context, not the topic; the question's own hits lead
                hits, query = interleave(self.retriever.search([q, query], k), k, key=lambda hit: hit[0]), q
            else:
                hits = self.retriever.search([query], k)[0]
        evidence = [self.kb.snippets[i].model_copy(update={"score": round(s, 4)}) for i, s in hits]
        if opinions and self.opinions is not None and self.focus_entities and entities:
            # the reviews on what is asked now (not on the history the fallback search added)
            evidence = with_opinions(self.opinions, focused, evidence, entities, q)
        if self.evidence_linker is not None:  # it weighs the entity's FAQs by their scores for the query
            evidence = self.evidence_linker.attach(evidence, self.retriever.scores(query))
        return query, evidence
