"""Opinions on what the user asks about: every review sentence of an entity on the question's
aspect, each with its stance, and how many reviews praise and complain, so that the model is told how opinion is
split instead of summarising whichever few sentences retrieval happened to find.

- relevance: a stored logistic regression (`models/aspect.json`, fitted by bench/fit_opinions.py on DSTC11 dev turns
  apart from the evaluation samples, gold review sentences as positives) over the question's MiniLM similarity to a
  sentence, its gap to the entity's best sentence, their content words in common and its rank;
- stance: a stored multinomial logistic regression on MiniLM embeddings of the clause most similar to the question
  (`models/stance.json`, fitted on 1,200 review clauses labelled positive / negative / neutral by two labellers,
  bench/labels/stance/), since a review sentence often praises one thing and complains about another.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from augmenter.errors import ConfigError
from augmenter.memory import Snippet
from augmenter.text import asks_price_alone, speaks_of_price
from augmenter.verification.encoder import closest_parts, embed
from augmenter.verification.lexical import clauses, content_words, fragments, leans_back, part_holding
from augmenter.verification.model import StoredModel

STANCES = ("positive", "negative", "neutral")


def packaged_file(name: str, suffix: str = ".json", what: str = "model") -> Path:
    """A stored model's file: `name` itself where it ends in `suffix` (a path), else the packaged
    augmenter/reviews/models/<name><suffix>; `what` names it in the error when there is none."""
    path = Path(name)
    if path.suffix == suffix:
        if not path.is_file():
            raise ConfigError(f"{what} file not found: {path}")
        return path
    packaged = resources.files("augmenter.reviews") / "models" / f"{name}{suffix}"
    if not packaged.is_file():
        raise ConfigError(f"no packaged {what} {name!r} in augmenter/reviews/models/")
    return Path(str(packaged))


def _packaged(name: str) -> str:
    return packaged_file(name).read_text(encoding="utf-8")


@dataclass
class StanceModel:
    """p(stance) = softmax(coef . embedding + intercept) over `classes`."""

    classes: list[str]
    coef: np.ndarray
    intercept: np.ndarray
    meta: dict = field(default_factory=dict)

    @classmethod
    def load(cls, name: str = "stance") -> StanceModel:
        try:
            d = json.loads(_packaged(name))
            model = cls(
                list(d["classes"]),
                np.asarray(d["coef"], dtype=np.float32),
                np.asarray(d["intercept"], dtype=np.float32),
                {k: d[k] for k in d if k not in ("coef",)},
            )
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"stance model {name}: not a stored stance model ({exc})") from None
        if model.coef.shape != (len(model.classes), 384) or set(model.classes) != set(STANCES):
            raise ConfigError(f"stance model {name}: expected {len(STANCES)} x 384 weights for {', '.join(STANCES)}")
        return model

    def predict(self, texts: Sequence[str]) -> list[tuple[str, float]]:
        """(stance, its probability) of each text."""
        if not texts:
            return []
        z = embed(list(texts)) @ self.coef.T + self.intercept
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        return [(self.classes[int(i)], float(row[i])) for row, i in zip(p, p.argmax(axis=1))]


def relevance_features(query: str, sentences: Sequence[str]) -> np.ndarray:
    """Per sentence: cosine to the query, its gap to the best sentence's, the share of the query's content words it
    holds, and its rank by cosine (0: the best)."""
    if not sentences:
        return np.zeros((0, 4))
    vectors = embed([query, *sentences])
    sims = vectors[1:] @ vectors[0]
    asked = set(content_words(query))
    shared = np.array([len(asked & set(content_words(s))) / max(1, len(asked)) for s in sentences])
    rank = np.empty(len(sims))
    rank[np.argsort(-sims, kind="stable")] = np.arange(len(sims))
    return np.column_stack([sims, sims - sims.max(), shared, rank])


RELEVANCE_FEATURES = ["similarity", "gap_to_best", "shared_words", "rank"]


@dataclass
class Opinions:
    """What one entity's reviews say on the question's aspect."""

    entity_name: str
    sentences: list[Snippet]  # the review sentences on the aspect, each with its `stance`, most relevant first
    reviews: dict[str, int]  # reviews that are positive / negative / mixed / neutral on it

    @property
    def mentioned(self) -> int:
        return sum(self.reviews.values())

    @property
    def split(self) -> str:
        """ "positive", "negative", "mixed" (reviews on both sides) or "neutral" (no review takes a side)."""
        pos = self.reviews["positive"] + self.reviews["mixed"]
        neg = self.reviews["negative"] + self.reviews["mixed"]
        return "mixed" if pos and neg else "positive" if pos else "negative" if neg else "neutral"

    def summary(self) -> str:
        r = self.reviews
        sides = [f"{r[k]} {k}" for k in ("positive", "negative", "mixed") if r[k]]
        if not sides:
            return f"{self.mentioned} review(s) mention this without praise or complaint."
        said = ", ".join(sides[:-1]) + (" and " if len(sides) > 1 else "") + sides[-1]
        return f"Reviews that mention this: {self.mentioned} ({said})."


def with_sentence_before(reviews: list[Snippet], rows: Sequence[int]) -> list[Snippet]:
    """`reviews` with each of `rows` preceded by the sentence before it in the same review, where there is one."""
    at = {(s.doc_id, s.sent_id): s for s in reviews if s.sent_id is not None}
    out = list(reviews)
    for i in rows:
        s = reviews[i]
        before = at.get((s.doc_id, s.sent_id - 1)) if s.sent_id is not None else None
        if before is not None:
            out[i] = s.model_copy(update={"text": f"{before.text.strip()} {s.text.strip()}"})
    return out


def _kept(keep: list[int], stances: list[str], ok) -> tuple[list[int], list[str]]:
    """The rows of `keep` (and their `stances`) for which `ok(row, stance)` holds."""
    pairs = [(i, side) for i, side in zip(keep, stances) if ok(i, side)]
    return [i for i, _ in pairs], [side for _, side in pairs]


class OpinionGatherer:
    """The review sentences of an entity on a question's aspect (relevance p >= `min_p`, at most `max_sentences`),
    each with its stance, and the count of reviews per side (a review with sentences on both sides is mixed).

    With a `judge` (`ReviewJudge`: the LLM), each candidate's stance is what it says about the question itself
    (praise, complaint, or unrelated: dropped); without one, the stored clause classifier's stance of the clause
    most similar to the question.

    `min_about_side` (with a judge that has `min_about`): a side none of whose sentences reaches `min_about` still
    counts when one reaches this, led by its best; sentences the stored classifier finds neutral (a reviewer's "We
    stayed at X") are not put to the judge; and each sentence is judged, and kept, as its fragment closest in meaning
    to the question, or to its topic where the judge reads sides of that ("the very small portion sizes of food" of a
    sentence that goes on about drinks and the view), so that a wider pool (a lower `min_p`, more `max_sentences`)
    finds the other side of mixed reviews.

    `praise_about` (with a judge whose about-pass also asks of the topic): a praise sentence leads its side only when
    the question's own about-pass reaches this too; complaints keep the topic's pass, which finds those the
    question's misses ("it is quite noisy" for "Is it quiet?"), while praise in general ("I'll definitely be coming
    back" for value) passes the topic's alone.

    `whole_side` (with `min_about_side`): praise judged by a fragment is dropped where the judge reads the whole
    sentence as a complaint (`_same_side_whole`; a complaint is kept). A sentence whose opening points back ("I found
    them to be overpriced", `leans_back`) is judged and quoted whole, after the sentence before it in its review.

    `on_topic` (an `OnTopicModel`, with `min_on_topic`): the sentences on the question are those it scores at least
    `min_on_topic`, most probable first, in place of the stored relevance model and of the judge's about-pass (the
    judge's side and its `min_related` still apply: `min_related=0` takes every side it reads), and sentences the
    stored classifier finds neutral are left out, as with `min_about_side`. `on_topic_side`: where the sentences
    take both sides, a side none of whose sentences the model scores at least this is dropped when the other side
    has one (a complaint of the wifi's price against praise of its speed makes no "divided"). `sure_on_topic`: a
    sentence the model scores at least this takes the judge's likelier side whatever the judge's relatedness, where
    that side holds `sure_share` of the judge's distribution or more. `on_topic_parts`: a sentence is scored as its
    best part, whole or a fragment (`best_part_probabilities`): one that goes on about other things ("The rooms were
    not that clean, and there was no safe ...") scores low whole.

    `one_view_per_review`: a review with sentences on both sides keeps only the side whose sentence shares more of
    the question's words, where one does: a reviewer who found "the bathroom very clean" and "the room itself not
    clean" spoke of two things, and only one is what was asked (equal: both kept).

    `price_facet`: where the question asks only what something costs (`asks_price_alone`), only sentences that speak
    of a price are kept, as judged (their fragment nearest the question); where it asks nothing of price, only those
    that do not (praise of fast wifi is no answer to a fee for it, the beer's price none to how many beers)."""

    def __init__(
        self,
        kb,
        relevance: str = "aspect",
        stance: str = "stance",
        min_p: float = 0.3,
        max_sentences: int = 6,
        judge=None,
        min_about_side: float | None = None,
        praise_about: float | None = None,
        whole_side: bool = True,
        on_topic=None,
        min_on_topic: float = 0.5,
        on_topic_side: float | None = None,
        one_view_per_review: bool = False,
        price_facet: bool = False,
        sure_on_topic: float | None = None,
        on_topic_parts: bool = False,
        sure_share: float = 0.0,
    ):
        if not 0.0 <= min_p <= 1.0 or max_sentences < 1:
            raise ValueError(f"opinions: min_p in [0, 1] and max_sentences >= 1, got {min_p} and {max_sentences}")
        if min_about_side is not None and not 0.0 <= min_about_side <= 1.0:
            raise ValueError(f"opinions: min_about_side is a probability in [0, 1], got {min_about_side}")
        self.kb, self.min_p, self.max_sentences, self.judge = kb, min_p, max_sentences, judge
        self.min_about_side, self.praise_about, self.whole_side = min_about_side, praise_about, whole_side
        if not 0.0 <= min_on_topic <= 1.0:
            raise ValueError(f"opinions: min_on_topic is a probability in [0, 1], got {min_on_topic}")
        if on_topic_side is not None and not 0.0 <= on_topic_side <= 1.0:
            raise ValueError(f"opinions: on_topic_side is a probability in [0, 1], got {on_topic_side}")
        self.on_topic, self.min_on_topic, self.on_topic_side = on_topic, min_on_topic, on_topic_side
        self.one_view_per_review, self.price_facet = one_view_per_review, price_facet
        if sure_on_topic is not None and not 0.0 <= sure_on_topic <= 1.0:
            raise ValueError(f"opinions: sure_on_topic is a probability in [0, 1], got {sure_on_topic}")
        if not 0.0 <= sure_share <= 1.0:
            raise ValueError(f"opinions: sure_share is a probability in [0, 1], got {sure_share}")
        self.sure_on_topic, self.on_topic_parts, self.sure_share = sure_on_topic, on_topic_parts, sure_share
        self.relevance = StoredModel.from_json(_packaged(relevance), f"relevance model {relevance}")
        self.stance = StanceModel.load(stance)

    def _classified(self, query: str, chosen: list[Snippet]) -> list[str]:
        """The stored classifier's stance of each sentence's clause closest to the question (a sentence often
        praises one thing and complains about another)."""
        focus = closest_parts(query, [s.text for s in chosen], clauses)
        return [stance for stance, _ in self.stance.predict(focus)]

    def _near(self, query: str, question: str) -> str:
        """What each sentence's fragment is chosen closest to: the question's topic where the judge reads sides of
        it (`stance_by` not "question": "view" picks "the view was pretty bland" of a sentence whose other clause,
        "while the location itself was nice", is nearer the whole question), else the query."""
        if getattr(self.judge, "stance_by", "question") != "question":
            return self.judge.topic(question)
        return query

    def _same_side_whole(self, question: str, reviews: list[Snippet], whole: dict, keep: list[int], stances: list[str]):
        """The praise judged by a fragment whose whole sentence the judge does not read as a complaint: "the room
        could have been a lot bigger" of "... the room could have been a lot bigger, but it was clean" can read as
        praise of big rooms alone, and the whole sentence as the complaint it is; such a sentence is dropped. A
        complaint is kept whatever the whole reads: "the room and bathroom weren't clean at first but that was
        promptly taken care of" reads as praise whole, and without it the reply said "Yes" to spotless bathrooms."""
        cut = [i for i, side in zip(keep, stances) if side == "positive" and reviews[i].text != whole[i]]
        if not cut:
            return keep, stances
        read = self.judge.judge(question, [whole[i] for i in cut])
        against = {i for i, (side, _) in zip(cut, read) if side == "negative"}
        return _kept(keep, stances, lambda i, _side: i not in against)

    @staticmethod
    def _once(reviews: list[Snippet], back: set[int], keep: list[int], stances: list[str]):
        """A sentence read after the one before it (`back`) holds that one too: where both are kept, the reply would
        quote the first twice ("A guest wrote: "The room was nice and big"; in the same review: "The room was nice
        and big""). On one side, the two read together are kept; on two, the first alone (the one read with it may
        be judged by the other's part)."""
        side = {(reviews[i].doc_id, reviews[i].sent_id): st for i, st in zip(keep, stances)}

        def before(i: int) -> str | None:
            s = reviews[i]
            return side.get((s.doc_id, s.sent_id - 1)) if i in back and s.sent_id is not None else None

        pointed = {(reviews[i].doc_id, reviews[i].sent_id - 1) for i, st in zip(keep, stances) if before(i) == st}
        return _kept(
            keep,
            stances,
            lambda i, st: before(i) in (None, st) and (reviews[i].doc_id, reviews[i].sent_id) not in pointed,
        )

    def _verified(self, question: str, reviews: list[Snippet], keep: list[int], stances: list[str]):
        """Each side led by a sentence that speaks to exactly what was asked (`judge.about`, walked in relevance
        order; the sentences before it, which do not, are dropped), and a side with no such sentence dropped whole:
        the sentence a reply quotes for a side, and the side itself, are then on the question (with `min_about_side`,
        a side whose best sentence reaches only that is led by it). The sentences after a lead are asked too and
        kept where they reach `min_about_side` (else `min_about`): what is counted is on the question as well."""
        out_keep, out_stances = [], []
        bar = self.min_about_side if self.min_about_side is not None else self.judge.min_about
        for side in ("positive", "negative"):
            mine = [i for i, st in zip(keep, stances) if st == side]
            asked = self.praise_about if side == "positive" else None
            seen = self.judge.about_each(question, [reviews[i].text for i in mine], self.judge.min_about, asked)
            lead = len(seen) - 1 if seen and seen[-1] >= self.judge.min_about else None
            if lead is None and self.min_about_side is not None and seen and max(seen) >= self.min_about_side:
                lead = int(np.argmax(seen))
            if lead is None:
                continue
            score = dict(zip(mine, seen))
            unasked = mine[len(seen) :]
            if unasked:
                score.update(
                    zip(unasked, self.judge.about_each(question, [reviews[i].text for i in unasked], math.inf, asked))
                )
            tail = [i for i in mine[lead + 1 :] if score[i] >= bar]
            out_keep += [mine[lead], *tail]
            out_stances += [side] * (1 + len(tail))
        order = {i: n for n, i in enumerate(keep)}  # back in relevance order
        pairs = sorted(zip(out_keep, out_stances), key=lambda pair: order[pair[0]])
        return [i for i, _ in pairs], [st for _, st in pairs]

    def _sure_sides(self, p: np.ndarray, keep: list[int], stances: list[str]):
        """Both sides kept only where each has a sentence the on-topic model scores `on_topic_side` or more; else the
        side that has one, alone (neither has one: both, as they are)."""
        sure = {side for i, side in zip(keep, stances) if p[i] >= self.on_topic_side}
        if len(set(stances) & {"positive", "negative"}) < 2 or len(sure) != 1:
            return keep, stances
        return _kept(keep, stances, lambda i, side: side in sure)

    @staticmethod
    def _on_price(question: str, reviews: list[Snippet], keep: list[int], stances: list[str]):
        """The sentences on price where the question asks only a price, those on other things where it asks none;
        all where it asks a price and more."""
        if asks_price_alone(question):
            want = True
        elif not speaks_of_price(question):
            want = False
        else:
            return keep, stances
        return _kept(keep, stances, lambda i, side: speaks_of_price(reviews[i].text) == want)

    @staticmethod
    def _one_view_a_review(question: str, reviews: list[Snippet], keep: list[int], stances: list[str]):
        """Of a review's sentences on both sides, those of the side that shares fewer of the question's content
        words (its best sentence's count) dropped; where the two sides share as many, both kept."""
        asked = set(content_words(question))
        shared = {i: len(asked & set(content_words(reviews[i].text))) for i in keep}
        best: dict = {}
        for i, side in zip(keep, stances):
            key = (reviews[i].doc_id, side)
            best[key] = max(best.get(key, -1), shared[i])

        def ok(i: int, side: str) -> bool:
            other = best.get((reviews[i].doc_id, "negative" if side == "positive" else "positive"))
            return reviews[i].doc_id is None or other is None or best[(reviews[i].doc_id, side)] >= other

        return _kept(keep, stances, ok)

    def gather(self, query: str, domain, entity_id, question: str | None = None) -> Opinions | None:
        """`query`: the question without the place's name (what relevance is measured against); `question`: as the
        user asked it (what the judge reads; default `query`)."""
        reviews = [
            self.kb.snippets[i] for i in self.kb.rows_of(domain, entity_id) if self.kb.snippets[i].doc_type == "review"
        ]
        if not reviews or not query.strip():
            return None
        if self.on_topic is not None and self.judge is None:
            raise ConfigError("opinions: the on-topic model picks sentences for the LLM judge to side; no judge is set")
        if self.on_topic is not None:  # a sentence that points back is read after the sentence it points to
            leaning = [i for i, r in enumerate(reviews) if leans_back(r.text)]
            texts = [s.text for s in with_sentence_before(reviews, leaning)]
            if self.on_topic_parts:  # one read after the sentence before it is scored whole: its parts are that one's
                whole = np.isin(np.arange(len(texts)), leaning).tolist()
                p = np.asarray(self.on_topic.best_part_probabilities(question or query, texts, whole))
            else:
                p = np.asarray(self.on_topic.probabilities(question or query, texts))
            bar = self.min_on_topic
        else:
            p = np.atleast_1d(self.relevance.predict_proba(relevance_features(query, [s.text for s in reviews])))
            bar = self.min_p
        keep = [int(i) for i in np.argsort(-p, kind="stable") if p[i] >= bar][: self.max_sentences]
        by_fragment = self.judge is not None and (self.min_about_side is not None or self.on_topic is not None)
        if self.judge is not None:  # the judge's P(related) ranks poorly near 1: the relevance order is kept
            if by_fragment:
                stances = self._classified(query, [reviews[i] for i in keep])
                keep = [i for i, st in zip(keep, stances) if st != "neutral"]
                back = [i for i in keep if leans_back(reviews[i].text)]
                reviews = with_sentence_before(reviews, back)
                whole = {i: reviews[i].text for i in keep}
                near = self._near(query, question or query)
                focus = dict(zip(keep, closest_parts(near, list(whole.values()), fragments)))
                focus.update({i: whole[i] for i in back})  # judged and quoted with what it points back to
                reviews = [r.model_copy(update={"text": focus[i]}) if i in focus else r for i, r in enumerate(reviews)]
            sure = [
                self.on_topic is not None and self.sure_on_topic is not None and p[i] >= self.sure_on_topic
                for i in keep
            ]
            judged = self.judge.judge(question or query, [reviews[i].text for i in keep], sure, self.sure_share)
            keep = [i for i, (stance, _) in zip(keep, judged) if stance != "unrelated"]
            stances = [stance for stance, _ in judged if stance != "unrelated"]
            if by_fragment and self.whole_side:
                keep, stances = self._same_side_whole(question or query, reviews, whole, keep, stances)
            if self.on_topic is None and getattr(self.judge, "min_about", None) is not None:
                keep, stances = self._verified(question or query, reviews, keep, stances)
            if self.price_facet:
                keep, stances = self._on_price(question or query, reviews, keep, stances)
            if self.one_view_per_review:
                keep, stances = self._one_view_a_review(question or query, reviews, keep, stances)
            if self.on_topic is not None and self.on_topic_side is not None:
                keep, stances = self._sure_sides(p, keep, stances)
        if not keep:
            return None
        if by_fragment:  # judged by a fragment, quoted as its clause; a sentence read with the one before it, once
            reviews = [
                r.model_copy(update={"text": part_holding(whole[i], r.text)}) if i in whole else r
                for i, r in enumerate(reviews)
            ]
            keep, stances = self._once(reviews, set(back), keep, stances)
        chosen = [reviews[i] for i in keep]
        if self.judge is None:
            stances = self._classified(query, chosen)
        sentences = [
            s.model_copy(update={"stance": st, "score": round(float(p[i]), 4)})
            for s, st, i in zip(chosen, stances, keep)
        ]
        sides: dict = {}
        for s in sentences:
            sides.setdefault(s.doc_id, set()).add(s.stance)
        count = {"positive": 0, "negative": 0, "mixed": 0, "neutral": 0}
        for found in sides.values():
            found = found - {"neutral"}
            count["mixed" if len(found) == 2 else next(iter(found)) if found else "neutral"] += 1
        return Opinions(chosen[0].entity_name or str(entity_id), sentences, count)
