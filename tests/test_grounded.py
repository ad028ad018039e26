"""The checked system on hand-made cases of each failure type: opinions gathered from all reviews with their
stance and a count per side; a one-sided summary of mixed reviews is not supported; an off-topic answer, an "I don't
know" the evidence answers and an "I don't know" followed by an answer all fail with feedback that says what was
asked."""

from __future__ import annotations

import pytest

from augmenter.knowledge.base import Entity, KnowledgeBase
from augmenter.memory import EntityMention, Snippet, Verdict, WorkingMemory
from augmenter.reviews.balance import one_sided
from augmenter.reviews.opinions import OpinionGatherer, StanceModel, clauses
from augmenter.utilities import ClaimsUtility
from augmenter.utilities.answers import IDK_AND_ANSWER, IDK_WRONG, AnswersQuestion
from augmenter.verification import FastVerifier
from augmenter.verification.encoder import embed

NAME = "LENSFIELD HOTEL"
REVIEWS = [  # (review, sentence): two reviews praise the bathrooms, one complains, others are about other things
    (0, "The bathroom was really clean and smelled fresh."),
    (0, "Breakfast was served until ten."),
    (1, "We loved how clean our bathroom was."),
    (1, "The staff at the desk were friendly."),
    (2, "There were stray hairs in the bathroom and the shower was dirty."),
    (2, "The bed was comfortable."),
    (3, "Parking was easy to find nearby."),
    (4, "The lobby has a piano that guests can play."),
]


def _kb() -> KnowledgeBase:
    snippets = [
        Snippet(
            id=f"hotel:1:review:{r}:{i}",
            text=t,
            domain="hotel",
            entity_id=1,
            entity_name=NAME,
            doc_type="review",
            doc_id=r,
            sent_id=i,
        )
        for i, (r, t) in enumerate(REVIEWS)
    ]
    snippets.append(
        Snippet(
            id="hotel:1:faq:0",
            text="Q: Is there a laundry? A: Yes, the hotel has a laundry room.",
            domain="hotel",
            entity_id=1,
            entity_name=NAME,
            doc_type="faq",
            doc_id=0,
        )
    )
    return KnowledgeBase(snippets, [Entity(1, "Lensfield Hotel", "hotel")])


@pytest.fixture(scope="module")
def gathered():
    kb = _kb()
    return kb, OpinionGatherer(kb).gather("Are the bathrooms clean?", "hotel", 1)


def test_clauses_cut_where_a_sentence_turns():
    assert clauses("The bathroom was clean but the room was small.") == ["The bathroom was clean", "the room was small"]
    assert clauses("While the wifi was slow, the breakfast was great.") == [
        "the wifi was slow",
        "the breakfast was great",
    ]
    assert clauses("Nice and quiet.") == ["Nice and quiet"]


def test_stance_model_tells_praise_from_complaint():
    # 80% accurate out of fold (bench/results/opinions.json); a known miss: "spotless" reads as a complaint
    stances = [
        s
        for s, _ in StanceModel.load().predict(
            ["The bathroom was really clean", "There were stray hairs in the bathroom", "I ordered the curry"]
        )
    ]
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
    digest = Snippet(
        id="opinions:hotel:1",
        text=found.summary(),
        domain="hotel",
        entity_id=1,
        entity_name=NAME,
        doc_type="opinions",
        stance=found.split,
    )
    faq = kb.snippets[-1]
    return WorkingMemory(
        q=q,
        e=[faq, digest, *found.sentences],
        consolidated=True,
        entities=[
            EntityMention(domain="hotel", entity_id=1, name="Lensfield Hotel", surface="lensfield hotel", in_query=True)
        ],
    )


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


def test_the_claims_utility_holds_a_supported_claim_to_its_injected_balance_check(gathered):
    from augmenter.reviews import ReviewBalance

    kb, found = gathered
    mem = _memory(kb, found)
    asked = []

    def memo(claim, cited, m):
        asked.append((claim, list(cited)))
        return "the memo says otherwise"

    checks = ClaimsUtility(FastVerifier(), balance_check=memo).check(
        mem, "The bathrooms at the Lensfield Hotel are clean."
    )
    assert checks[0].verdict == Verdict.NOT_ENOUGH_INFO and checks[0].reason == "the memo says otherwise"
    assert asked and asked[0][1] == [r.id for r in checks[0].evidence]
    assert isinstance(ClaimsUtility(FastVerifier()).balance_check, ReviewBalance)  # the default: the reviews' check


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


