"""Verifiers: judge one claim against evidence texts as SUPPORTED / REFUTED / NOT ENOUGH INFO, with p(supported).

- `FastVerifier`: no LLM call. MiniLM cosine to the evidence sentences plus lexical checks (numbers, prices,
  times, days, negations, names), combined by a stored logistic regression (`models/fast.json`).
- `LLMVerifier`: the LLM with the `verify_claim` prompt; p comes from the label's first-token log-probabilities
  where the backend returns them (llama.cpp, OpenAI-compatible servers with logprobs), else from the answer word.
- `CombinedVerifier`: the fast features and the LLM's label probabilities in one stored logistic regression
  (`models/combined.json`), the paper's footnote 2 on combining utilities.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from augmenter.llm.base import SamplingParams
from augmenter.memory import Verdict
from augmenter.settings import Cosine, Positive, Share
from augmenter.verification import lexical
from augmenter.verification.encoder import similarities
from augmenter.verification.model import StoredModel


@dataclass
class Judgement:
    verdict: Verdict
    p_supported: float
    evidence: list[int] = field(default_factory=list)  # indices into the evidence given, best first
    reason: str | None = None
    features: dict[str, float] = field(default_factory=dict)


class Verifier(Protocol):
    name: str

    def judge(self, claim: str, evidence: Sequence[str], context: str = "") -> Judgement: ...


_ENTITY = re.compile(r"^\[([^\]]+)\]")


def _bigrams(words: list[str]) -> set[tuple[str, str]]:
    return set(zip(words, words[1:]))


def new_words(claim: str, evidence: Sequence[str], context: str = "") -> list[str]:
    """The claim's content words (stemmed) that it does not get for free: not the question's (`context`), nor in the
    name of an entity the evidence is about ("[NAME] ...")."""
    asked = set(lexical.content_words(context)) | {
        w for unit in evidence for name in _ENTITY.findall(unit) for w in lexical.content_words(name)
    }
    return [w for w in lexical.content_words(claim) if w not in asked]


def missing_words(claim: str, evidence: Sequence[str], context: str = "") -> list[str]:
    """The words a claim adds to the knowledge, each once, in the claim's order ("rooftop", "bar" in "a heated
    rooftop pool with a bar" against "an indoor heated pool"): its content words that no evidence text holds, less
    the names of the places the evidence is about ("[NAME] ..."), the words that attribute or count rather than
    state (`lexical.FRAMING`: "guests found", "one said"), and the question's (`context`) unless the claim is
    negated: "Do they sell alcoholic beverages?" answered "Yes, they sell alcoholic beverages" against "they serve
    alcohol" paraphrases the question, but "There is no nice view" answering "Is there a nice view?" states what
    the knowledge must hold (a FAQ that "there is no lift" does not). The question's comparatives are never free:
    "Which is best?" answered "X is best" claims a ranking the knowledge must state."""
    held = {w for unit in evidence for w in lexical.content_words(unit)}
    free = {w for unit in evidence for name in _ENTITY.findall(unit) for w in lexical.content_words(name)}
    if not lexical.negated(claim):
        free |= {w for w in lexical.content_words(context) if w not in lexical.COMPARATIVES}
    missing = {w for w in lexical.content_words(claim) if w not in held and w not in free and w not in lexical.FRAMING}
    surface = [t for t in lexical.tokens(claim) if t not in lexical.STOPWORDS]  # the claim's own words, for feedback
    return list(dict.fromkeys(t for t, stem in zip(surface, lexical.stem_words(surface)) if stem in missing))


def fast_features(
    claim: str, evidence: Sequence[str], context: str = ""
) -> tuple[dict[str, float], list[int], str | None]:
    """The fast verifier's features, the evidence order by similarity (best first) and the lexical conflict found.
    (The claim's length is deliberately not a feature: in labelled sets it tells more about how the set was made
    than about support.)

    Coverage features count the claim's content words that are new (not already in `context`, e.g. the question a
    short answer replies to, nor in the name of an entity the evidence is about, "[NAME] ..."), so that repeating
    the question or the place's name earns nothing."""
    sims = similarities(claim, list(evidence)) if evidence else np.zeros(0)
    order = [int(i) for i in np.argsort(-sims, kind="stable")]
    words = lexical.content_words(claim)
    new = new_words(claim, evidence, context) or words
    best = evidence[order[0]] if order else ""
    top3 = " ".join(evidence[i] for i in order[:3])
    everything = " ".join(evidence)
    best_words, top_words, all_words = (set(lexical.content_words(t)) for t in (best, top3, everything))

    def cover(pool):
        return sum(w in pool for w in new) / len(new) if new else 0.0

    bigrams = _bigrams(words)
    claim_numbers, top_numbers, all_numbers = (lexical.numbers(t) for t in (claim, top3, everything))
    claim_days, top_days = lexical.days(claim), lexical.days(top3)
    max_sim = float(sims[order[0]]) if order else 0.0
    number_conflict = bool(claim_numbers and top_numbers and not (claim_numbers & top_numbers))
    day_conflict = bool(claim_days and top_days and not (claim_days & top_days))
    names = frozenset(w for unit in evidence for name in _ENTITY.findall(unit) for w in lexical.content_words(name))
    claim_negative, best_negative, overlap = (
        lexical.polarity_against(claim, best, names) if best else (False, False, 0.0)
    )
    negation_conflict = bool(best) and claim_negative != best_negative and overlap >= 0.5
    features = {
        "max_sim": max_sim,
        "top3_sim": float(np.mean(sims[order[:3]])) if order else 0.0,
        "cover_best": cover(best_words),
        "cover_top3": cover(top_words),
        "cover_all": cover(all_words),
        "missing_words": float(min(5, sum(w not in all_words for w in set(new)))),
        "bigram_cover": (len(bigrams & _bigrams(lexical.content_words(everything))) / len(bigrams)) if bigrams else 0.0,
        "numbers_missing": lexical.share_missing(claim_numbers, all_numbers),
        "number_conflict": float(number_conflict),
        "days_missing": lexical.share_missing(claim_days, lexical.days(everything)),
        "day_conflict": float(day_conflict),
        "negation_conflict": float(negation_conflict) * max_sim,
        "names_missing": lexical.share_missing(
            lexical.names(claim), all_words | {w.lower() for w in lexical.tokens(everything)}
        ),
        "no_evidence": float(not evidence),
    }
    reason = None
    if number_conflict:
        reason = f"the evidence says {', '.join(sorted(top_numbers))}, the claim {', '.join(sorted(claim_numbers))}"
    elif day_conflict:
        reason = f"the evidence names {', '.join(sorted(top_days))}, the claim {', '.join(sorted(claim_days))}"
    elif negation_conflict and max_sim >= 0.5:
        reason = "the evidence says the opposite" if best_negative else "the evidence says it is so"
    return features, order, reason


