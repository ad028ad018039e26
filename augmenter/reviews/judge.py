"""The LLM as judge of what one review sentence says about the user's question: praise, complaint or unrelated,
from the first answer token's log-probabilities (prompt `review_stance`). One scoring pass per sentence; the prompt's
instruction, examples and question are a prefix the sentences of a turn share, so the model evaluates each
sentence's own tokens only.

On 468 (question, sentence) pairs labelled by two labellers (bench/labels/opinions/, bench/opinion_pairs.py), the
embedded 1.5B model tells praise from complaint in 95% of the related sentences (the stored clause classifier:
81%), and `min_related`, chosen on the training folds, keeps most related sentences and drops half the unrelated."""

from __future__ import annotations

import math
from collections.abc import Sequence

from augmenter.llm.base import SamplingParams
from augmenter.prompts.engine import PromptTemplate

LABELS = {"praise": "positive", "complaint": "negative", "unrelated": "unrelated"}
ABOUT_BY = ("question", "topic", "either")


def label_of(token: str):
    """The label a first answer token begins ("Pr", "Compl", "U", ...), or None."""
    word = token.strip().strip("*\"'`.:").lower()
    if not word or (len(word) == 1 and not token.strip().isupper()):
        return None
    return next((name for name in LABELS if name.startswith(word) or word.startswith(name)), None)


