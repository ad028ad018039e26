"""Does the candidate answer what was asked (WikiChat's "relevant" criterion)?

- An answer must be about the question: the best of its sentences must be close to the question (names of places
  left out) or to the evidence that is about the question (`topicality`), else it is off-topic.
- "I don't know" is wrong when the evidence answers the question: a FAQ close to the question, reviews the opinion
  gatherer found on its aspect (`answering_evidence`), or a retrieved review sentence close to the question
  (`answering_reviews`).
- "I don't know" followed by an answer contradicts itself.
Each failure writes feedback that says what was asked and quotes what the knowledge says on it. The thresholds
are fitted by bench/fit_answers.py: `min_topicality` on the labelled claim set's answers; `min_faq` and `min_review`
on DSTC11's gold knowledge, for precision, since a FAQ or a review sentence this close to the question is quoted as
the answer when no draft passes. docs/RESULTS.md ("Does the answer answer? The answers check's thresholds") has
the figures."""

from __future__ import annotations

import numpy as np

from augmenter.knowledge.linker import of_entities_in_question, strip_names
from augmenter.memory import Snippet, WorkingMemory
from augmenter.text import faq_parts
from augmenter.utilities.scorers import UtilityResult
from augmenter.verification.encoder import embed
from augmenter.verification.splitter import is_abstention, is_claim, split_sentences

OFF_TOPIC = 'The user asked: "{q}". The response does not answer that.'
IDK_WRONG = "The response says the information is missing, but the knowledge answers the question."
IDK_AND_ANSWER = (
    "The response says it does not have the information and then states facts. If the knowledge "
    "answers the question, answer it without saying you do not know; if not, say only that."
)
ON_IT = "What the knowledge says on it:"


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _own_question(question: str, place: str | None) -> str:
    """A FAQ's question without its place's name ("Is there outdoor seating at Anatolia?")."""
    return (strip_names(question, [strip_names(place, [])]) if place else "") or question