def test_a_faq_is_found_by_its_own_question_where_its_answer_dilutes_the_whole():
    """A FAQ answers a question close to its own question though its whole text, answer and place name included, is
    further than `min_faq` (0.45 here; its question without the name, 0.66)."""
    faq = Snippet(
        id="f",
        text="Q: Do you have outdoor seating? A: There is no seating outdoors at Ugly Duckling.",
        doc_type="faq",
        entity_name="UGLY DUCKLING",
        domain="restaurant",
        entity_id=1,
    )
    named = faq.model_copy(update={"id": "n", "text": "Q: Is there outdoor seating at Ugly Duckling? A: No."})
    mem = WorkingMemory(q="Do they have a nice area for outdoor dining?", e=[faq], consolidated=True)
    check = AnswersQuestion(min_faq=0.6)
    assert embed([check.question(mem), faq.text])[1] @ embed([check.question(mem)])[0] < 0.6
    assert check.answering_faqs(mem) == [faq]
    assert check.answering_faqs(mem.model_copy(update={"e": [named]})) == [named]
    off = faq.model_copy(update={"text": "Q: Do you have a gym? A: The fitness centre is open 24 hours."})
    assert check.answering_faqs(mem.model_copy(update={"e": [off]})) == []


def test_a_faq_that_answers_counts_as_answering_evidence():
    faq = Snippet(
        id="f",
        text="Q: Is there free parking? A: No, parking costs 15 pounds per day.",
        doc_type="faq",
        entity_name="GRAND MERIDIAN HOTEL",
        domain="hotel",
        entity_id=1,
    )
    gym = Snippet(
        id="g",
        text="Q: Do you have a gym? A: The fitness centre is open 24 hours.",
        doc_type="faq",
        domain="hotel",
        entity_id=1,
    )
    elsewhere = Snippet(
        id="o",
        text="Q: Is there free parking? A: Yes, parking is free.",
        doc_type="faq",
        entity_name="RIVERSIDE LODGE",
        domain="hotel",
        entity_id=0,
    )  # another place's answer
    mem = WorkingMemory(
        q="Does the Grand Meridian Hotel have free parking?",
        e=[faq, gym, elsewhere],
        consolidated=True,
        entities=[
            EntityMention(
                domain="hotel", entity_id=1, name="Grand Meridian Hotel", surface="grand meridian hotel", in_query=True
            )
        ],
    )
    check = AnswersQuestion()
    assert [s.id for s in check.answering_evidence(mem)] == ["f"]
    assert not check(mem, "I don't have that information.").passed
    assert not check(mem, "The fitness centre is open 24 hours.").passed  # off-topic
    assert check(mem, "No, parking costs 15 pounds per day.").passed


# ---- the LLM as judge of each review sentence on the question; replies in the knowledge's own words --------------
def _scripted_judge_llm(labels: dict[str, dict[str, float]]):
    """A fake LLM whose first-token label probabilities depend on the review sentence in the prompt."""
    import math

    from augmenter.llm.base import Completion
    from augmenter.llm.fake import FakeLLM

    def reply(messages):
        said = messages[-1]["content"].split("Review sentence:")[-1].strip()
        sentence = next((t for _, t in REVIEWS if said in t), said)  # a fragment answers as its sentence
        probs = labels.get(sentence, {"Un": 0.9, "Pr": 0.05, "Com": 0.05})
        return Completion(text=max(probs, key=probs.get), top_logprobs=[{k: math.log(v) for k, v in probs.items()}])

    return FakeLLM(default=reply)


def test_review_judge_reads_the_label_probabilities_and_drops_unrelated_sentences():
    from augmenter.reviews.judge import ReviewJudge, label_of

    assert [label_of(t) for t in ("Pr", " praise", "Com", "U", "u", "The")] == [
        "praise",
        "praise",
        "complaint",
        "unrelated",
        None,
        None,
    ]
    llm = _scripted_judge_llm(
        {
            "The room was clean, not a spot anywhere.": {"Pr": 0.85, "Com": 0.1, "Un": 0.05},
            "Also, it is quite noisy.": {"Com": 0.6, "Pr": 0.3, "Un": 0.1},
            "We stayed in May.": {"Un": 0.7, "Pr": 0.25, "Com": 0.05},
        }
    )
    judge = ReviewJudge(llm, min_related=0.8)
    judged = judge.judge(
        "Is it clean and quiet?",
        ["The room was clean, not a spot anywhere.", "Also, it is quite noisy.", "We stayed in May."],
    )
    assert [s for s, _ in judged] == ["positive", "negative", "unrelated"]
    assert judged[0][1] == pytest.approx(0.95) and judged[2][1] == pytest.approx(0.30)
    assert "Customer: Is it clean and quiet?" in llm.calls[0][-1]["content"]  # the question, as the user asked it
    with pytest.raises(ValueError):
        ReviewJudge(llm, min_related=1.5)


