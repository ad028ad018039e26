"""Reviews in the turn's evidence: the opinion gatherer's settings (`OpinionSettings`, the consolidator's
`opinions` node), the evidence with the gathered opinions in place of the retrieved review sentences
(`with_opinions`), and whether the gathered line takes a side on the question (`takes_a_side`: the reviews' own
answer, declared to the state as the "opinions" kind's, see `augmenter.reviews.kinds`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Literal

from augmenter.errors import ConfigError
from augmenter.memory import EntityMention, Snippet
from augmenter.settings import Positive, Share

SIDES = ("positive", "negative", "mixed")


@dataclass(frozen=True)
class OpinionSettings:
    """How the consolidator gathers opinions: sentences of relevance >= `min_p`, at most `max_sentences` per entity;
    their stance by the stored classifier (`stance="model"`) or the LLM review judge (`"llm"`, with `min_related`,
    `min_about`, `about_by`: what its about-pass asks, and `stance_by`: what its stance pass asks, see `ReviewJudge`);
    `min_about_side`, `praise_about` and `whole_side`: see `OpinionGatherer`; `min_on_topic` (with `stance="llm"`):
    the packaged on-topic cross-encoder (`augmenter.reviews.on_topic`) picks the sentences on the question, in place
    of the relevance model and the judge's about-pass; the judge reads their side (`on_topic_side`, `sure_on_topic`,
    `one_view_per_review`, `price_facet`, `on_topic_parts`, `sure_share`: see `OpinionGatherer`)."""

    min_p: Share = 0.3
    max_sentences: Positive = 6
    stance: Literal["model", "llm"] = "model"
    min_related: Share = 0.85
    min_about: Share | None = None
    min_about_side: Share | None = None
    about_by: Literal["question", "topic", "either"] = "question"
    stance_by: Literal["question", "topic", "either"] = "question"
    praise_about: Share | None = None
    whole_side: bool = True
    min_on_topic: Share | None = None
    on_topic_side: Share | None = None
    sure_on_topic: Share | None = None
    one_view_per_review: bool = False
    price_facet: bool = False
    on_topic_parts: bool = False
    sure_share: Share = 0.0

    @classmethod
    def of(cls, value: OpinionSettings | Mapping | bool | None) -> OpinionSettings | None:
        """The settings a consolidator's `opinions` option names: None when off (false or null), the defaults for
        true, else the node's own (an unknown key is an error)."""
        if value is None or value is False:
            return None
        if value is True:
            return cls()
        if isinstance(value, cls):
            return value
        if not isinstance(value, Mapping):
            raise ConfigError(f"consolidator.opinions: true, false or a node of settings, got {value!r}")
        known = [f.name for f in fields(cls)]
        if unknown := sorted(set(value) - set(known)):
            raise ConfigError(f"consolidator.opinions: no setting {unknown[0]!r}; settings: {', '.join(known)}")
        return cls(**value)

    def gatherer(self, kb):
        """The opinion gatherer over `kb` (its judge is set by `judge` once an LLM is at hand)."""
        from augmenter.extras import ENCODER, require
        from augmenter.reviews.opinions import OpinionGatherer

        require(
            "chat",
            "the opinion gatherer (consolidator.opinions=true)",
            ENCODER,
            instead="consolidator.opinions=false utility=kf1 need no extra",
        )
        if self.stance not in ("model", "llm"):
            raise ValueError(f"opinions.stance must be model or llm, got {self.stance!r}")
        if self.min_on_topic is not None and self.stance != "llm":
            raise ConfigError("consolidator.opinions.min_on_topic needs stance=llm (the LLM tells the sides apart)")
        for name in ("one_view_per_review", "price_facet"):
            if getattr(self, name) and self.stance != "llm":
                raise ConfigError(f"consolidator.opinions.{name} needs stance=llm (it filters the LLM's sides)")
        for name in ("on_topic_side", "sure_on_topic", "on_topic_parts"):
            if getattr(self, name) not in (None, False) and self.min_on_topic is None:
                raise ConfigError(f"consolidator.opinions.{name} needs min_on_topic (the on-topic model's scores)")
        if self.sure_share and self.sure_on_topic is None:
            raise ConfigError("consolidator.opinions.sure_share needs sure_on_topic (the sentences it applies to)")
        on_topic = None
        if self.min_on_topic is not None:
            require(
                "chat",
                "the on-topic model (consolidator.opinions.min_on_topic)",
                (*ENCODER, "transformers", "safetensors"),
                instead="consolidator.opinions.min_on_topic=null",
            )
            from augmenter.reviews.on_topic import OnTopicModel

            on_topic = OnTopicModel.load()
        return OpinionGatherer(
            kb,
            min_p=self.min_p,
            max_sentences=self.max_sentences,
            min_about_side=self.min_about_side,
            praise_about=self.praise_about,
            whole_side=self.whole_side,
            on_topic=on_topic,
            min_on_topic=self.min_on_topic if self.min_on_topic is not None else 0.5,
            on_topic_side=self.on_topic_side,
            one_view_per_review=self.one_view_per_review,
            price_facet=self.price_facet,
            sure_on_topic=self.sure_on_topic,
            on_topic_parts=self.on_topic_parts,
            sure_share=self.sure_share,
        )

    @property
    def needs_llm(self) -> bool:
        return self.stance == "llm"

    def judge(self, llm):
        """The LLM review judge the gatherer asks (with `stance="llm"`)."""
        from augmenter.reviews.judge import ReviewJudge

        return ReviewJudge(
            llm,
            min_related=self.min_related,
            min_about=self.min_about,
            about_by=self.about_by,
            stance_by=self.stance_by,
        )


def with_opinions(
    gatherer, query: str, evidence: list[Snippet], entities: Sequence[EntityMention], question: str | None = None
) -> list[Snippet]:
    """The evidence's non-review snippets, then per linked entity (those the question names when it names any, at
    most three) a line that counts its reviews on each side (doc_type "opinions", its `stance` the split) and its
    review sentences on the aspect (positive, negative, neutral); the retrieved reviews of an entity without any
    sentence on the aspect stay as they were. `query`: the question without the entities' names."""
    out = [s for s in evidence if s.doc_type != "review"]
    gathered = set()
    named = [m for m in entities if m.in_query]  # the places the question names, when it names any
    for m in list(dict.fromkeys((m.domain, m.entity_id) for m in named or entities))[:3]:
        found = gatherer.gather(query, *m, question=question)
        if found is None:
            continue
        gathered.add(m)
        ref = found.sentences[0]
        out.append(
            Snippet(
                id=f"opinions:{ref.domain}:{ref.entity_id}",
                text=found.summary(),
                domain=ref.domain,
                entity_id=ref.entity_id,
                entity_name=ref.entity_name,
                doc_type="opinions",
                stance=found.split,
            )
        )
        order = {"positive": 0, "negative": 1, "neutral": 2}
        out += sorted(found.sentences, key=lambda s: order.get(s.stance or "neutral", 2))
    out += [s for s in evidence if s.doc_type == "review" and (s.domain, s.entity_id) not in gathered]
    return out


def takes_a_side(line: Snippet) -> bool:
    """Whether the opinion gatherer's line (doc_type "opinions") counts reviews that take a side on the question:
    then the reviews answer it."""
    return line.stance in SIDES
