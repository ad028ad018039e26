"""Issue 28's checked system on hand-made cases of each failure type: opinions gathered from all reviews with their
stance and a count per side; a one-sided summary of mixed reviews is not supported; an off-topic answer, an "I don't
know" the evidence answers and an "I don't know" followed by an answer all fail with feedback that says what was
asked."""

from __future__ import annotations

import pytest

from augmenter.knowledge.base import Entity, KnowledgeBase
from augmenter.knowledge.opinions import OpinionGatherer, StanceModel, clauses
from augmenter.memory import EntityMention, Snippet, Verdict, WorkingMemory
from augmenter.utilities import ClaimsUtility
from augmenter.utilities.answers import IDK_AND_ANSWER, IDK_WRONG, AnswersQuestion
from augmenter.verification import FastVerifier
from augmenter.verification.balance import one_sided

NAME = "LENSFIELD HOTEL"
REVIEWS = [  # (review, sentence): two reviews praise the bathrooms, one complains, others are about other things
    (0, "The bathroom was really clean and smelled fresh."), (0, "Breakfast was served until ten."),
    (1, "We loved how clean our bathroom was."), (1, "The staff at the desk were friendly."),
    (2, "There were stray hairs in the bathroom and the shower was dirty."), (2, "The bed was comfortable."),
    (3, "Parking was easy to find nearby."), (4, "The lobby has a piano that guests can play."),
]


def _kb() -> KnowledgeBase:
    snippets = [Snippet(id=f"hotel:1:review:{r}:{i}", text=t, domain="hotel", entity_id=1, entity_name=NAME,
                        doc_type="review", doc_id=r, sent_id=i) for i, (r, t) in enumerate(REVIEWS)]
    snippets.append(Snippet(id="hotel:1:faq:0", text="Q: Is there a laundry? A: Yes, the hotel has a laundry room.",
                            domain="hotel", entity_id=1, entity_name=NAME, doc_type="faq", doc_id=0))
    return KnowledgeBase(snippets, [Entity(1, "Lensfield Hotel", "hotel")])


@pytest.fixture(scope="module")
def gathered():
    kb = _kb()
    return kb, OpinionGatherer(kb).gather("Are the bathrooms clean?", "hotel", 1)


def test_clauses_cut_where_a_sentence_turns():
    assert clauses("The bathroom was clean but the room was small.") == ["The bathroom was clean", "the room was small"]
    assert clauses("While the wifi was slow, the breakfast was great.") == ["the wifi was slow", "the breakfast was great"]
    assert clauses("Nice and quiet.") == ["Nice and quiet"]


def test_stance_model_tells_praise_from_complaint():
    # 80% accurate out of fold (bench/results/opinions.json); a known miss: "spotless" reads as a complaint
    stances = [s for s, _ in StanceModel.load().predict(
        ["The bathroom was really clean", "There were stray hairs in the bathroom", "I ordered the curry"])]
    assert stances == ["positive", "negative", "neutral"]


def test_opinions_gather_every_review_on_the_aspect_and_count_each_side(gathered):
    _, found = gathered
    texts = [s.text for s in found.sentences]
    assert {REVIEWS[0][1], REVIEWS[2][1], REVIEWS[4][1]} <= set(texts)  # all three bathroom sentences, from 3 reviews
    assert REVIEWS[7][1] not in texts  # the piano is not about bathrooms
    stance = {s.text: s.stance for s in found.sentences}
    assert stance[REVIEWS[0][1]] == stance[REVIEWS[2][1]] == "positive" and stance[REVIEWS[4][1]] == "negative"
    assert found.split == "mixed" and found.reviews["positive"] >= 2 and found.reviews["negative"] >= 1
    assert found.summary().startswith("Reviews that mention this:") and "negative" in found.summary()


def _memory(kb, found, q="Are the bathrooms clean at the Lensfield Hotel?") -> WorkingMemory:
    digest = Snippet(id="opinions:hotel:1", text=found.summary(), domain="hotel", entity_id=1, entity_name=NAME,
                     doc_type="opinions", stance=found.split)
    faq = kb.snippets[-1]
    return WorkingMemory(q=q, e=[faq, digest, *found.sentences], consolidated=True,
                         entities=[EntityMention(domain="hotel", entity_id=1, name="Lensfield Hotel",
                                                 surface="lensfield hotel", in_query=True)])


def test_a_one_sided_summary_of_mixed_reviews_is_not_supported(gathered):
    kb, found = gathered
    mem = _memory(kb, found)
    cited = [s.id for s in found.sentences[:2]]
    assert one_sided("The Lensfield Hotel has clean bathrooms.", cited, mem) is not None
    assert one_sided("Most guests found the bathrooms clean, but one found stray hairs.", cited, mem) is None
    utility = ClaimsUtility(FastVerifier())
    checks = utility.check(mem, "The bathrooms at the Lensfield Hotel are clean.")
    assert checks[0].verdict == Verdict.NOT_ENOUGH_INFO and "mixed" in checks[0].reason
    hedged = utility.check(mem, "Two guests found the bathroom very clean, but one found stray hairs in it.")
    assert all("mixed" not in (c.reason or "") for c in hedged)
    assert ClaimsUtility(FastVerifier(), balance=False).check(mem, "The bathrooms are clean.")[0].reason is None


def test_an_off_topic_answer_fails_with_what_was_asked(gathered):
    kb, found = gathered
    mem = _memory(kb, found)
    check = AnswersQuestion()
    result = check(mem, "Yes, the Lensfield Hotel has a laundry room.")
    assert not result.passed and 'The user asked: "Are the bathrooms clean' in result.feedback
    assert "stray hairs" in result.feedback or "really clean" in result.feedback  # quotes what the knowledge says on it
    assert check(mem, "Two guests found the bathrooms very clean, but one found stray hairs.").passed


def test_i_dont_know_is_revised_when_the_evidence_answers(gathered):
    kb, found = gathered
    mem = _memory(kb, found)
    check = AnswersQuestion()
    result = check(mem, "I'm sorry, I don't have that information.")
    assert not result.passed and result.feedback.startswith(IDK_WRONG)
    both = check(mem, "I don't have that information. The bathrooms were really clean.")
    assert not both.passed and both.feedback.startswith(IDK_AND_ANSWER)
    # nothing in the evidence answers: "I don't know" passes
    empty = WorkingMemory(q="Do they have a rooftop bar?", e=[kb.snippets[-1]], consolidated=True)
    assert check(empty, "I don't have that information.").passed


def test_a_faq_that_answers_counts_as_answering_evidence():
    faq = Snippet(id="f", text="Q: Is there free parking? A: No, parking costs 15 pounds per day.", doc_type="faq",
                  entity_name="GRAND MERIDIAN HOTEL")
    gym = Snippet(id="g", text="Q: Do you have a gym? A: The fitness centre is open 24 hours.", doc_type="faq")
    mem = WorkingMemory(q="Does the Grand Meridian Hotel have free parking?", e=[faq, gym], consolidated=True)
    check = AnswersQuestion()
    assert [s.id for s in check.answering_evidence(mem)] == ["f"]
    assert not check(mem, "I don't have that information.").passed
    assert not check(mem, "The fitness centre is open 24 hours.").passed  # off-topic
    assert check(mem, "No, parking costs 15 pounds per day.").passed