def test_the_gatherer_takes_the_judges_stance_over_the_classifier():
    from augmenter.reviews.judge import ReviewJudge

    kb = _kb()
    # the judge says the sentence a classifier reads as a complaint ("stray hairs ... dirty") is praise: it wins
    llm = _scripted_judge_llm(
        {
            REVIEWS[0][1]: {"Pr": 0.9, "Com": 0.05, "Un": 0.05},
            REVIEWS[2][1]: {"Pr": 0.9, "Com": 0.05, "Un": 0.05},
            REVIEWS[4][1]: {"Pr": 0.9, "Com": 0.05, "Un": 0.05},
        }
    )
    found = OpinionGatherer(kb, min_p=0.15, max_sentences=8, judge=ReviewJudge(llm)).gather(
        "Are the bathrooms clean?", "hotel", 1, question="Are the bathrooms at the Lensfield clean?"
    )
    assert {s.text for s in found.sentences} == {REVIEWS[0][1], REVIEWS[2][1], REVIEWS[4][1]}  # unrelated dropped
    assert {s.stance for s in found.sentences} == {"positive"} and found.split == "positive"
    assert all("Lensfield" in call[-1]["content"] for call in llm.calls)


def test_a_failed_draft_is_answered_in_the_knowledges_own_words(gathered):
    from augmenter.reviews.replies import composed_reply, faq_answer

    kb, found = gathered
    mem = _memory(kb, found)
    reply = composed_reply(mem)
    # a quote of each side, attributed to one guest each, and no verdict of its own ("divided", "speak well")
    assert reply == (
        'At Lensfield Hotel, one guest wrote: "The bathroom was really clean and smelled fresh"; '
        'another: "There were stray hairs in the bathroom and the shower was dirty".'
    )
    parking = Snippet(id="f", text="Q: Is there free parking? A: No, parking costs 15 pounds per day.", doc_type="faq")
    assert faq_answer(parking) == "No, parking costs 15 pounds per day."
    bare = Snippet(id="b", text="Q: Do you allow pets? A: No.", doc_type="faq", entity_name="ACORN GUEST HOUSE")
    assert faq_answer(bare) == 'ACORN GUEST HOUSE: "Do you allow pets?" No.'
    both = composed_reply(mem, [parking])
    assert both.startswith('No, parking costs 15 pounds per day. One guest wrote: "The bathroom was really clean')
    assert composed_reply(WorkingMemory(q="Is there a pool?", e=[kb.snippets[-1]], consolidated=True)) is None


def test_two_sentences_of_one_review_are_quoted_as_one_guests():
    """DSTC11 dev dialogue 2421: both sides' sentences came from one review, and the reply said "another" guest wrote
    the second; a labeller marked that claim contradicted."""
    from augmenter.reviews.replies import quoted

    def sentence(text, doc_id, entity_id=1):
        return Snippet(
            id=f"{entity_id}:{doc_id}:{text[:3]}",
            text=text,
            domain="hotel",
            entity_id=entity_id,
            doc_type="review",
            doc_id=doc_id,
        )

    big, gamble = sentence("The room was nice and big.", 8), sentence("Room cleanliness is a gamble.", 8)
    assert quoted([big, gamble], "Aylesbray Lodge") == (
        'At Aylesbray Lodge, a guest wrote: "The room was nice and big"; '
        'in the same review: "Room cleanliness is a gamble"'
    )
    assert "another" in quoted([big, sentence("Room cleanliness is a gamble.", 3)])  # two reviews: two guests
    assert "another" in quoted([big, sentence("Room cleanliness is a gamble.", 8, entity_id=2)])  # two places' eighth


def test_the_grounded_system_answers_from_the_knowledge_when_its_draft_fails(demo_kb):
    """End to end with the fake LLM: a draft that embellishes fails the check and is not sent; the reply is the FAQ's
    answer, in the knowledge's own words, with no revision call."""
    from augmenter.config import build_agent, compose

    cfg = compose(
        "chat",
        [
            "llm=fake",
            "policy=llm_augmenter",
            "consolidator.opinions=false",  # a draft is made
            "llm.default='Yes, the Grand Meridian Hotel has a huge heated rooftop pool with a bar.'",
        ],
    )
    mem = build_agent(cfg).respond("Does the Grand Meridian Hotel have a pool?")
    assert len(mem.o) == 1 and mem.outcome == "quoted" and "rooftop" not in mem.response
    faq = next(s for s in mem.e if s.doc_type == "faq" and "pool" in s.text.lower())
    assert mem.response.startswith(faq.text.split("A:")[-1].strip())