class ReviewJudge:
    """`judge(question, sentences)` -> (stance, p) per sentence: "positive" or "negative" with the probability of
    being related to the question, or "unrelated" when that probability is below `min_related`. `about(question,
    sentence)`: a second, yes/no pass on whether a sentence speaks to exactly what was asked, for the sentence a
    reply will quote (`min_about`: the probability it needs; None: not asked).

    `about_by="topic"` asks that pass of the question's topic, named without a side ("noise" for "Is it quiet?":
    `topic`, one short generation per question), so that a sentence on the other side ("it is quite noisy") is
    not read as off the question; "either" takes the higher of the two."""

    def __init__(
        self,
        llm,
        prompt: str = "review_stance",
        min_related: float = 0.85,
        top_logprobs: int = 20,
        about_prompt: str = "review_about",
        min_about: float | None = None,
        about_by: str = "question",
        topic_prompt: str = "review_topic",
        about_topic_prompt: str = "review_about_topic",
        stance_by: str = "question",
        stance_topic_prompt: str = "review_stance_topic",
    ):
        for name, value in (("min_related", min_related), ("min_about", min_about)):
            if value is not None and not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} is a probability in [0, 1], got {value}")
        for name, value in (("about_by", about_by), ("stance_by", stance_by)):
            if value not in ABOUT_BY:
                raise ValueError(f"{name} must be one of {', '.join(ABOUT_BY)}, got {value!r}")
        self.llm, self.min_related, self.min_about, self.about_by = llm, min_related, min_about, about_by
        self.stance_by = stance_by
        self.prompt = PromptTemplate.load(prompt)
        self.about_prompt = PromptTemplate.load(about_prompt)
        if (about_by, stance_by) != ("question", "question"):
            self.topic_prompt = PromptTemplate.load(topic_prompt)
        if about_by != "question":
            self.about_topic_prompt = PromptTemplate.load(about_topic_prompt)
        if stance_by != "question":
            self.stance_topic_prompt = PromptTemplate.load(stance_topic_prompt)
        self.params = SamplingParams(max_tokens=1, temperature=0.0, logprobs=top_logprobs)
        self._topics: dict[str, str] = {}
        self._faq_prompt: PromptTemplate | None = None

    def distribution(self, question: str, sentence: str) -> dict[str, float]:
        """P(praise), P(complaint), P(unrelated), renormalised over the three labels (uniform if none is seen)."""
        return self._distribution(self.prompt.render(q=question, sentence=sentence))

    def topic_distribution(self, question: str, sentence: str) -> dict[str, float]:
        """`distribution` asked of the question's topic (`topic`): what the sentence says of the place on it."""
        return self._distribution(self.stance_topic_prompt.render(topic=self.topic(question), sentence=sentence))

    def _distribution(self, messages) -> dict[str, float]:
        out = self.llm.complete(messages, self.params)
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

    def topic(self, question: str) -> str:
        """What `question` asks about, named without a side ("noise" for "Is it quiet?"); the question itself when
        the model names nothing. One generation per question."""
        if question not in self._topics:
            params = SamplingParams(max_tokens=12, temperature=0.0)
            out = self.llm.complete(self.topic_prompt.render(q=question), params)
            named = out.text.strip().split("\n")[0].strip(" .\"'")
            self._topics[question] = named if 0 < len(named.split()) <= 6 else question
        return self._topics[question]

    def about(self, question: str, sentence: str) -> float:
        """P(the sentence speaks to exactly what was asked), from the Yes/No answer's first token (prompt
        `review_about`, or of the question's topic: `about_by`); 0.5 when neither is seen."""
        return self.about_each(question, [sentence], enough=math.inf)[0]

    def about_each(
        self, question: str, sentences: Sequence[str], enough: float, asked_at_least: float | None = None
    ) -> list[float]:
        """`about` of each sentence in order, up to the first that reaches `enough` (the rest are not asked). Each
        pass runs over the sentences in a row, so that the model reuses its prompt's prefix (with "either", the
        topic's pass first, then the question's up to where the topic's reached `enough`).

        `asked_at_least` (with a topic's pass): a sentence counts only where the question's own pass reaches it too
        (its score is the question's pass where that falls short): the topic's pass keeps general praise ("This
        hotel is awesome" for comfortable beds) that the question's does not."""
        if asked_at_least is not None and self.about_by != "question":
            return self._walk_both(question, sentences, enough, asked_at_least)
        if self.about_by == "question":
            return self._walk([self.about_prompt.render(q=question, sentence=s) for s in sentences], enough)
        topic = self.topic(question)
        on_topic = self._walk([self.about_topic_prompt.render(topic=topic, sentence=s) for s in sentences], enough)
        if self.about_by == "topic":
            return on_topic
        asked = self._walk(
            [self.about_prompt.render(q=question, sentence=s) for s in sentences[: len(on_topic)]], enough
        )
        return [max(t, q) for t, q in zip(on_topic, asked)]  # shorter where the question's pass reached it first

    def _walk_both(self, question: str, sentences: Sequence[str], enough: float, asked_at_least: float) -> list[float]:
        """Per sentence, the question's pass, then (where it reaches `asked_at_least` but not `enough`) the topic's;
        up to the first sentence that reaches `enough`."""
        topic, seen = self.topic(question), []
        for sentence in sentences:
            asked = self._yes(self.about_prompt.render(q=question, sentence=sentence))
            if asked_at_least <= asked < enough:
                on_topic = self._yes(self.about_topic_prompt.render(topic=topic, sentence=sentence))
                asked = max(asked, on_topic) if self.about_by == "either" else on_topic
            seen.append(asked)
            if asked >= enough:
                break
        return seen

    def _walk(self, prompts: list, enough: float) -> list[float]:
        seen: list[float] = []
        for messages in prompts:
            seen.append(self._yes(messages))
            if seen[-1] >= enough:
                break
        return seen

    def _yes(self, messages) -> float:
        out = self.llm.complete(messages, self.params)
        yes = no = 0.0
        for token, logprob in ((out.top_logprobs or [{}])[0]).items():
            word = token.strip().strip("*\"'`.:").lower()
            if word in ("yes", "ye", "y"):
                yes += math.exp(logprob)
            elif word in ("no", "n"):
                no += math.exp(logprob)
        if not yes + no:  # a backend without log-probabilities: the answer word itself
            word = out.text.strip().lower()
            return 1.0 if word.startswith("yes") else 0.0 if word.startswith("no") else 0.5
        return yes / (yes + no)

    def answers(self, question: str, faq: str) -> float:
        """P(the FAQ entry answers the question), from the Yes/No answer's first token (prompt `faq_answers`)."""
        if self._faq_prompt is None:
            self._faq_prompt = PromptTemplate.load("faq_answers")
        return self._yes(self._faq_prompt.render(q=question, faq=faq))

    def judge(
        self, question: str, sentences: Sequence[str], sure: Sequence[bool] = (), share: float = 0.0
    ) -> list[tuple[str, float]]:
        """(stance, P(related)) of each sentence, asked as `stance_by` says: of the question, of its topic, or
        "either": the topic's side where that pass finds the sentence related, else the question's (asked only of
        those). Each pass runs over the sentences in a row, so that the model reuses its prompt's prefix. `sure`:
        per sentence, whether another model found it on the question: its likelier side is taken whatever its
        P(related) (the judge reads some plainly on the question as unrelated), where that side holds `share` of the
        distribution or more ("The location was extremely silent" read 0.51 praise, 0.33 complaint: a side the judge
        barely prefers may flip between runs)."""
        found: list[tuple[str, float, float] | None] = [None] * len(sentences)  # side, P(related), P(side)
        if self.stance_by != "question":
            for i, sentence in enumerate(sentences):
                found[i] = _read(self.topic_distribution(question, sentence))
        if self.stance_by != "topic":
            for i, sentence in enumerate(sentences):
                if found[i] is None or found[i][1] < self.min_related:
                    found[i] = _read(self.distribution(question, sentence))
        sure = list(sure) + [False] * (len(found) - len(sure))
        return [
            (LABELS[side] if related >= self.min_related or on and p >= share else "unrelated", round(related, 4))
            for (side, related, p), on in zip(found, sure)
        ]


def _read(d: dict[str, float]) -> tuple[str, float, float]:
    """A distribution's likelier side, P(related) and the side's probability."""
    side = praise_or_complaint(d)
    return side, d["praise"] + d["complaint"], d[side]


def praise_or_complaint(d: dict[str, float]) -> str:
    """ "praise" or "complaint", whichever a distribution holds more of."""
    return "praise" if d["praise"] >= d["complaint"] else "complaint"
