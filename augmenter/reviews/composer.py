"""The replies of a knowledge base of FAQs and reviews in its own words, as the executor's `ReplyComposer`
(`augmenter.agent.protocols`): the builder makes one for snippet knowledge and hands it to the executor.

- `answer`: when no candidate may be sent, the answer of the FAQ about the question, or what the reviews on it say, a
  quote per side (with `verdicts`, the reviews' verdict first: `VerdictWriter`; with `on_topic`, each sentence cut to
  its fragment on the question where the rest speaks of other things), or else the retrieved review
  sentence closest to the question (with `verdicts`, its verdict first where the judge puts it on a side:
  `composed_reply`), with its citations;
- `answers`: whether `answer` would write one, without the verdict's LLM call;
- `quote` (with `quote`): a passing candidate whose checked claims rest on review sentences, sent with each such claim
  replaced by the sentence, quoted and attributed (`reviews_quoted`): a summary of reviews in the model's words is
  unsupported whenever a review it did not see says otherwise; what a guest wrote stays true. With `verdicts`, a
  candidate that said nothing but what reviews say is sent as `answer` writes it, where it writes one.

Which FAQs and retrieved review sentences answer the question is the answers check's call (`AnswerFinder`:
`augmenter.utilities.answers.AnswersQuestion`, or a combined utility that holds one); without one, only the
opinion gatherer's sides are quoted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol, runtime_checkable

from augmenter.errors import ConfigError
from augmenter.memory import ClaimCheck, Snippet, WorkingMemory
from augmenter.reviews.replies import (
    cites_reviews_alone,
    composed_reply,
    quoted_sources,
    reviews_quoted,
    verdict_claim,
)
from augmenter.reviews.verdict import SIDES

QUOTED_NOTE = "the candidate's claims on reviews sent as the review sentences they rest on, quoted"
VERDICT_NOTE = "the candidate spoke only of reviews: sent as the reviews' verdict and quotes"


@runtime_checkable
class AnswerFinder(Protocol):
    """Which of the turn's evidence answers the question: FAQs about it and retrieved review sentences close to it,
    best first."""

    def answering_faqs(self, mem: WorkingMemory) -> list[Snippet]: ...

    def answering_reviews(self, mem: WorkingMemory) -> list[Snippet]: ...


@dataclass
class Composed:
    """A reply in the knowledge's own words: its text, its citations (each a supported claim resting on a snippet),
    and what the turn's trace records of it (`note`, `outputs`)."""

    text: str
    claims: list[ClaimCheck]
    note: str = ""
    outputs: dict = field(default_factory=dict)