def test_a_claim_resting_on_a_faq_is_not_held_to_the_reviews_balance(gathered):
    kb, found = gathered
    mem = _memory(kb, found, q="Is there a laundry at the Lensfield Hotel?")
    reviews = [s.id for s in found.sentences]
    assert one_sided("The Lensfield Hotel has a laundry room.", ["hotel:1:faq:0", *reviews], mem) is None
    assert one_sided("The Lensfield Hotel has clean bathrooms.", [*reviews, "hotel:1:faq:0"], mem) is not None


def test_containment_names_the_words_a_claim_adds_and_frees_the_questions_only_in_affirmations():
    from augmenter.verification.verifiers import missing_words

    pool = ["[GRAND MERIDIAN HOTEL] Q: Is there a pool? A: There is an indoor heated pool open from 7 am to 10 pm."]
    assert missing_words(
        "Yes, the Grand Meridian Hotel has a huge heated rooftop pool with a bar.",
        pool,
        "Does the Grand Meridian Hotel have a pool?",
    ) == ["huge", "rooftop", "bar"]
    assert missing_words("There is an indoor heated pool.", pool, "Is there a pool?") == []
    assert missing_words("There is no nice view.", pool, "Is there a nice view?") == ["nice", "view"]
    # an affirmation may paraphrase the question; a negation, or a ranking of places, must be in the knowledge
    assert (
        missing_words(
            "Yes, they sell alcoholic beverages.",
            ["[GRAFTON] Q: Do you serve alcohol? A: Yes."],
            "Do they sell alcoholic beverages?",
        )
        == []
    )
    wok = ["[GOLDEN WOK] They also offer a nice outdoor dining area."]
    assert missing_words("The outdoor dining area is nice.", wok, "Is the outdoor dining area nice?") == []
    assert missing_words(
        "The Golden Wok has the nicer outdoor dining area.", wok, "Which has a nicer outdoor dining area?"
    ) == ["nicer"]
    # words that join two statements add nothing (a dev answer failed on "the knowledge does not say: while")
    portions = ["[LA RAZA] Overall, the portion size of our meal was good.", "[LA TASCA] Big portions at TASCA!"]
    assert (
        missing_words(
            "The portion sizes at La Raza are good, while the portions at La Tasca are big.",
            portions,
            "How are the portion sizes at both?",
        )
        == []
    )


def test_the_grounded_utility_does_not_support_an_embellished_claim(demo_kb):
    from augmenter.config import build_agent, compose

    agent = build_agent(compose("chat", ["llm=fake", "utility=grounded"]))
    mem = agent.begin("Does the Grand Meridian Hotel have a pool?")
    agent.executor.execute(agent.policy.next_action(mem), mem)  # consolidate
    checks = agent.executor.utility.base.check(mem, "The Grand Meridian Hotel has a rooftop pool with a bar.")
    assert checks[0].verdict == Verdict.NOT_ENOUGH_INFO and checks[0].reason.endswith("rooftop, bar")
    feedback = agent.executor.utility.base.feedback(checks)
    assert "(the knowledge does not say: rooftop, bar)" in feedback