class FastVerifier:
    """MiniLM similarity + lexical checks, combined by a stored logistic regression.

    REFUTED when a lexical conflict (another number, day, or the opposite polarity) shows in evidence at least
    `refute_similarity` similar to the claim, whatever p; else SUPPORTED when p >= the model's threshold; NOT
    ENOUGH INFO otherwise."""

    name = "fast"

    def __init__(self, model: str = "fast", threshold: Share | None = None, refute_similarity: Cosine = 0.5):
        self.model = StoredModel.load(model)
        self.threshold = self.model.threshold if threshold is None else threshold
        self.refute_similarity = refute_similarity

    def features(self, claim: str, evidence: Sequence[str], context: str = "") -> tuple[dict, list[int], str | None]:
        return fast_features(claim, evidence, context)

    def verdict(self, p: float, features: dict[str, float], reason: str | None) -> Verdict:
        if reason and features.get("max_sim", 0.0) >= self.refute_similarity:
            return Verdict.REFUTED
        return Verdict.SUPPORTED if p >= self.threshold else Verdict.NOT_ENOUGH_INFO

    def judge(self, claim: str, evidence: Sequence[str], context: str = "") -> Judgement:
        features, order, reason = self.features(claim, evidence, context)
        p = float(self.model.predict_proba(features))  # one item's features: one probability
        verdict = self.verdict(p, features, reason)
        if verdict == Verdict.REFUTED:  # the rule overrides the regression: the closer the evidence, the surer
            p = min(p, 1.0 - features.get("max_sim", 0.0))
        return Judgement(verdict, p, order[:3], reason, features)


LABELS = {Verdict.SUPPORTED: "SUPPORTED", Verdict.REFUTED: "REFUTED", Verdict.NOT_ENOUGH_INFO: "NOT ENOUGH INFO"}