class ReviewReplies:
    """See the module docstring. `snippets`: the knowledge's snippets by id (what a checked claim cites); `llm`
    and `judge` (a `ReviewJudge`; default: one on `llm`): what the verdict writer asks; `on_topic` (an
    `OnTopicModel`, the opinion gatherer's) and `min_on_topic`: what finds a retrieved sentence on the question;
    `sure_on_topic`: where its score is this much, the judge's likelier side is taken whatever the judge's relatedness
    (the sentence is quoted either way; the judge read "The place was quiet so we could hear ourselves talk" as
    unrelated to "Is that hotel quiet?", and the quote went out alone)."""

    def __init__(
        self,
        snippets: Mapping[str, Snippet],
        answers: AnswerFinder | None = None,
        llm=None,
        judge=None,
        quote: bool = True,
        verdicts: bool = False,
        faq_check: float | None = None,
        faq_near: float = 0.45,
        on_topic=None,
        min_on_topic: float = 0.5,
        sure_on_topic: float | None = None,
    ):
        if verdicts and llm is None:
            raise ValueError("the reviews' verdicts need an LLM to write them")
        if faq_check is not None and (llm is None or not 0.0 <= faq_check <= 1.0):
            raise ValueError(f"faq_check is a probability in [0, 1] and needs an LLM, got {faq_check}")
        if sure_on_topic is not None and (on_topic is None or not 0.0 <= sure_on_topic <= 1.0):
            raise ConfigError(
                "executor.review_sure_on_topic is a probability in [0, 1] and needs the on-topic model "
                f"(consolidator.opinions.min_on_topic), got {sure_on_topic}"
            )
        self.snippets, self.answers_check, self.llm, self.judge = snippets, answers, llm, judge
        self.quote_reviews, self.verdicts = quote, verdicts
        self.faq_check, self.faq_near = faq_check, faq_near
        self.on_topic, self.min_on_topic, self.sure_on_topic = on_topic, min_on_topic, sure_on_topic
        self._writer = None
        self._confirmed: tuple = (None, [])  # (the turn it was asked for, the FAQs the model confirmed)

    def _found(self, mem: WorkingMemory) -> tuple[Sequence[Snippet], Sequence[Snippet]]:
        """The FAQs and retrieved review sentences that answer; with `on_topic`, only the sentences it finds on the
        question (`min_on_topic`): one it does not would be quoted alone ("nothing gluten-free on the menu" for soft
        drinks, P 0.01; labelled off-topic)."""
        if self.answers_check is None:
            return (), ()
        reviews = self.answers_check.answering_reviews(mem)
        if self.on_topic is not None and reviews:
            on = self.on_topic.probabilities(mem.q, [s.text for s in reviews])
            reviews = [s for s, p in zip(reviews, on) if p >= self.min_on_topic]
        return self._faqs(mem), reviews

    def _faqs(self, mem: WorkingMemory) -> list[Snippet]:
        """The FAQs that answer: by similarity (`answering_faqs`), or with `faq_check` those of the three nearest at
        similarity `faq_near` or more that the model confirms (`ReviewJudge.answers` >= `faq_check`), surest first:
        room service is no answer to clean rooms, though its question is as close as one that is."""
        nearest = getattr(self.answers_check, "nearest_faqs", None)
        if self.faq_check is None or nearest is None:
            return self.answers_check.answering_faqs(mem)
        turn = (mem.q, tuple(s.id for s in mem.e))
        if self._confirmed[0] != turn:
            asked = [(self._judge.answers(mem.q, f.text), f) for f in nearest(mem, self.faq_near)[:3]]
            self._confirmed = (turn, [f for p, f in sorted(asked, key=lambda pf: -pf[0]) if p >= self.faq_check])
        return self._confirmed[1]

    def _with_place_faqs(self, mem: WorkingMemory) -> WorkingMemory:
        """The memory with every FAQ of each place the opinion gatherer found reviews of in its evidence, retrieved
        or not: a place's own FAQ that answers the question speaks for it before its reviews do."""
        places = dict.fromkeys((s.domain, s.entity_id) for s in mem.e if s.doc_type == "opinions")
        have = {s.id for s in mem.e}
        extra = [s for place in places for s in self._faqs_of.get(place, ()) if s.id not in have]
        return mem.model_copy(update={"e": [*mem.e, *extra]}) if extra else mem

    def _answering_parts(self, mem: WorkingMemory) -> WorkingMemory:
        """With `on_topic`: the memory with each review sentence that takes a side cut to its fragment on the
        question where its other fragments speak of other things (`OnTopicModel.answering_parts`): the verdict is
        written from it and it is what the reply quotes, words unchanged."""
        rows = [i for i, s in enumerate(mem.e) if s.doc_type == "review" and s.stance in SIDES]
        if self.on_topic is None or not rows:
            return mem
        cut = self.on_topic.answering_parts(mem.q, [mem.e[i].text for i in rows])
        e = list(mem.e)
        for i, text in zip(rows, cut):
            e[i] = e[i].model_copy(update={"text": text})
        return mem.model_copy(update={"e": e})

    @cached_property
    def _judge(self):
        """The review judge the FAQ check and the verdict writer ask: the one given, else one on `llm`, made once."""
        from augmenter.reviews.judge import ReviewJudge

        return self.judge if self.judge is not None else ReviewJudge(self.llm)

    @cached_property
    def _faqs_of(self) -> dict[tuple, list[Snippet]]:
        """The knowledge's FAQs by place (domain, entity id), gathered once."""
        faqs: dict[tuple, list[Snippet]] = {}
        for s in self.snippets.values():
            if s.doc_type == "faq":
                faqs.setdefault((s.domain, s.entity_id), []).append(s)
        return faqs

    def answers(self, mem: WorkingMemory) -> bool:
        mem = self._with_place_faqs(mem)
        return composed_reply(mem, *self._found(mem)) is not None

    def answer(self, mem: WorkingMemory) -> Composed | None:
        mem = self._answering_parts(self._with_place_faqs(mem))
        made: list = []
        verdict = None
        if self.verdicts:
            if self._writer is None:
                from augmenter.reviews.verdict import VerdictWriter

                self._writer = VerdictWriter(self.llm, judge=self._judge)

            def verdict(question, sentences):
                if any(s.stance is None for s in sentences):  # a retrieved sentence: judged here as the gatherer would
                    sentences = self._judged(question, sentences)
                written = self._writer.write(question, sentences)
                if written is not None:
                    made.append(written)
                return written

        text = composed_reply(mem, *self._found(mem), verdict=verdict)
        if not text:
            return None
        # its citations: what it quotes, and each verdict it sends (one merged into its quote is not sent: `restates`)
        claims = [verdict_claim(v) for v in made if v.text[1:] in text] + quoted_sources(mem, text)
        fixed = "; ".join(v.problem for v in made if v.problem)
        return Composed(text, claims, outputs={"verdict_fixed": fixed} if fixed else {})

    def _judged(self, question: str, sentences: Sequence[Snippet]) -> list[Snippet]:
        """The sentences with the side the judge reads on the question, "unrelated" where it reads none or (with the
        judge's `min_about`) where its about-pass does not find the sentence on the question: a verdict on a sentence
        about clean rooms must not answer "Are the rooms large?". With `on_topic`, that model finds what is on the
        question and the judge its side (and its relatedness, `min_related`), without the about-pass."""
        judge = self._judge
        if self.on_topic is not None:  # the gatherer's model decides what is on the question, the judge the side
            on = self.on_topic.probabilities(question, [s.text for s in sentences])
            kept = [(s, p) for s, p in zip(sentences, on) if p >= self.min_on_topic]
            sure = [self.sure_on_topic is not None and p >= self.sure_on_topic for _, p in kept]
            found = judge.judge(question, [s.text for s, _ in kept], sure)
            sides = {s.id: side for (s, _), (side, _) in zip(kept, found)}
            return [s.model_copy(update={"stance": sides.get(s.id, "unrelated")}) for s in sentences]
        bar = getattr(judge, "min_about", None)
        out = []
        for s, (side, _) in zip(sentences, judge.judge(question, [s.text for s in sentences])):
            if side in SIDES and bar is not None and judge.about(question, s.text) < bar:
                side = "unrelated"
            out.append(s.model_copy(update={"stance": side}))
        return out

    def quote(self, mem: WorkingMemory, checks: Sequence[ClaimCheck]) -> Composed | None:
        found = reviews_quoted(mem, checks, self.snippets) if self.quote_reviews else None
        if found and self.verdicts and all(cites_reviews_alone(c, self.snippets) for c in checks if c.supported):
            # the candidate said only what reviews say: their verdict and quotes (`answer`), not its sentences
            # quoted alone ("At Bedouin, a diner wrote: ..." to "Does the Bedouin have reasonably priced drinks?")
            answered = self.answer(mem)
            if answered is not None:
                answered.note = VERDICT_NOTE
                return answered
        return Composed(*found, note=QUOTED_NOTE) if found else None