def test_a_side_is_quoted_only_with_a_sentence_that_speaks_to_the_question():
    """The yes/no pass: each side's sentences are walked in relevance order until one speaks to exactly what was
    asked; a side with none is dropped, so the reply never sets an off-aspect complaint against the praise."""
    import math

    from augmenter.llm.base import Completion
    from augmenter.llm.fake import FakeLLM
    from augmenter.reviews.judge import ReviewJudge

    stance = {REVIEWS[0][1]: "Pr", REVIEWS[2][1]: "Pr", REVIEWS[4][1]: "Com", REVIEWS[5][1]: "Com"}
    about = {REVIEWS[0][1]: 0.3, REVIEWS[2][1]: 0.95, REVIEWS[4][1]: 0.2, REVIEWS[5][1]: 0.1}

    def reply(messages):
        said = messages[-1]["content"].split("Review sentence:")[-1].strip()
        sentence = next((t for _, t in REVIEWS if said in t), said)  # a fragment answers as its sentence
        if "Answer Yes or No" in messages[0]["content"]:
            p = about.get(sentence, 0.0)
            yes, no = math.log(max(p, 1e-6)), math.log(max(1 - p, 1e-6))
            return Completion(text="Yes", top_logprobs=[{"Yes": yes, "No": no}])
        label = stance.get(sentence, "Un")
        return Completion(text=label, top_logprobs=[{label: math.log(0.95), "Un": math.log(0.05)}])

    kb = _kb()
    judge = ReviewJudge(FakeLLM(default=reply), min_about=0.8)
    found = OpinionGatherer(kb, min_p=0.0, max_sentences=8, judge=judge).gather("Are the bathrooms clean?", "hotel", 1)
    texts = [s.text for s in found.sentences]
    assert REVIEWS[0][1] not in texts and REVIEWS[2][1] in texts  # the first praise does not speak to it: dropped
    assert {s.stance for s in found.sentences} == {"positive"} and found.split == "positive"  # no complaint passed
    # with min_about_side, a complaint the judge finds about the question at 0.6 (below min_about) still counts:
    # the reviews are then mixed, not all praise; each sentence is judged as its fragment closest to the question
    # ("the shower was dirty") and kept as the part of the sentence that holds it (what a reply quotes)
    about[REVIEWS[4][1]] = 0.6
    wider = OpinionGatherer(kb, min_p=0.0, max_sentences=8, judge=judge, min_about_side=0.5)
    mixed = wider.gather("Are the bathrooms clean?", "hotel", 1)
    assert mixed.split == "mixed" and REVIEWS[4][1].rstrip(".") in [s.text for s in mixed.sentences]
    assert (
        OpinionGatherer(kb, min_p=0.0, max_sentences=8, judge=judge)
        .gather("Are the bathrooms clean?", "hotel", 1)
        .split
        == "positive"
    )


def _one_review_kb(*sentences: str) -> KnowledgeBase:
    """The Lensfield Hotel with one review of these sentences, in order."""
    snippets = [
        Snippet(
            id=f"hotel:1:review:0:{n}",
            text=text,
            domain="hotel",
            entity_id=1,
            entity_name=NAME,
            doc_type="review",
            doc_id=0,
            sent_id=n,
        )
        for n, text in enumerate(sentences)
    ]
    return KnowledgeBase(snippets, [Entity(1, "Lensfield Hotel", "hotel")])


def _topic_judge(topic: str, side=lambda sentence: "Compl", judged: list | None = None):
    """A review judge (about and stance asked of the topic) on a scripted LLM: it names `topic`, finds every sentence
    about it, and reads each on `side(sentence)` ("Compl", "Pra" or "Un"); what it reads goes to `judged`."""
    import math

    from augmenter.llm.base import Completion
    from augmenter.llm.fake import FakeLLM
    from augmenter.reviews.judge import ReviewJudge

    def reply(messages):
        if "neutral topic" in messages[0]["content"]:
            return Completion(text=topic)
        sentence = messages[-1]["content"].split("Review sentence:")[-1].strip()
        if judged is not None:
            judged.append(sentence)
        if "Answer Yes or No" in messages[0]["content"]:
            return Completion(text="Yes", top_logprobs=[{"Yes": math.log(0.95), "No": math.log(0.05)}])
        label = side(sentence)
        return Completion(text=label, top_logprobs=[{label: math.log(0.95), "Un": math.log(0.05)}])

    return ReviewJudge(FakeLLM(default=reply), min_about=0.8, about_by="topic", stance_by="topic")


def test_a_sentence_is_judged_as_its_fragment_closest_to_the_topic_the_judge_reads():
    """Where the judge reads sides of the question's topic ("view"), each sentence is judged and kept as its fragment
    closest to that topic, not the clause nearer the whole question ("while the location itself was nice")."""
    text = "The portions could be bigger and while the location itself was nice, the view was pretty bland."
    judged: list[str] = []
    judge = _topic_judge("view", judged=judged)
    gatherer = OpinionGatherer(_one_review_kb(text), min_p=0.0, judge=judge, min_about_side=0.5, whole_side=False)
    found = gatherer.gather("Does this location offer customers a pleasant view?", "hotel", 1)
    assert set(judged) == {"the view was pretty bland"}
    assert found.split == "negative" and found.sentences[0].text.endswith("the view was pretty bland")