def label_of(token: str) -> Verdict | None:
    """The label an answer token begins: "SUP" or "S" -> SUPPORTED, "RE" or "R" -> REFUTED, "NOT", "NO" or "N" ->
    NOT ENOUGH INFO (the prompt's three labels only: a "NO" is never read as REFUTED). One letter counts: Qwen's
    tokenizer often starts "SUPPORTED" with the token "S", so ignoring one-letter tokens loses most of the label's
    mass. The letter must be upper case ("I", "A", "s" start no label)."""
    word = token.strip().strip("*\"'`.:")
    if not word or (len(word) == 1 and not word.isupper()):
        return None
    word = word.upper()
    for verdict, name in LABELS.items():
        if name.startswith(word) or word.startswith(name):
            return verdict
    return None


def label_distribution(top_logprobs: list[dict[str, float]] | None, text: str) -> dict[Verdict, float]:
    """P(label) from the log-probabilities of the first answer token that carries label mass (a leading "**" or
    newline is skipped), summed per label and renormalised over the labels; from the answer word alone when the
    backend gave none (1 for the label said, 0 for the others)."""
    mass = {v: 0.0 for v in Verdict}
    for position in top_logprobs or []:
        for token, logprob in position.items():
            verdict = label_of(token)
            if verdict is not None:
                mass[verdict] += math.exp(logprob)
        if sum(mass.values()) > 0:
            break
    total = sum(mass.values())
    if total > 0:
        return {v: m / total for v, m in mass.items()}
    said = label_of(text.split()[0]) if text.split() else None
    if said is None:
        return {Verdict.SUPPORTED: 0.0, Verdict.REFUTED: 0.0, Verdict.NOT_ENOUGH_INFO: 1.0}
    return {v: float(v == said) for v in Verdict}


class LLMVerifier:
    """The LLM judges the claim against the (at most `max_evidence` most similar) evidence sentences."""

    name = "llm"

    def __init__(self, llm, prompts, threshold: Share = 0.5, max_evidence: Positive = 4, top_logprobs: Positive = 10):
        self.llm, self.prompts, self.threshold = llm, prompts, threshold
        self.max_evidence = max_evidence
        self.params = SamplingParams(max_tokens=4, temperature=0.0, logprobs=top_logprobs)

    def distribution(
        self, claim: str, evidence: Sequence[str], context: str = ""
    ) -> tuple[dict[Verdict, float], list[int]]:
        order = [int(i) for i in np.argsort(-similarities(claim, list(evidence)), kind="stable")] if evidence else []
        shown = [evidence[i] for i in order[: self.max_evidence]]
        out = self.llm.complete(self.prompts.verify_claim(claim, shown, context), self.params)
        return label_distribution(out.top_logprobs, out.text), order

    def judge(self, claim: str, evidence: Sequence[str], context: str = "") -> Judgement:
        dist, order = self.distribution(claim, evidence, context)
        p = dist[Verdict.SUPPORTED]
        if p >= self.threshold:
            verdict = Verdict.SUPPORTED
        else:
            refuted = dist[Verdict.REFUTED] > dist[Verdict.NOT_ENOUGH_INFO]
            verdict = Verdict.REFUTED if refuted else Verdict.NOT_ENOUGH_INFO
        features = {f"llm_{v.value}": q for v, q in dist.items()}
        return Judgement(verdict, p, order[:3], None, features)


class CombinedVerifier(FastVerifier):
    """Fast features + the LLM's label probabilities in one stored logistic regression."""

    name = "combined"

    def __init__(
        self,
        llm,
        prompts,
        model: str = "combined",
        threshold: Share | None = None,
        refute_similarity: Cosine = 0.5,
        max_evidence: Positive = 4,
        top_logprobs: Positive = 10,
    ):
        super().__init__(model, threshold, refute_similarity)
        self.llm_verifier = LLMVerifier(llm, prompts, max_evidence=max_evidence, top_logprobs=top_logprobs)

    def features(self, claim: str, evidence: Sequence[str], context: str = "") -> tuple[dict, list[int], str | None]:
        features, order, reason = fast_features(claim, evidence, context)
        dist, _ = self.llm_verifier.distribution(claim, evidence, context)
        features.update({f"llm_{v.value}": q for v, q in dist.items()})
        if reason is None and dist[Verdict.REFUTED] > 0.5:
            reason = "the language model judges it contradicted by the evidence"
        return features, order, reason
