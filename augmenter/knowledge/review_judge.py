"""The LLM as judge of what one review sentence says about the user's question: praise, complaint or unrelated,
from the first answer token's log-probabilities (prompt `review_stance`). One scoring pass per sentence; the prompt's
instruction, examples and question are a prefix the sentences of a turn share, so the model evaluates each
sentence's own tokens only.

On 468 (question, sentence) pairs labelled by two labellers (bench/labels/opinions/, bench/opinion_pairs.py), the
embedded 1.5B model tells praise from complaint in 95% of the related sentences (the stored clause classifier:
81%), and `min_related`, chosen on the training folds, keeps most related sentences and drops half the unrelated."""

from __future__ import annotations

import math
from typing import Sequence

from augmenter.llm.base import SamplingParams
from augmenter.prompts.engine import PromptTemplate

LABELS = {"praise": "positive", "complaint": "negative", "unrelated": "unrelated"}


def label_of(token: str):
    """The label a first answer token begins ("Pr", "Compl", "U", ...), or None."""
    word = token.strip().strip("*\"'`.:").lower()
    if not word or (len(word) == 1 and not token.strip().isupper()):
        return None
    return next((name for name in LABELS if name.startswith(word) or word.startswith(name)), None)


class ReviewJudge:
    """`judge(question, sentences)` -> (stance, p) per sentence: "positive" or "negative" with the probability of
    being related to the question, or "unrelated" when that probability is below `min_related`."""

    def __init__(self, llm, prompt: str = "review_stance", min_related: float = 0.85, top_logprobs: int = 20):
        if not 0.0 <= min_related <= 1.0:
            raise ValueError(f"min_related is a probability in [0, 1], got {min_related}")
        self.llm, self.min_related = llm, min_related
        self.prompt = PromptTemplate.load(prompt)
        self.params = SamplingParams(max_tokens=1, temperature=0.0, logprobs=top_logprobs)

    def distribution(self, question: str, sentence: str) -> dict[str, float]:
        """P(praise), P(complaint), P(unrelated), renormalised over the three labels (uniform if none is seen)."""
        out = self.llm.complete(self.prompt.render(q=question, sentence=sentence), self.params)
        mass = {name: 0.0 for name in LABELS}
        for token, logprob in ((out.top_logprobs or [{}])[0]).items():
            name = label_of(token)
            if name:
                mass[name] += math.exp(logprob)
        if not any(mass.values()):  # a backend without log-probabilities: the answer word itself
            name = label_of(out.text)
            mass = {k: float(k == name) for k in LABELS} if name else {k: 1 / 3 for k in LABELS}
        total = sum(mass.values())
        return {k: v / total for k, v in mass.items()}

    def judge(self, question: str, sentences: Sequence[str]) -> list[tuple[str, float]]:
        out = []
        for sentence in sentences:
            d = self.distribution(question, sentence)
            related = d["praise"] + d["complaint"]
            side = "praise" if d["praise"] >= d["complaint"] else "complaint"
            out.append((LABELS[side] if related >= self.min_related else "unrelated", round(related, 4)))
        return out