@pytest.mark.parametrize("whole_reads, kept", [("Compl", False), ("Pra", True), ("Un", True)])
def test_a_fragment_whose_whole_sentence_reads_on_the_other_side_is_dropped(whole_reads, kept):
    """A sentence judged by its fragment ("the room could have been a lot bigger", read as praise of big rooms) is
    dropped where the judge reads the whole sentence on the other side; kept where the whole agrees or is unrelated."""
    text = "The breakfast was lovely and the staff were kind, but the room could have been a lot bigger."
    judge = _topic_judge("big rooms", side=lambda sentence: whole_reads if sentence == text else "Pra")
    found = OpinionGatherer(_one_review_kb(text), min_p=0.0, judge=judge, min_about_side=0.5).gather(
        "Are the rooms big?", "hotel", 1
    )
    if kept:
        assert found is not None and found.split == "positive"
    else:
        assert found is None


def test_a_complaint_is_kept_whatever_its_whole_sentence_reads():
    """ "bathroom weren't clean at first" of "... weren't clean at first but that was promptly taken care of" is a
    complaint of the bathroom's cleanliness though the whole sentence reads as praise: it is kept (dropped, the reply
    said "Yes" to spotless bathrooms beside the praise of other reviews)."""
    text = "The downside was that the room and bathroom weren't clean at first but that was promptly taken care of."
    judge = _topic_judge("bathroom cleanliness", side=lambda sentence: "Pra" if sentence == text else "Compl")
    found = OpinionGatherer(_one_review_kb(text), min_p=0.0, judge=judge, min_about_side=0.5).gather(
        "Are the bathrooms spotless?", "hotel", 1
    )
    assert found is not None and found.split == "negative"


def test_a_sentence_read_after_the_one_before_it_is_not_kept_beside_that_one():
    """ "They also don't seem to always have housekeeping available." points back and is read after "The room was nice
    and big ... but the room was a bit dirty."; with that sentence kept too, the reply quoted "The room was nice and
    big" twice ("A guest wrote: ...; in the same review: ...") and, the second read as a complaint, "divided"."""
    first = "The room was nice and big and I was able to do my laundry at there facility but the room was a bit dirty."
    then = "They also don't seem to always have housekeeping available."
    judge = _topic_judge("room size", side=lambda sentence: "Compl" if "housekeeping" in sentence else "Pra")
    found = OpinionGatherer(_one_review_kb(first, then), min_p=0.0, judge=judge, min_about_side=0.5).gather(
        "Are the rooms big?", "hotel", 1
    )
    assert [s.sent_id for s in found.sentences] == [0] and found.split == "positive"


def test_the_grounded_policy_quotes_the_reviews_without_a_draft(demo_kb):
    """When reviews speak to the question the grounded policy sends their own words, no LLM call for a draft; when
    none does, the paper's loop drafts as before."""
    from augmenter.config import build_agent, compose

    cfg = compose(
        "chat",
        [
            "llm=fake",
            "utility=grounded",
            "policy=grounded",
            "agent.max_llm_calls=1",
            "consolidator.opinions=true",
            "llm.default='A draft.'",
        ],
    )
    agent = build_agent(cfg)
    mem = agent.respond("Is the pool at the Grand Meridian Hotel nice?")
    assert any(s.doc_type == "opinions" for s in mem.e)  # the demo's review of the pool was gathered
    assert mem.o == [] and mem.llm_calls == 0 and mem.outcome == "quoted"
    # the place's FAQ on its pool ("Is there a swimming pool?", by its question 0.69 from the asked) comes first
    assert mem.response == (
        'Yes, there is an indoor heated pool open from 7 am to 10 pm. A guest wrote: "The kids loved the pool".'
    )
    # no review speaks to check-in: the model drafts; "A draft." is not in the knowledge, and the FAQ answers instead
    plain = agent.respond("What time is check-in at the Riverside Lodge?")
    assert plain.o == ["A draft."] and plain.llm_calls == 1
    assert plain.outcome == "quoted" and plain.response == "Check-in starts at 2 pm and check-out is at 11 am."
    # the Grand Meridian has no check-in FAQ: the Riverside Lodge's (which the search falls back to) is no answer
    other = agent.respond("What time is check-in at the Grand Meridian Hotel?")
    assert other.outcome == "abstained" and not other.response.startswith("Check-in starts at 2 pm")