class AnswersQuestion:
    """The check, as a utility: score 1 when the candidate answers, else the topicality it reached (0 for a wrong
    "I don't know"), with feedback. `min_topicality`: the cosine a sentence needs to the question or to the
    question's evidence; `min_faq`: the similarity a FAQ needs to the question to count as answering it
    (`similarities`)."""

    name = "answers"
    checks_claims = False  # it judges whether the candidate answers, not its claims

    def __init__(
        self, min_topicality: float = 0.525, min_faq: float = 0.675, quotes: int = 2, min_review: float = 0.475
    ):
        if not all(0.0 <= t <= 1.0 for t in (min_topicality, min_faq, min_review)) or quotes < 0:
            raise ValueError(
                f"answers check: thresholds are cosines in [0, 1] and quotes >= 0, got "
                f"{min_topicality}, {min_faq}, {min_review}, {quotes}"
            )
        self.min_topicality, self.min_faq, self.quotes = min_topicality, min_faq, quotes
        self.min_review = min_review

    @staticmethod
    def question(mem: WorkingMemory) -> str:
        """The question without the names of places (they match every sentence about the place); a document's title
        stays (it names the topic: "What is the door code?" asked of the document "Door")."""
        documents = {str(s.entity_id) for s in mem.e if s.location is not None}
        return strip_names(mem.q, [m.surface for m in mem.entities if str(m.entity_id) not in documents]) or mem.q

    def _closest(self, mem: WorkingMemory, snippets: list[Snippet], threshold: float) -> list[Snippet]:
        """`snippets` about the places in question (`of_entities_in_question`) at least `threshold` close to the
        question (`similarities`), closest first."""
        snippets = of_entities_in_question(snippets, mem.entities)
        if not snippets:
            return []
        sims = self.similarities(mem, snippets)
        return [snippets[i] for i in np.argsort(-sims, kind="stable") if sims[i] >= threshold]

    def similarities(self, mem: WorkingMemory, snippets: list[Snippet]) -> np.ndarray:
        """The cosine of the question to each snippet; a FAQ's is the better of its question's (its place's name
        left out, as the user's is) and its whole text's: an answer dilutes the whole ("Q: Do you have outdoor
        seating? A: There is no seating outdoors at Ugly Duckling." is 0.45 from "Do they have a nice area for
        outdoor dining?", its question 0.66)."""
        if not snippets:
            return np.zeros(0)
        texts = [s.text for s in snippets]
        asked = [faq_parts(s.text) if s.doc_type == "faq" else None for s in snippets]
        parts = [_own_question(faq[0], s.entity_name) for faq, s in zip(asked, snippets) if faq]
        vectors = embed([self.question(mem), *texts, *parts])
        sims = vectors[1 : 1 + len(texts)] @ vectors[0]
        by_part = iter(vectors[1 + len(texts) :] @ vectors[0])
        return np.array([max(sim, next(by_part)) if m else sim for sim, m in zip(sims, asked)])

    def nearest_faqs(self, mem: WorkingMemory, threshold: float) -> list[Snippet]:
        """The FAQs of the evidence about the places in question at least `threshold` close to the question
        (`similarities`), closest first: what a reply may put to the model to confirm (`ReviewJudge.answers`)."""
        return self._closest(mem, [s for s in mem.e if s.doc_type == "faq"], threshold)

    def answering_faqs(self, mem: WorkingMemory) -> list[Snippet]:
        """The FAQs of the evidence close to the user's question (`similarities` >= `min_faq`), closest first."""
        return self._closest(mem, [s for s in mem.e if s.doc_type == "faq"], self.min_faq)

    def answering_reviews(self, mem: WorkingMemory) -> list[Snippet]:
        """The retrieved review sentences (not the opinion gatherer's) close to the question (cosine >=
        `min_review`), closest first: what answers it when the gatherer found no side."""
        return self._closest(mem, [s for s in mem.e if s.doc_type == "review" and s.stance is None], self.min_review)

    def answering_evidence(self, mem: WorkingMemory) -> list[Snippet]:
        """The evidence that answers the question: FAQs close to it (`answering_faqs`) and the opinion gatherer's
        review sentences on its aspect that take a side."""
        return self.answering_faqs(mem) + [
            s for s in mem.e if s.doc_type == "review" and s.stance in ("positive", "negative")
        ]

    def topicality(self, mem: WorkingMemory, sentences: list[str], evidence: list[Snippet]) -> float:
        """The best cosine of a sentence to the question or to the evidence that answers it."""
        if not sentences:
            return 0.0
        targets = [self.question(mem), *(s.text for s in evidence)]
        vectors = embed([*sentences, *targets])
        return float(np.max(vectors[: len(sentences)] @ vectors[len(sentences) :].T))

    def on_topic(self, mem: WorkingMemory, sentence: str) -> bool:
        """Whether a sentence is on the question (its topicality reaches `min_topicality`)."""
        return self.topicality(mem, [sentence], self.answering_evidence(mem)) >= self.min_topicality

    def _quote(self, evidence: list[Snippet]) -> str:
        return " ".join(f'"{_clip(s.render())}"' for s in evidence[: self.quotes])

    def __call__(self, mem: WorkingMemory, candidate: str) -> UtilityResult:
        sentences = split_sentences(candidate)
        abstains = any(is_abstention(s) for s in sentences)
        claims = [s for s in sentences if is_claim(s)]
        evidence = self.answering_evidence(mem)
        on_it = f" {ON_IT} {self._quote(evidence)}" if evidence and self.quotes else ""
        if abstains and not claims:
            evidence = evidence or self.answering_reviews(mem)
            on_it = f" {ON_IT} {self._quote(evidence)}" if evidence and self.quotes else ""
            return UtilityResult(0.0, IDK_WRONG + on_it) if evidence else UtilityResult(1.0)
        if abstains:
            return UtilityResult(0.5, IDK_AND_ANSWER + on_it)
        if not claims:
            return UtilityResult(1.0)
        score = self.topicality(mem, claims, evidence)
        if score < self.min_topicality:
            return UtilityResult(score, OFF_TOPIC.format(q=_clip(mem.q)) + on_it)
        return UtilityResult(1.0)