def test_a_negative_faq_about_something_else_does_not_support_a_negative_claim():
    """Measured outside the project: 'The Acorn Guest House does not have a nice view of the city' passed, supported
    by 'No, the Acorn Guest House does not have a lift' (two negatives, the place's name in common)."""
    from augmenter.utilities import ClaimsUtility

    lift = Snippet(
        id="hotel:1:faq:3",
        text="Q: Is there a lift? A: No, the Acorn Guest House does not have a lift.",
        domain="hotel",
        entity_id=1,
        entity_name="ACORN GUEST HOUSE",
        doc_type="faq",
        doc_id=3,
    )
    mem = WorkingMemory(
        q="Is there a nice view of the city from the Acorn Guest House?",
        e=[lift],
        given=[lift],
        consolidated=True,
        entities=[
            EntityMention(
                domain="hotel", entity_id=1, name="Acorn Guest House", surface="acorn guest house", in_query=True
            )
        ],
    )
    check = ClaimsUtility(FastVerifier(), max_missing=0).check(
        mem, "The Acorn Guest House does not have a nice view of the city."
    )[0]
    assert check.verdict == Verdict.NOT_ENOUGH_INFO and "view" in check.reason


def test_half_of_a_but_review_sentence_is_not_refuted_by_the_other_half():
    """Measured outside the project: 'The bathroom was clean' refuted by 'The bathroom was clean but the rest of
    the room wasn't' (the negation of the other clause read as the claim's)."""
    verifier = FastVerifier()
    judged = verifier.judge(
        "The bathroom was clean.", ["[FINCHES] The bathroom was clean but the rest of the room wasn't."]
    )
    assert judged.verdict != Verdict.REFUTED and judged.reason is None
    finches = ["[FINCHES] The bathroom was clean but the rest of the room wasn't."]
    assert verifier.judge("The bathroom was not clean.", finches).verdict == Verdict.REFUTED


def _retrieved(place: str, entity_id: int, *sentences: str) -> list[Snippet]:
    return [
        Snippet(
            id=f"restaurant:{entity_id}:review:0:{i}",
            text=t,
            domain="restaurant",
            entity_id=entity_id,
            entity_name=place,
            doc_type="review",
            doc_id=0,
            sent_id=i,
        )
        for i, t in enumerate(sentences)
    ]


def test_a_retrieved_review_close_to_the_question_answers_it_when_the_gatherer_found_no_side():
    """Dev cases: asked for a view of the city, the evidence held "the views were good" but the gatherer kept no side,
    so "I don't know" passed; asked about portions at two places, a failed draft ended in "does not answer that.
    What I found: <the answer>". A retrieved sentence this close is now evidence that answers, and is quoted."""
    from augmenter.reviews.replies import composed_reply

    evidence = _retrieved(
        "LA RAZA",
        1,
        "Overall, the portion size of our meal was good.",
        "My partner was happy with the gluten-free options.",
    ) + _retrieved("LA TASCA", 2, "The portions were generous.", "The sangria was cold.")
    mentions = [
        EntityMention(domain="restaurant", entity_id=i, name=n, surface=n.lower(), in_query=False)
        for i, n in ((1, "La Raza"), (2, "La Tasca"))
    ]
    mem = WorkingMemory(q="How are the portion sizes at both?", e=evidence, consolidated=True, entities=mentions)
    check = AnswersQuestion()
    found = check.answering_reviews(mem)
    assert [s.text for s in found] == ["Overall, the portion size of our meal was good.", "The portions were generous."]
    result = check(mem, "I don't have that information.")
    assert not result.passed and result.feedback.startswith(IDK_WRONG) and "portion size" in result.feedback
    assert composed_reply(mem, (), found) == (
        'At La Raza, a diner wrote: "Overall, the portion size of our meal '
        'was good". At La Tasca, a diner wrote: "The portions were generous".'
    )
    # a sentence about something else is not quoted, and "I don't know" stands
    other = WorkingMemory(q="Is there a view of the river?", e=evidence, consolidated=True, entities=mentions)
    assert check.answering_reviews(other) == [] and check(other, "I don't have that information.").passed
    assert composed_reply(other, (), check.answering_reviews(other)) is None


def test_the_gatherers_sides_come_before_retrieved_sentences(gathered):
    from augmenter.reviews.replies import composed_reply

    kb, found = gathered
    mem = _memory(kb, found)
    extra = _retrieved("LENSFIELD HOTEL", 1, "The bathroom tiles were spotless.")
    assert composed_reply(mem, (), extra) == composed_reply(mem)


def test_a_drafts_claims_on_reviews_are_sent_as_the_sentences_they_rest_on(demo_kb):
    """Labelled rounds: drafts that summed reviews up in the model's words ("The Lensfield is quiet", "Ashley Hotel
    has big rooms") were unsupported wherever one review said otherwise. With executor.quote_reviews a passing
    draft's review-based claims go out as the review sentence each rests on, quoted, its FAQ-based ones as written,
    and the citations follow the reply."""
    from augmenter.config import build_agent, compose

    draft = "Yes, the room overlooks the river and is very quiet at night. Breakfast is included in every room rate."
    base = ["llm=fake", "policy=llm_augmenter", "consolidator.opinions=false", f"llm.default='{draft}'"]  # a draft
    plain = build_agent(compose("chat", [*base, "executor.quote_reviews=false"])).respond(
        "Is the Riverside Lodge quiet at night?"
    )
    assert plain.outcome == "answered" and plain.response == draft
    mem = build_agent(compose("chat", [*base, "executor.quote_reviews=true"])).respond(
        "Is the Riverside Lodge quiet at night?"
    )
    assert mem.outcome == "quoted"
    assert mem.response == (
        'Breakfast is included in every room rate. A guest wrote: "The room overlooked the '
        'river and was very quiet at night".'
    )
    cited = {c["claim"]: c["sources"] for c in mem.citation_records()}
    assert cited["The room overlooked the river and was very quiet at night."][0].startswith("hotel:0:review:")
    assert cited["Breakfast is included in every room rate."][0].startswith("hotel:0:faq:")


def test_a_place_the_question_names_is_answered_from_its_own_knowledge_or_not_at_all():
    """The default checked system on the demo: nothing of the Grand Meridian speaks to noise at night. The fallback
    search over the whole knowledge finds the Riverside Lodge's "very quiet at night", and the history's pool; neither
    may answer (another place's review; the gatherer measured relevance against the history), so it says so."""
    from augmenter.config import build_agent, compose

    agent = build_agent(compose("chat", ["llm=fake"]))
    first = agent.respond("Does the Grand Meridian Hotel have a pool?")
    assert first.response.startswith("Yes, there is an indoor heated pool")
    mem = agent.respond("Is the Grand Meridian quiet at night?")
    assert mem.outcome == "abstained" and "does not answer" in mem.response
    assert not any(s.stance for s in mem.e) and "Riverside" not in mem.response
    assert "What I found" not in mem.response  # nothing on the place asked about: another place's is no finding


def test_a_sentence_that_points_back_is_judged_and_quoted_after_the_sentence_before_it():
    """ "I found them to be overpriced and mediocre" (of the drinks, named the sentence before) was judged alone and
    the verdict read it as of the place: such a sentence is judged and quoted with the one before it."""
    texts = ["I was disappointed by the prices for their drinks.", "I found them to be overpriced and mediocre."]
    kb = KnowledgeBase(
        [
            Snippet(
                id=f"restaurant:1:review:0:{n}",
                text=t,
                domain="restaurant",
                entity_id=1,
                entity_name="THE NIRALA",
                doc_type="review",
                doc_id=0,
                sent_id=n,
            )
            for n, t in enumerate(texts)
        ],
        [Entity(1, "The Nirala", "restaurant")],
    )
    judged: list[str] = []
    judge = _topic_judge("drink prices", judged=judged)
    found = OpinionGatherer(kb, min_p=0.0, judge=judge, min_about_side=0.5).gather(
        "Are the drinks good value?", "restaurant", 1
    )
    both = " ".join(texts)
    assert both in judged and texts[1] not in judged
    assert both in [s.text for s in found.sentences]


@pytest.mark.parametrize(
    "text, back",
    [
        ("I found them to be overpriced.", True),
        ("They were delicious.", True),
        ("Those rooms were small.", True),
        ("The drinks were overpriced.", False),
        ("It was a lovely stay, and they were kind.", False),  # past the opening words
        ("I didn't enjoy that aspect at all.", True),  # a thing named by the sentence before
        ("That part was great.", True),
        ("It was amazing.", True),  # short, and what "it" is the sentence before says
        ("It's amazing.", True),
        ("That's great.", True),
        ("This hotel is great.", False),  # "this" names its own thing
        ("That part of town is quiet.", False),
        ("It has a lovely garden with a view of the river.", False),
        ("We loved that the staff knew our names and the part of town was quiet.", False),
        ("This place definitely delivered in that regard.", True),  # what "that regard" is, the sentence before says
        ("The breakfast was great, and in this respect it beat every other hotel.", True),
        ("We had regard for the staff in that hotel.", False),
    ],
)
def test_leans_back(text, back):
    from augmenter.verification.lexical import leans_back

    assert leans_back(text) is back
