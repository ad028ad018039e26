"""The reviews' verdict first: one sentence that answers, kept only when it adds nothing the reviews lack and takes
their side, then a quote per side, the clause that answers (augmenter.reviews.verdict, reviews.replies)."""

import math

import pytest

from augmenter.llm.base import Completion
from augmenter.llm.fake import FakeLLM
from augmenter.memory import Snippet, WorkingMemory
from augmenter.reviews import VerdictWriter, reviewers, side_of
from augmenter.reviews.replies import composed_reply, verdict_first
from augmenter.reviews.verdict import FaultKind, Verdict, advice


def review(text, stance, doc_id=1, domain="hotel", n=0, entity_id=1, name="Acorn Guest House"):
    return Snippet(
        id=f"{domain}:{entity_id}:review:{doc_id}:{n}",
        text=text,
        domain=domain,
        entity_id=entity_id,
        entity_name=name,
        doc_type="review",
        doc_id=doc_id,
        stance=stance,
    )


def faq(q, a, entity_id=1, name="Acorn Guest House", domain="hotel", n=0):
    return Snippet(
        id=f"{domain}:{entity_id}:faq:{n}",
        text=f"Q: {q} A: {a}",
        domain=domain,
        entity_id=entity_id,
        entity_name=name,
        doc_type="faq",
    )


def judged(praise, complaint):
    """A scripted review judge's answer: the first token's log-probabilities."""
    import math

    return Completion(
        text="Praise",
        top_logprobs=[
            {"Pr": math.log(praise), "Compl": math.log(complaint), "Un": math.log(max(1e-6, 1 - praise - complaint))}
        ],
    )


# the review judge's read of "Yes." to the question: praise (a Yes may open a verdict on praise)
YES_PRAISES = judged(0.9, 0.05)


def digest(entity_id=1, name="Acorn Guest House", domain="hotel", said="2 (2 positive)"):
    """The opinion gatherer's line of one place: how many reviews on each side."""
    return Snippet(
        id=f"opinions:{domain}:{entity_id}",
        text=f"Reviews that mention this: {said}.",
        domain=domain,
        entity_id=entity_id,
        entity_name=name,
        doc_type="opinions",
        stance="positive",
    )


def bare_gatherer(judge, praise_about=None):
    """An opinion gatherer with only what `_verified` reads: its judge and bars."""
    from augmenter.reviews.opinions import OpinionGatherer

    gatherer = OpinionGatherer.__new__(OpinionGatherer)
    gatherer.judge, gatherer.min_about_side, gatherer.praise_about = judge, None, praise_about
    return gatherer


VIEWS = [
    review("The view from our room was stunning.", "positive", 1),
    review("We loved the view over the river at sunset.", "positive", 2, n=1),
]
MIXED = [
    review("The room was very quiet at night.", "positive", 1),
    review("Our room was noisy because of the street.", "negative", 2, n=1),
]


def test_who_wrote_the_reviews_follows_the_domain():
    assert reviewers("hotel") == "guests" and reviewers("restaurant", plural=False) == "diner"
    assert reviewers("attraction") == "reviewers"


def test_the_side_of_the_sentences():
    assert side_of(VIEWS) == "positive" and side_of(MIXED) == "mixed"
    assert side_of([review("We stayed two nights.", "neutral")]) is None


def test_a_verdict_in_the_reviews_words_on_their_side_is_kept():
    llm = FakeLLM(["Yes, some guests loved the view from the room.", YES_PRAISES, judged(0.9, 0.05)])
    verdict = VerdictWriter(llm).write("Does the room have a good view?", VIEWS)
    assert verdict.written and verdict.text == "Yes, some guests loved the view from the room."
    assert 'Begin with "Yes, some guests"' in llm.calls[0][-1]["content"]


def test_a_long_verdict_is_cut_before_the_clause_it_trails():
    """On 60 dev turns, 26 drafts failed as too long ("Diners are divided on the atmosphere, with some praising it
    and others criticizing it ...") and the fixed sentence went out instead."""
    draft = (
        "Guests are divided on how quiet the room is at night, with some finding it very quiet and others finding "
        "it noisy because of the street outside"
    )
    verdict = VerdictWriter(FakeLLM([draft]), retries=0).write("Is the room quiet?", MIXED)
    assert verdict.written and verdict.text == "Guests are divided on how quiet the room is at night."
    writer = VerdictWriter(FakeLLM([]))
    short = "Some guests found it quiet, while others found it noisy."
    assert writer.shortened(short) == short  # within max_words: as it is
    long_head = " ".join(["word"] * 30) + ", with more"
    assert writer.shortened(long_head) == long_head  # what is left is still too long: as it is
    # a divided verdict's trailing clause only restates it (labelled natural 1.8 in such answers): cut at any length
    filler = "The guests are divided on whether the room is clean, with some agreeing and others disagreeing."
    verdict = VerdictWriter(FakeLLM([filler]), retries=0).write("Is the room clean?", MIXED)
    assert verdict.text == "The guests are divided on whether the room is clean."
    assert writer.shortened(short, "mixed") == short  # the clause it trails is the other side
    # a one-sided verdict's trailing clause adds what was not asked (labelled a one-sided summary): cut too
    trailing = (
        "Yes, some diners found many non-alcoholic beverages on offer, with the drinks in particular being fantastic."
    )
    assert writer.shortened(trailing) == trailing
    assert writer.shortened(trailing, "positive") == "Yes, some diners found many non-alcoholic beverages on offer."
    assert writer.shortened("Yes, it was quiet, as hoped.", "positive") == "Yes, it was quiet, as hoped."  # head short


@pytest.mark.parametrize(
    "draft, problem",
    [
        ("Yes, some guests loved the view of the cathedral.", "words the reviews do not use: cathedr"),
        ("Yes, 3 guests loved the view.", "a number"),
        ("Yes, some guests at Hilton loved the view.", "a name"),
        ("Yes.", "does not say what the reviewers think"),
    ],
)
def test_a_verdict_that_adds_what_the_reviews_lack_is_replaced_by_the_fixed_one(draft, problem):
    verdict = VerdictWriter(FakeLLM([draft, judged(0.9, 0.05)]), retries=0).write(
        "Does the room have a good view?", VIEWS
    )
    assert not verdict.written and problem in verdict.problem
    assert verdict.text == "Some guests speak well of it."


def test_a_verdict_on_the_other_side_is_replaced():
    llm = FakeLLM(["Some guests complained about the view from the room.", judged(0.1, 0.85)])
    verdict = VerdictWriter(llm, retries=0).write("Does the room have a good view?", VIEWS)
    assert not verdict.written and verdict.problem == "it takes the other side"


WINE = [review("I wouldn't recommend ordering from the alcoholic drink menu.", "negative", domain="restaurant")]


@pytest.mark.parametrize(
    "draft, problem",
    [
        ("Diners think the restaurant does not serve alcohol.", "words the reviews do not use"),  # the question's
        ("No, a diner complained about the alcoholic drink menu.", "a No"),
    ],
)
def test_complaints_are_no_no(draft, problem):
    """A complaint about the drinks does not say there are none: no "No", no negation the reviews lack."""
    llm = FakeLLM([draft, judged(0.05, 0.9)])
    verdict = VerdictWriter(llm, retries=0).write("Does the restaurant serve alcohol?", WINE)
    assert not verdict.written and problem in verdict.problem
    assert verdict.text == "A diner complains about it."
    assert "Do not begin with Yes or No" in llm.calls[0][-1]["content"]
    kept = VerdictWriter(
        FakeLLM(["A diner would not recommend the alcoholic drink menu.", judged(0.05, 0.9)]), retries=0
    )
    assert kept.write("Does the restaurant serve alcohol?", WINE).written


@pytest.mark.parametrize(
    "draft, reviews, problem",
    [
        ("Yes, guests loved the view from the room.", 2, "speaks for other reviewers than the 2"),
        ("Yes, the room has a stunning view.", 2, "does not say it rests on 2 reviews"),
        ("Yes, some guests loved the view from the room.", 1, "speaks for other reviewers than the 1"),
        ("Yes, several guests loved the view from the room.", 2, "speaks for other reviewers than the 2"),
        ("Yes, two guests loved the view from the room.", 2, "a number"),  # a count is read as exact
        ("Yes, a guest loved the view from the room.", 2, ""),
        ("Yes, some guests loved the view from the room.", 2, ""),
    ],
)
def test_a_one_sided_verdict_speaks_for_the_reviews_found_not_for_every_guest(draft, reviews, problem):
    """ "Guests love the view" from the reviews the gatherer found is a one-sided summary where it missed one that
    complains, and "two guests" is wrong where four do: the verdict says "a guest" or "some guests"."""
    views = VIEWS if reviews == 2 else VIEWS[:1]
    verdict = VerdictWriter(FakeLLM([draft, YES_PRAISES, judged(0.9, 0.05)]), retries=0).write(
        "Does the room have a good view?", views
    )
    assert problem in verdict.problem and verdict.written == (not problem)
    if problem:
        assert verdict.text == ("A guest speaks well of it." if reviews == 1 else "Some guests speak well of it.")
    same_review = [review("Stunning view.", "positive", 1), review("Lovely view at dusk.", "positive", 1, n=1)]
    assert (
        VerdictWriter(FakeLLM(["x"]), retries=0).write("Is the view good?", same_review).text
        == "A guest speaks well of it."
    )


def test_divided_reviews_need_a_verdict_that_says_so_and_no_yes():
    writer = VerdictWriter(FakeLLM(["Yes, guests found the room quiet at night."]), retries=0)
    verdict = writer.write("Is the room quiet?", MIXED)
    assert not verdict.written and verdict.text == "Guests are divided on it."
    asked = writer.llm.calls[0][-1]["content"]
    assert "divided" in asked and "Begin with Yes" not in asked
    kept = VerdictWriter(FakeLLM(["Some guests found the room quiet, while others found it noisy."]), retries=0)
    assert kept.write("Is the room quiet?", MIXED).written


def test_a_verdict_that_may_not_lead_is_sent_back_once_with_what_is_wrong():
    """The fixed sentence leaves the customer to read the quote for the answer: a first draft that fails is sent back
    with its fault (the words the reviewers did not write), and a second that passes leads."""
    llm = FakeLLM(
        [
            "Yes, some guests loved the view of the cathedral.",
            "Yes, some guests loved the view from the room.",
            YES_PRAISES,
            judged(0.9, 0.05),
        ]
    )
    verdict = VerdictWriter(llm).write("Does the room have a good view?", VIEWS)
    assert verdict.written and verdict.text == "Yes, some guests loved the view from the room."
    sent_back = llm.calls[1]
    assert sent_back[-2] == {"role": "assistant", "content": "Yes, some guests loved the view of the cathedral."}
    assert "did not write cathedral. Leave out those words" in sent_back[-1]["content"]


def test_a_verdict_that_names_the_reviewers_and_then_a_comma_is_sent_back():
    """ "Yes, a diner, it was lovely." reads garbled: the draft goes back with how to begin."""
    one = [review("It was a beautiful spot to be eating outdoors.", "positive", domain="restaurant")]
    llm = FakeLLM(
        [
            "Yes, a diner, it was a beautiful spot to be eating outdoors.",
            "Yes, a diner found it a beautiful spot to be eating outdoors.",
            YES_PRAISES,
            judged(0.9, 0.05),
        ]
    )
    verdict = VerdictWriter(llm).write("Is there nice outdoor seating?", one)
    assert verdict.written and verdict.text == "Yes, a diner found it a beautiful spot to be eating outdoors."
    assert 'no comma after them: "Yes, a diner found ..."' in llm.calls[1][-1]["content"]
    writer = VerdictWriter(FakeLLM(), retries=0)
    assert str(writer.fault("How is it?", "A diner, lovely spot.", [one[0].text], "positive")).startswith(
        "it names the reviewers"
    )


def test_a_second_draft_that_fails_too_gives_the_fixed_sentence_with_both_faults():
    llm = FakeLLM(["Yes, guests loved the view from the room.", "Yes, the room has a stunning view."])
    verdict = VerdictWriter(llm).write("Does the room have a good view?", VIEWS)
    assert not verdict.written and verdict.text == "Some guests speak well of it."
    assert "speaks for other reviewers" in verdict.problem and "then it does not say it rests on" in verdict.problem
    assert 'begin with "Some guests"' in llm.calls[1][-1]["content"]
    assert len(llm.calls) == 2  # no third draft
    quote = 'A guest wrote: "The view from our room was stunning".'
    assert verdict_first(verdict) == f"Some guests speak well of it. {quote}"


def test_the_fixed_sentence_never_opens_with_a_yes_or_a_no():
    """ "Yes, a guest wrote: ..." in its place was flawed in 17 of 33 labelled answers, and "Yes/No, some guests ..."
    with the on-topic model's sentences in 3 of 5 (a No where the gatherer missed the quiet reviews): where the model
    cannot write a verdict from the sentences, they speak least to the question."""
    quiet = [review("We slept like babies, it was so quiet at night.", "positive")]
    fixed = VerdictWriter(FakeLLM(["x", "x"], default=YES_PRAISES)).write("Is it quiet at night?", quiet)
    assert verdict_first(fixed).startswith("A guest speaks well of it. A guest wrote:")
    noisy = [review("It was never quiet at night, very noisy while we were trying to sleep.", "negative")]
    fixed = VerdictWriter(FakeLLM(["x", "x"], default=YES_PRAISES)).write("Is it quiet at night?", noisy)
    assert fixed.text == "A guest complains about it."
    wine = VerdictWriter(FakeLLM(["x", "x"], default=YES_PRAISES)).write("Does the restaurant serve alcohol?", WINE)
    assert verdict_first(wine).startswith("A diner complains about it.")


def test_a_yes_to_a_question_whether_a_thing_is_there_says_each_of_its_words():
    """Praise of fast wifi is no Yes to a fee for it (a labelled contradiction); praise of the wine is one to "Do
    they serve wine?" (`may_open`)."""
    wifi = [review("I found that the provided Internet was extremely swift.", "positive")]
    drafts = ["Yes, a guest found the Internet extremely swift.", "A guest found the Internet extremely swift."]
    llm = FakeLLM(drafts, default=YES_PRAISES)
    written = VerdictWriter(llm).write("Do they charge a fee for wifi there?", wifi)
    assert 'Begin with "Yes' not in llm.calls[0][-1]["content"]
    assert "do not begin with Yes" in llm.calls[1][-1]["content"]
    assert written.written and written.text == drafts[1]
    wine = [review("The house wine was lovely.", "positive", domain="restaurant")]
    llm = FakeLLM(["A diner found the house wine lovely."], default=YES_PRAISES)
    assert VerdictWriter(llm).write("Do they serve wine?", wine).text == "Yes, a diner found the house wine lovely."


def test_no_yes_or_no_to_a_question_that_asks_neither():
    verdict = VerdictWriter(
        FakeLLM(["Yes, some guests loved the view from the room.", judged(0.9, 0.05)]), retries=0
    ).write("What do guests say about the view?", VIEWS)
    assert not verdict.written and "asks neither" in verdict.problem


def test_a_sentence_on_several_things_falls_into_fragments_words_unchanged():
    from augmenter.verification.lexical import fragments

    assert fragments("Drinks are expensive here and the view is not much.") == [
        "Drinks are expensive here",
        "the view is not much",
    ]
    assert fragments("The room was clean, quiet and spacious, and the staff were kind.") == [
        "The room was clean, quiet and spacious",
        "the staff were kind",
    ]
    assert fragments("Lots of drinks, but it's out of the way.") == ["Lots of drinks", "it's out of the way"]


def test_a_short_first_piece_joins_the_one_after_it():
    from augmenter.verification.lexical import fragments

    assert fragments("However, once you get past that hump, the food is great.") == [
        "However, once you get past that hump",
        "the food is great",
    ]
    assert fragments("Sadly, the view was of the car park and the room was dark.") == [
        "Sadly, the view was of the car park",
        "the room was dark",
    ]


def test_the_part_closest_to_the_question_is_found_in_one_batch_words_unchanged():
    from augmenter.verification.encoder import closest_parts
    from augmenter.verification.lexical import fragments, parts_of

    sentence = "The rooms were not as clean as we expected, but the views from the balcony are worth it"
    assert closest_parts("Does it have good views?", [sentence, "Spotless room."], parts_of) == [
        "the views from the balcony are worth it",
        "Spotless room",
    ]
    assert closest_parts("Is it quiet?", ["Drinks are cheap here and the street is very quiet."], fragments) == [
        "the street is very quiet"
    ]


def test_a_fragment_judged_is_quoted_as_the_part_that_holds_it():
    from augmenter.verification.lexical import part_holding

    sentence = "The bed was hard, but the view, just the way I like it, was great."
    assert part_holding(sentence, "just the way I like it") == "the view, just the way I like it, was great"
    assert part_holding("Quiet.", "Loud") == "Quiet."
    # a part that points back is quoted with what it points to: "it was extremely well made" was quoted alone as
    # praise of the borscht, of a diner's cocktail (labelled flawed)
    drink = "While the drink itself is over priced, it was extremely well made."
    assert part_holding(drink, "it was extremely well made") == drink


def test_the_reply_leads_with_the_verdict_then_a_quote_per_side():
    writer = VerdictWriter(FakeLLM(["Some guests found the room quiet, while others found it noisy."]))
    verdict = writer.write("Is the room quiet?", MIXED)
    reply = verdict_first(verdict)
    assert reply == (
        'Some guests found the room quiet, while others found it noisy. One guest wrote: "The room was '
        'very quiet at night"; another: "Our room was noisy because of the street".'
    )
    restaurant = [review("The pasta was delicious.", "positive", domain="restaurant")]
    verdict = VerdictWriter(FakeLLM(["A diner says the pasta was delicious.", judged(0.9, 0.05)])).write(
        "Is the pasta good?", restaurant
    )
    assert verdict_first(verdict).endswith('A diner wrote: "The pasta was delicious".')


def test_the_composed_reply_carries_the_verdict_before_the_quotes():
    mem = WorkingMemory(q="Does the room have a good view?", e=[digest(), *VIEWS])
    writer = VerdictWriter(FakeLLM(["Yes, some guests loved the view from the room.", YES_PRAISES, judged(0.9, 0.05)]))
    reply = composed_reply(mem, verdict=writer.write)
    # the verdict says nothing the quote does not: one sentence, not a loop (labelled "loop" in 3 of 20 answers)
    assert reply == 'Yes, a guest wrote: "The view from our room was stunning".'
    assert composed_reply(mem) == 'At Acorn Guest House, a guest wrote: "The view from our room was stunning".'
    more = Verdict("Yes, some guests loved the sunsets.", "positive", True, "", [VIEWS[0]])  # says more: both
    quote = 'A guest wrote: "The view from our room was stunning".'
    assert verdict_first(more) == f"Yes, some guests loved the sunsets. {quote}"
    assert verdict_first(more, "Acorn Guest House") == f"Acorn Guest House: yes, some guests loved the sunsets. {quote}"
    same = Verdict("Yes, a guest of Acorn Guest House found the view stunning.", "positive", True, "", [VIEWS[0]])
    assert (
        verdict_first(same, "Acorn Guest House")
        == 'Acorn Guest House: yes, a guest wrote: "The view from our room was stunning".'
    )


def test_a_place_whose_own_faq_answers_gets_the_faqs_answer_not_its_reviews():
    yes = "Yes, Bloomsbury does offer outdoor seating."
    bloomsbury = faq("Is there outdoor seating?", yes, 3, "BLOOMSBURY", "restaurant")
    no = "The Varsity Restaurant does not offer outdoor seating."
    varsity = faq("Can we eat outside?", no, 2, "VARSITY RESTAURANT", "restaurant")
    terrace = review(
        "We loved sitting on the terrace in the sun.", "positive", 1, "restaurant", 0, 2, "VARSITY RESTAURANT"
    )
    mem = WorkingMemory(
        q="Do they have outdoor dining?",
        e=[bloomsbury, varsity, digest(2, "VARSITY RESTAURANT", "restaurant"), terrace],
        consolidated=True,
    )
    assert composed_reply(mem, [bloomsbury, varsity]) == (
        "Yes, Bloomsbury does offer outdoor seating. The Varsity Restaurant does not offer outdoor seating."
    )
    # its FAQ not among those that answer: the reviews speak for it, named after another place's FAQ
    assert composed_reply(mem, [bloomsbury]) == (
        'Yes, Bloomsbury does offer outdoor seating. At Varsity Restaurant, a diner wrote: "We loved sitting on the '
        'terrace in the sun".'
    )


def test_a_gathered_places_own_faq_is_found_in_the_knowledge_though_retrieval_missed_it():
    from augmenter.reviews.composer import ReviewReplies
    from augmenter.utilities.answers import AnswersQuestion

    no = faq("Is there a garden view from the rooms?", "No, the rooms face the car park.", n=4)
    mem = WorkingMemory(q="Do the rooms have a garden view?", e=[digest(), *VIEWS], consolidated=True)
    replies = ReviewReplies({s.id: s for s in [no, *VIEWS]}, AnswersQuestion())
    composed = replies.answer(mem)
    assert composed.text.startswith("No, the rooms face the car park.")
    assert any(e.id == no.id for c in composed.claims for e in c.evidence)  # cited
    # without it in the knowledge, the reviews answer
    assert ReviewReplies({s.id: s for s in VIEWS}, AnswersQuestion()).answer(mem).text.startswith("At Acorn Guest")


def test_a_sentence_that_praises_one_thing_and_complains_of_what_was_asked_takes_the_side_of_its_clause():
    mixed = [
        review(
            "But if you can get past the mediocre service, this place offers really high quality dishes",
            "positive",
            domain="restaurant",
        )
    ]

    def about(yes):
        return Completion(text="Yes", top_logprobs=[{"Yes": math.log(yes), "No": math.log(1 - yes)}])

    llm = FakeLLM([about(0.9), about(0.2), judged(0.05, 0.9), "A diner found the service mediocre.", judged(0.05, 0.9)])
    verdict = VerdictWriter(llm).write("How is the service there?", mixed)
    assert verdict.side == "negative" and verdict.sentences[0].text == "if you can get past the mediocre service"
    assert verdict.text == "A diner found the service mediocre."
    assert "of Acorn Guest House" in llm.calls[3][-1]["content"]


def test_a_verdict_that_says_the_reviewers_are_what_they_found_is_sent_back():
    """ "A diner is nicely decorated." passed every check (its words are the question's, the judge reads praise) and
    reads garbled; "Some guests were pleased with ..." says how they felt and stays."""
    writer = VerdictWriter(FakeLLM(), retries=0)
    said = ["The other upside is the interior decor."]
    fault = writer.fault("Is it nicely decorated inside?", "A diner is nicely decorated.", said, "positive")
    assert fault is not None and fault.kind is FaultKind.NAMED_ARE
    fix = advice(fault, "A diner is nicely decorated.", "a diner", "positive")
    assert 'of the place, not what they are: "A diner found ..."' in fix
    for felt in ("A diner was pleased with the decor.", "A diner was very impressed by the decor."):
        found = writer.fault("Is it nicely decorated inside?", felt, said, "positive")
        assert found is None or found.kind is not FaultKind.NAMED_ARE, felt


def test_the_place_asked_about_may_be_named():
    llm = FakeLLM(["Yes, some guests say Acorn Guest House has a stunning view.", YES_PRAISES, judged(0.9, 0.05)])
    assert VerdictWriter(llm).write("Does the room have a good view?", VIEWS).written


def test_the_about_pass_may_ask_of_the_questions_topic_named_without_a_side():
    from augmenter.reviews.judge import ReviewJudge

    def about(yes):
        return Completion(text="Yes", top_logprobs=[{"Yes": math.log(yes), "No": math.log(1 - yes)}])

    llm = FakeLLM(["noise.", about(0.9), about(0.1), about(0.8), about(0.5)])
    judge = ReviewJudge(llm, min_about=0.85, about_by="either")
    assert judge.about("Is it quiet there?", "It is quite noisy.") == pytest.approx(0.9)  # the topic's, the higher
    assert judge.topic("Is it quiet there?") == "noise"
    asked = [call[-1]["content"] for call in llm.calls]
    assert asked[0].endswith("Is it quiet there?") and "Topic: noise\nReview sentence: It is quite noisy." == asked[1]
    assert "Customer: Is it quiet there?" in asked[2]  # and the question's own pass
    judge.about("Is it quiet there?", "The street was loud.")
    assert len(llm.calls) == 5  # the topic is named once per question
    assert ReviewJudge(FakeLLM([about(0.3)])).about("Is it quiet?", "Loud.") == pytest.approx(0.3)
    with pytest.raises(ValueError, match="about_by"):
        ReviewJudge(llm, about_by="aspect")


def test_the_stance_pass_may_ask_of_the_topic_and_the_question_where_the_topic_finds_nothing():
    from augmenter.reviews.judge import ReviewJudge

    # "on the smaller side" for "Is there a big room?": asked of the question, praise that is hardly related; asked
    # of the topic ("room size"), the complaint it is
    llm = FakeLLM(["room size", judged(0.05, 0.9), judged(0.05, 0.05), judged(0.9, 0.05)])
    judge = ReviewJudge(llm, stance_by="either")
    sentences = ["The rooms are on the smaller side.", "Huge beds."]
    assert judge.judge("Is there a big room?", sentences) == [("negative", 0.95), ("positive", 0.95)]
    asked = [call[-1]["content"] for call in llm.calls]
    assert asked[1] == "Topic: room size\nReview sentence: The rooms are on the smaller side."
    # the topic's pass over both sentences in a row, then the question's over the one it found off the topic
    assert [a.startswith("Topic:") for a in asked[1:]] == [True, True, False] and asked[3].endswith("Huge beds.")
    # where the topic's pass finds it unrelated, the question's side stands; asked of the topic alone, unrelated
    llm = FakeLLM(["room size", judged(0.05, 0.05), judged(0.9, 0.05)])
    assert ReviewJudge(llm, stance_by="either").judge("Is there a big room?", ["Huge beds."]) == [("positive", 0.95)]
    llm = FakeLLM(["room size", judged(0.05, 0.05)])
    assert ReviewJudge(llm, stance_by="topic").judge("Is there a big room?", ["Huge beds."])[0][0] == "unrelated"
    with pytest.raises(ValueError, match="stance_by"):
        ReviewJudge(llm, stance_by="aspect")


def test_each_sentence_is_asked_in_a_row_per_pass_up_to_the_first_on_the_question():
    from augmenter.reviews.judge import ReviewJudge

    def about(yes):
        return Completion(text="Yes", top_logprobs=[{"Yes": math.log(yes), "No": math.log(1 - yes)}])

    sentences = ["The bed was soft.", "It is quite noisy.", "Lovely staff."]
    # either: the topic's pass first (reaches 0.85 at the second sentence), then the question's for those two
    llm = FakeLLM(["noise", about(0.2), about(0.9), about(0.3), about(0.1)])
    seen = ReviewJudge(llm, about_by="either").about_each("Is it quiet?", sentences, enough=0.85)
    assert seen == pytest.approx([0.3, 0.9])
    asked = [call[-1]["content"] for call in llm.calls[1:]]
    assert [a.startswith("Topic: noise") for a in asked] == [True, True, False, False]
    # the question's pass alone stops where a sentence reaches it; none does: every sentence asked
    assert ReviewJudge(FakeLLM([about(0.9)])).about_each("Is it quiet?", sentences, 0.85) == pytest.approx([0.9])
    assert len(ReviewJudge(FakeLLM(default=about(0.5))).about_each("Is it quiet?", sentences, 0.85)) == 3


def test_a_negation_the_reviews_do_not_make_and_the_questions_own_words_are_refused():
    wine = [review("The wine list is long and the house red is lovely.", "positive", domain="restaurant")]
    negated = VerdictWriter(FakeLLM(["A diner says the wine list is not long."]), retries=0).write(
        "Is the wine list long?", wine
    )
    assert not negated.written and negated.problem == "a negation the reviews do not make"
    assert negated.text == "A diner speaks well of it."
    # "upbeat" and "fun" are the question's words, not the reviews': the question's premise is no verdict
    writer = VerdictWriter(FakeLLM(["Yes, the vibe is upbeat and fun."]), retries=0)
    restated = writer.fault(
        "Is the vibe upbeat and fun?", "Yes, the vibe is upbeat and fun.", ["Great ambience."], "positive"
    )
    assert "upbeat" in str(restated)
    # nor does a fixed sentence say "it" of what the review does not name: no verdict, the quote goes alone
    vibe = [review("Great ambience.", "positive", domain="restaurant")]
    assert writer.write("Is the vibe upbeat and fun?", vibe) is None


def test_the_verdict_may_use_only_what_each_sentence_says_on_the_question():
    views = [review("The view was stunning, the bed was comfy and the staff were kind.", "positive")]
    more = VerdictWriter(FakeLLM(["Guests love the stunning view, the comfy bed and the kind staff."]), retries=0)
    verdict = more.write("Is the view good?", views)
    assert not verdict.written
    assert verdict.problem == "words the reviews use of other things than what was asked: bed, comfi, kind, staff"
    kept = VerdictWriter(FakeLLM(["Yes, a guest found the view stunning.", YES_PRAISES, judged(0.9, 0.05)]))
    assert kept.write("Is the view good?", views).written


def test_words_of_the_sentences_other_parts_go_back_as_off_what_was_asked():
    """ "big rooms" and "comfortable beds" beside "very quiet": the reviewer wrote them, so "did not write" would
    mislead the model; it is told they are not what was asked, and a draft without them leads."""
    quiet = [review("The rooms are big and the beds comfortable, and also it's very quiet at night.", "positive")]
    llm = FakeLLM(
        [
            "Yes, a guest found the big rooms comfortable and quiet.",
            "Yes, a guest found it very quiet at night.",
            YES_PRAISES,
            judged(0.9, 0.05),
        ]
    )
    verdict = VerdictWriter(llm).write("Is it quiet?", quiet)
    assert verdict.written and verdict.text == "Yes, a guest found it very quiet at night."
    shown = llm.calls[0][-1]["content"]  # the model is shown the part it may draw on
    assert "- also it's very quiet at night" in shown and "beds" not in shown
    told = llm.calls[1][-1]["content"]
    assert "wrote big, comfortable of other things than what was asked" in told and "did not write" not in told
    # a word no reviewer wrote is still one they did not write
    writer = VerdictWriter(FakeLLM(), retries=0)
    fault = writer.fault(
        "Is it quiet?", "A guest found it quiet and cheap.", [quiet[0].text], "positive", focus=["very quiet at night"]
    )
    assert fault.kind.name == "WORDS" and fault.words == ("cheap",)


@pytest.mark.parametrize(
    "said, ask, text",
    [
        # "the Acorn Guesthouse" of Acorn Guest House (the question's spelling) names the place, not another
        (
            "The place was quiet so we could relax.",
            "Could you confirm that the Acorn Guesthouse is quiet?",
            "Yes, a guest found the Acorn Guesthouse quiet.",
        ),
        # "we could hear ourselves talk" told as "they could hear themselves talk": no word of the verdict's own
        (
            "The place was quiet so we could hear ourselves talk and just relax.",
            "Is this location quiet?",
            "Yes, a guest found the place quiet so they could hear themselves talk.",
        ),
    ],
)
def test_the_place_as_asked_and_the_reviewers_own_we_told_as_they_are_no_words_of_its_own(said, ask, text):
    writer = VerdictWriter(FakeLLM([YES_PRAISES, judged(0.9, 0.05)]), retries=0)
    assert writer.fault(ask, text, [said], "positive", place="Acorn Guest House") is None


def test_another_name_beside_the_place_as_asked_is_a_name_of_its_own():
    said = ["The place was quiet so we could relax."]
    ask = "Could you confirm that the Acorn Guesthouse is quiet?"
    writer = VerdictWriter(FakeLLM([YES_PRAISES, judged(0.9, 0.05)]), retries=0)
    other = "Yes, a guest found the Acorn Guesthouse quieter than Finches."
    assert writer.fault(ask, other, said, "positive", place="Acorn Guest House").kind.name == "NAME"


def test_an_accented_word_is_one_word_as_the_reviews_write_it():
    """'décor' in the question is the reviews' 'decor', not the fragments 'd' and 'cor' the verdict may not use."""
    from augmenter.verification.lexical import content_words, tokens

    assert tokens("How nice is the indoor décor at the Café?") == [
        "how",
        "nice",
        "is",
        "the",
        "indoor",
        "decor",
        "at",
        "the",
        "cafe",
    ]
    decor = [review("The decor was lovely and modern.", "positive", 1), review("Lovely decor.", "positive", 2, n=1)]
    verdict = VerdictWriter(FakeLLM(["Yes, some guests like the décor.", YES_PRAISES, judged(0.9, 0.05)])).write(
        "Is the indoor décor nice?", decor
    )
    assert verdict.written, verdict.problem
    assert set(content_words("décor")) == set(content_words("decor"))


def test_praise_may_need_the_questions_own_about_pass_and_complaints_the_topics():
    """General praise passes the topic's pass alone ("This hotel is awesome" for comfortable beds): with
    `asked_at_least` a sentence counts only where the question's pass reaches that bar too."""
    from augmenter.reviews.judge import ReviewJudge

    def about(yes):
        return Completion(text="Yes", top_logprobs=[{"Yes": math.log(yes), "No": math.log(1 - yes)}])

    sentences = ["This hotel is awesome.", "The beds were so comfy.", "Lovely staff."]
    # question's pass 0.1 (below the bar: no topic pass), then 0.6 (topic's asked: 0.95), stop there
    llm = FakeLLM(["bed comfort", about(0.1), about(0.6), about(0.95)])
    seen = ReviewJudge(llm, about_by="either").about_each("Are the beds comfy?", sentences, 0.85, asked_at_least=0.5)
    assert seen == pytest.approx([0.1, 0.95])
    asked = [call[-1]["content"] for call in llm.calls[1:]]
    assert [a.startswith("Topic: bed comfort") for a in asked] == [False, False, True]
    # without the bar, the topic's pass alone would have let the general praise lead
    llm = FakeLLM(["bed comfort", about(0.9), about(0.1)])
    assert ReviewJudge(llm, about_by="either").about_each("Are the beds comfy?", sentences, 0.85) == pytest.approx(
        [0.9]
    )


def test_the_gatherer_asks_the_bar_of_praise_only():
    class Judge:
        min_about = 0.85

        def __init__(self):
            self.bars = {}

        def about_each(self, question, sentences, enough, asked_at_least=None):
            self.bars[sentences[0]] = asked_at_least
            return [0.9]

    gatherer = bare_gatherer(Judge(), praise_about=0.5)
    reviews = [review("The beds were comfy.", None, 1), review("The bed was hard.", None, 2, n=1)]
    keep, stances = gatherer._verified("Are the beds comfy?", reviews, [0, 1], ["positive", "negative"])
    assert keep == [0, 1] and stances == ["positive", "negative"]
    assert gatherer.judge.bars == {"The beds were comfy.": 0.5, "The bed was hard.": None}


def test_a_verdict_after_another_places_faq_names_its_place():
    """The FAQ of Fitzbillies answered first, then the verdict of Midsummer House's reviews without its name: the
    labellers read the quote as Fitzbillies' (wrong_entity, dev dialogue 752)."""
    served = "Fitzbillies Restaurant does serve alcohol."
    fitzbillies = faq("Do you serve alcohol?", served, 2, "FITZBILLIES RESTAURANT", "restaurant", 1)
    line = digest(name="MIDSUMMER HOUSE RESTAURANT", domain="restaurant", said="1 (1 positive)")
    drinks = review(
        "They had a wide variety of non-alcoholic options.",
        "positive",
        domain="restaurant",
        name="MIDSUMMER HOUSE RESTAURANT",
    )
    mem = WorkingMemory(q="Do they serve non-alcoholic options?", e=[fitzbillies, line, drinks])

    def verdict(question, sentences):
        draft = "Yes, a diner had a wide variety of non-alcoholic options."
        return VerdictWriter(FakeLLM([draft, YES_PRAISES, judged(0.9, 0.05)])).write(question, sentences)

    reply = composed_reply(mem, [fitzbillies], verdict=verdict)
    assert reply.startswith("Fitzbillies Restaurant does serve alcohol. Midsummer House Restaurant: yes, a diner")
    assert composed_reply(mem, [fitzbillies]).startswith(
        "Fitzbillies Restaurant does serve alcohol. At Midsummer House Restaurant, a diner wrote:"
    )
    own = fitzbillies.model_copy(update={"entity_id": 1, "entity_name": "MIDSUMMER HOUSE RESTAURANT"})
    assert "Midsummer House Restaurant:" not in composed_reply(mem, [own], verdict=verdict)


def test_the_sentences_after_a_sides_lead_are_counted_only_on_the_question():
    """ "This hotel is awesome!" came after the lead on the beds and was counted among the praise of them."""

    class Judge:
        min_about = 0.85
        scores = {"The beds were comfy.": 0.9, "This hotel is awesome!": 0.2, "Great mattress.": 0.9}

        def about_each(self, question, sentences, enough, asked_at_least=None):
            out = []
            for s in sentences:
                out.append(self.scores[s])
                if out[-1] >= enough:
                    break
            return out

    gatherer = bare_gatherer(Judge())
    texts = ["The beds were comfy.", "This hotel is awesome!", "Great mattress."]
    reviews = [review(t, None, n, n=n) for n, t in enumerate(texts)]
    keep, stances = gatherer._verified("Are the beds comfy?", reviews, [0, 1, 2], ["positive"] * 3)
    assert keep == [0, 2] and stances == ["positive", "positive"]


def test_a_retrieved_sentence_quoted_without_a_gathered_side_gets_its_verdict_first():
    """Dev turns where the gatherer kept no side sent "At The Nirala, a diner wrote: "I like the beer selection"."
    alone: the labellers read the customer left to work the answer out ("partly")."""
    from augmenter.memory import EntityMention
    from augmenter.reviews.composer import ReviewReplies
    from augmenter.reviews.judge import ReviewJudge

    class Retrieved:
        def answering_faqs(self, mem):
            return []

        def answering_reviews(self, mem):
            return [review("The view from our room was stunning.", None)]

    linked = [EntityMention(domain="hotel", entity_id=1, name="ACORN GUEST HOUSE", surface="acorn", in_query=False)]
    mem = WorkingMemory(q="Does the room have a good view?", e=[], entities=linked, consolidated=True)
    quote = 'A guest wrote: "The view from our room was stunning".'
    script = [judged(0.9, 0.05), "Yes, a guest found the view from the room stunning.", YES_PRAISES, judged(0.9, 0.05)]
    about = Completion(text="Yes", top_logprobs=[{"Yes": math.log(0.95), "No": math.log(0.05)}])
    off = Completion(text="No", top_logprobs=[{"Yes": math.log(0.2), "No": math.log(0.8)}])
    judge = ReviewJudge(llm := FakeLLM([script[0], about, *script[1:]]), min_about=0.85)
    replies = ReviewReplies({}, Retrieved(), llm=llm, judge=judge, verdicts=True)
    assert replies.answer(mem).text == f"Yes, a{quote[1:]}"  # the verdict restates the quote: one sentence
    # on a side, but its about-pass does not find it on the question (clean rooms for "Are the rooms large?")
    judge = ReviewJudge(llm := FakeLLM([judged(0.9, 0.05), off]), min_about=0.85)
    replies = ReviewReplies({}, Retrieved(), llm=llm, judge=judge, verdicts=True)
    assert replies.answer(mem).text == f"At Acorn Guest House, a g{quote[3:]}"
    # the judge puts it on no side: the quote alone, as before
    replies = ReviewReplies({}, Retrieved(), llm=FakeLLM([judged(0.05, 0.05)]), verdicts=True)
    assert replies.answer(mem).text == f"At Acorn Guest House, a g{quote[3:]}"
    # a place the conversation did not name is named
    unlinked = mem.model_copy(update={"entities": []})
    replies = ReviewReplies({}, Retrieved(), llm=FakeLLM(script), verdicts=True)
    assert replies.answer(unlinked).text == f"Acorn Guest House: yes, a{quote[1:]}"


def test_a_question_that_asks_which_place_is_answered_with_its_name():
    """ "Which one will let me see something inspiring out of my window?" was answered "Some guests speak well of it."
    with a quote, and no name: the one place found is the answer, so it is named."""
    line = digest(name="ACORN GUEST HOUSE", said="1 (1 positive)")
    view = review("Our room had an excellent view of the surrounding sights.", "positive", name="ACORN GUEST HOUSE")

    def verdict(question, sentences):
        draft = "Yes, a guest had an excellent view of the surrounding sights."
        return VerdictWriter(FakeLLM([draft, judged(0.9, 0.05)])).write(question, sentences)

    asked = WorkingMemory(q="Is the view from the rooms good?", e=[line, view])
    assert not composed_reply(asked, verdict=verdict).startswith("Acorn Guest House")
    which = asked.model_copy(update={"q": "Which one has rooms with a good view?"})
    assert composed_reply(which, verdict=verdict).startswith("Acorn Guest House: ")


@pytest.mark.parametrize(
    "question, which",
    [
        ("Which one has the best view?", True),
        ("Does any place have big rooms?", True),
        ("Do any of them have free parking?", True),
        ("What hotel has a gym?", True),
        ("Is the view good?", False),
        ("What is the view like?", False),
    ],
)
def test_asks_which(question, which):
    from augmenter.text import asks_which

    assert asks_which(question) is which


def test_a_fixed_verdict_names_the_topic_the_judge_named():
    """ "Guests are divided on it." read as vague to the labellers: where the review judge names the question's topic
    (about_by or stance_by "topic"), the fixed sentence says it; praise names the place ("speak well of the place on
    the noise at night": a neutral topic may name what is praised by its absence)."""
    from augmenter.reviews.judge import ReviewJudge

    def reply(messages):
        if "neutral topic" in messages[0]["content"]:
            return Completion(text="noise at night")
        return Completion(text="Yes, guests found the room quiet at night.")

    llm = FakeLLM(default=reply)
    writer = VerdictWriter(llm, judge=ReviewJudge(llm, about_by="topic"), retries=0)
    assert writer.write("Is the room quiet?", MIXED).text == "Guests are divided on the noise at night."
    quiet = [review("We slept like babies, it was so peaceful at night.", "positive")]
    assert (
        writer.write("How is the room at night?", quiet).text
        == "A guest speaks well of the place on the noise at night."
    )
    # a judge that names no topic: "it"
    plain = VerdictWriter(FakeLLM(["Yes, guests found the room quiet at night."]), retries=0)
    assert plain.write("Is the room quiet?", MIXED).text == "Guests are divided on it."


@pytest.mark.parametrize(
    "topic, said",
    [
        ("room size", "room size"),
        ("The view from the rooms", "view from the rooms"),
        ("Acorn Guest House view", None),  # a name
        ("no pets", None),  # a negation
        ("rooms for 4", None),  # a number
        ("Is the room quiet?", None),  # the question itself: the judge named nothing
        ("the cleanliness of the rooms and bathrooms", None),  # more than four words
    ],
)
def test_what_topic_a_fixed_verdict_may_say(topic, said):
    from augmenter.reviews.verdict import sendable_topic

    assert sendable_topic(topic, "Is the room quiet?") == said


def test_a_fixed_verdict_names_no_detail_of_the_question_the_sentences_lack():
    """ "Some guests speak well of the place on the sea view." for praise of "a great view" was labelled unsupported:
    no review speaks of the sea."""
    from augmenter.reviews.verdict import sendable_topic

    great_view = ["The room had a great view and was in a good location."]
    assert sendable_topic("sea view", "Does this place have a good view of the sea?", great_view) is None
    assert sendable_topic("view", "Does this place have a good view of the sea?", great_view) == "view"
    assert sendable_topic("room size", "How large are the rooms?", ["The room was nice and big."]) == "room size"


def test_with_a_faq_check_a_faq_answers_only_where_the_model_confirms_it():
    """ "Does the hotel have clean rooms?" was answered "Yes, each room has 24 hour room service available.": the
    FAQ's question is as close to it as one that answers. With `faq_check` the model is asked of the nearest FAQs."""
    from augmenter.reviews.composer import ReviewReplies
    from augmenter.utilities.answers import AnswersQuestion

    service = faq("Does the hotel offer room service?", "Yes, each room has 24 hour room service available.", n=1)
    daily = faq("Do you provide daily housekeeping?", "Daily housekeeping is not provided here.", n=2)
    asked = []

    def reply(messages):
        entry = messages[-1]["content"].split("FAQ: ")[-1]
        asked.append(entry)
        yes = 0.9 if "housekeeping" in entry else 0.1
        return Completion(text="Yes", top_logprobs=[{"Yes": math.log(yes), "No": math.log(1 - yes)}])

    knowledge = {s.id: s for s in [service, daily]}
    mem = WorkingMemory(q="Does the hotel have clean rooms?", e=[service], consolidated=True)
    assert ReviewReplies(knowledge, AnswersQuestion(min_faq=0.6)).answer(mem).text.startswith("Yes, each room has")
    checked = ReviewReplies(knowledge, AnswersQuestion(min_faq=0.6), FakeLLM(default=reply), faq_check=0.65)
    assert checked.answer(mem) is None and asked == [service.text]
    daily_mem = WorkingMemory(q="Are the rooms cleaned every day?", e=[daily], consolidated=True)
    assert checked.answer(daily_mem).text == "Daily housekeeping is not provided here."
    with pytest.raises(ValueError, match="needs an LLM"):
        ReviewReplies(knowledge, AnswersQuestion(), faq_check=0.65)


@pytest.mark.parametrize(
    "asked, theirs, stands_for",
    [("spacious", "large", True), ("reliable", "stable", True), ("decent", "good", True), ("reliable", "fast", False)]
    + [("clean", "spotless", False), ("beer", "drinks", False), ("pork", "food", False)],
)
def test_a_word_of_the_question_may_stand_for_one_of_the_reviews(asked, theirs, stands_for):
    """The pairs `SAME_WORD` was read from: the customer's word for how good something is, where the reviews use one
    like it, passes; one that says something else ("reliable" of "fast") does not, nor does a noun of the question
    however close ("pork" narrows the reviews' "food": the verdict would restate the question)."""
    from augmenter.reviews.verdict import asked_for_theirs
    from augmenter.verification.lexical import content_words

    stem = content_words(asked)[0]
    found = asked_for_theirs(f"Is the {asked} thing there?", {stem}, f"The {theirs} was fine.")
    assert found == ({stem} if stands_for else set())


def test_the_verdict_may_answer_in_the_questions_word_for_the_reviews():
    large = [review("The room was very large.", "positive")]
    llm = FakeLLM(["Yes, a guest found the rooms spacious.", YES_PRAISES, judged(0.9, 0.05)])
    assert VerdictWriter(llm, retries=0).write("Does the hotel have spacious rooms?", large).written
    cleaned = ["The room had been cleaned to an exceptional degree."]
    daily = VerdictWriter(FakeLLM([], default=YES_PRAISES), retries=0)
    fault = daily.fault(
        "Are the rooms cleaned daily?", "Yes, a guest found the rooms cleaned daily.", cleaned, "positive"
    )
    assert str(fault) == "words the reviews do not use: daili"


NOISY = [
    review("Also, due to the popularity of this place, it is quite noisy.", "negative"),
    review("The street was loud at night, never quiet.", "negative", 2, n=1),
]


def test_complaints_answer_no_to_a_question_of_how_good_it_is():
    """ "Is it quiet there?" with complaints of noise: labellers read "Some guests complained that it was noisy" as
    leaving the answer to the customer; the No says it."""
    llm = FakeLLM(["No, some guests found it quite noisy.", YES_PRAISES, judged(0.05, 0.9)])
    verdict = VerdictWriter(llm, retries=0).write("Is it quiet there?", NOISY)
    assert verdict.written and verdict.text == "No, some guests found it quite noisy."
    assert 'Begin with "No, some guests"' in llm.calls[0][-1]["content"]
    # where a Yes would complain ("Is it noisy?"), a No would say it is quiet
    loud = VerdictWriter(FakeLLM(["No, some guests found it quite noisy."], default=judged(0.1, 0.85)), retries=0)
    assert loud.write("Is it noisy at night?", NOISY).problem.startswith("a No")
    # one review's complaint gives no No: three such Noes were labelled contradicted (the sentence was off the question)
    one = VerdictWriter(FakeLLM([], default=YES_PRAISES))
    fault = one.fault("Is it quiet there?", "No, a guest found it quite noisy.", [NOISY[0].text], "negative", reviews=1)
    assert fault.kind is FaultKind.A_NO


def test_a_yes_only_where_a_yes_praises():
    quiet = [review("It was never noisy at night, so peaceful.", "positive")]
    llm = FakeLLM(["Yes, a guest found it so peaceful at night."], default=judged(0.1, 0.85))
    verdict = VerdictWriter(llm, retries=0).write("Is it noisy at night?", quiet)
    assert not verdict.written and verdict.problem == "a Yes: it would say the other side"


@pytest.mark.parametrize(
    "question, quality",
    [("Is it quiet there?", True), ("Are the beds comfortable?", True), ("Is the beer a good value?", True)]
    + [("Can you book a room with an enjoyable view?", True), ("Does it have a stable internet connection?", True)]
    + [("Are there plentiful non alcoholic drink options?", True), ("Is the location appealing?", True)]
    + [("Do they offer fair portion sizes ?", True)]
    + [("Do they serve wine?", False), ("Is there parking?", False), ("Do they have outdoor seating?", False)],
)
def test_asks_quality(question, quality):
    from augmenter.text import asks_quality

    assert asks_quality(question) == quality


def test_the_part_a_verdict_draws_on_uses_a_word_of_the_question_where_one_does():
    """MiniLM alone picks "The Ashley Hotel has big rooms" for "Is that a quiet hotel?": the verdict would be shown
    big rooms and refused "quiet", a word the reviewer wrote."""
    from augmenter.reviews.verdict import focus_of

    said = "The Ashley Hotel has big rooms, and really comfortable beds, and also it's very quiet at night."
    assert focus_of("Is that a quiet hotel?", [said]) == ["also it's very quiet at night"]
    # no fragment uses a word of the question: the one closest in meaning
    assert focus_of("Is the view good?", ["The vista was stunning, the bed was comfy"]) == ["The vista was stunning"]


def test_a_faq_answer_that_does_not_name_its_place_is_named_where_other_places_follow():
    """ "Outdoor seating is available." first, then another place's reviews: read as said of every place (a
    contradiction where the other place's FAQ says it has none); with the place's name it is said of that one."""
    chop = faq(
        "Is there outdoor seating?", "Outdoor seating is available.", 2, "THE CAMBRIDGE CHOP HOUSE", "restaurant"
    )
    line = digest(name="MIDSUMMER HOUSE RESTAURANT", domain="restaurant", said="1 (1 positive)")
    terrace = review(
        "We loved the terrace in the sun.", "positive", domain="restaurant", name="MIDSUMMER HOUSE RESTAURANT"
    )
    mem = WorkingMemory(q="Do they have outdoor dining?", e=[chop, line, terrace])
    reply = composed_reply(mem, [chop])
    assert reply.startswith("The Cambridge Chop House: Outdoor seating is available. At Midsummer House Restaurant,")
    alone = WorkingMemory(q="Do they have outdoor dining?", e=[chop])
    assert composed_reply(alone, [chop]) == "Outdoor seating is available."  # the one place: no name needed


def test_a_verdict_the_judge_reads_as_off_the_question_gives_no_verdict():
    """ "Yes, a guest had access to a wonderful shared kitchen" to "Is the view good?" (a retrieved sentence off the
    question): sent back once, and where the second draft is off it too, no verdict leads (nor a fixed sentence,
    which would say the guest speaks well of the view)."""
    kitchen = [review("We had access to a wonderful shared kitchen.", "positive")]
    off = Completion(text="Un", top_logprobs=[{"Pr": math.log(0.2), "Compl": math.log(0.05), "Un": math.log(0.75)}])
    draft = "Yes, a guest had access to a wonderful shared kitchen."
    llm = FakeLLM([draft, YES_PRAISES, off, draft, off])
    assert VerdictWriter(llm).write("Is the view good?", kitchen) is None
    assert "say only what they found of exactly what was asked" in llm.calls[3][-1]["content"]
    # read as on the question, the same draft leads
    kept = VerdictWriter(FakeLLM([draft, YES_PRAISES, judged(0.9, 0.05)])).write("Is the kitchen good?", kitchen)
    assert kept.written


def test_a_verdict_that_speaks_as_the_reviewer_is_sent_back():
    """ "No, a diner found the view out of our window was mediocre": the review's words, unquoted, in the first
    person (natural 1 with the labellers)."""
    window = [review("The view out of our window was quite mediocre.", "negative", domain="restaurant")]
    llm = FakeLLM(
        [
            "A diner found the view out of our window quite mediocre.",
            "A diner found the view out of the window quite mediocre.",
            judged(0.05, 0.9),
        ]
    )
    verdict = VerdictWriter(llm).write("What is the view like?", window)
    assert verdict.written and verdict.text == "A diner found the view out of the window quite mediocre."
    assert 'never as "we", "our", "my" or "I"' in llm.calls[1][-1]["content"]


def test_a_word_both_the_question_and_the_reviewer_use_is_free_wherever_it_stands():
    """ "connection" of "the connection quality was superb", outside the part closest to the question ("The free
    Internet was extremely fast"), is what was asked about; a word the question alone uses still is not."""
    writer = VerdictWriter(FakeLLM([YES_PRAISES, judged(0.9, 0.05)]), retries=0)
    said = ["The free Internet was extremely fast and the connection quality was superb."]
    ask = "Can you confirm they have a reliable internet connection?"
    focus = ["The free Internet was extremely fast"]
    text = "Yes, a guest found the internet connection extremely fast."
    assert writer.fault(ask, text, said, "positive", focus=focus) is None
    restated = writer.fault(ask, "Yes, a guest found the internet connection reliable.", said, "positive", focus=focus)
    assert restated.kind.name == "WORDS" and restated.words == ("reliabl",)


def test_a_pronoun_with_its_verb_contracted_is_no_word_of_the_verdicts_own():
    """ "they've" is "they have": a draft that says "some diners say they've enjoyed the beer" adds no word."""
    from augmenter.verification.lexical import content_words

    assert content_words("they've they'd they'll that's what's") == []
    assert content_words("well") == ["well"]  # a word that a contraction's letters spell stays a word


def test_a_kept_sentence_that_opens_with_its_reviewers_gets_the_yes_or_no_the_question_allows():
    """ "A diner found the restaurant wasn't decorated well." to "Does it have nice indoor decor?" was labelled as
    leaving the customer to infer the answer: it is sent as "No, a diner found ..."; a complaint to a question that
    asks whether a thing is there (wifi) gets no No, and a sentence that opens otherwise is left as it is."""
    drab = [
        review("However, the restaurant wasn't decorated well and looked quite drab.", "negative", domain="restaurant")
    ]
    drab.append(review("The decor was tired and dated.", "negative", 2, n=1, domain="restaurant"))
    draft = "A diner found the restaurant wasn't decorated well."
    llm = FakeLLM([draft, judged(0.05, 0.9), YES_PRAISES])
    assert VerdictWriter(llm).write("Does it have nice indoor decor?", drab).text == f"No, a{draft[1:]}"
    llm = FakeLLM([draft, judged(0.05, 0.9)], default=YES_PRAISES)  # one review's complaint: no No
    assert VerdictWriter(llm).write("Does it have nice indoor decor?", drab[:1]).text == draft
    slow = [review("I had difficulty using the wireless Internet, it was slow.", "negative")]
    draft = "A guest had difficulty using the wireless Internet."
    llm = FakeLLM([draft, judged(0.05, 0.9)], default=YES_PRAISES)
    assert VerdictWriter(llm).write("Does this hotel offer wifi?", slow).text == draft
    lovely = [review("A lovely view awaits you from the terrace.", "positive", domain="restaurant")]
    draft = "A lovely view awaits from the terrace, a diner found."  # names no reviewers first: no Yes before it
    llm = FakeLLM([draft, judged(0.9, 0.05)], default=YES_PRAISES)
    assert VerdictWriter(llm).write("Is the view nice?", lovely).text == draft
    draft = "The restaurant wasn't decorated well, a diner found."
    llm = FakeLLM([draft, judged(0.05, 0.9)], default=YES_PRAISES)
    assert VerdictWriter(llm).write("Does it have nice indoor decor?", drab).text == draft


@pytest.mark.parametrize(
    "question, price, alone",
    [
        ("Do they charge a fee for wifi there?", True, True),
        ("Is it a good value?", True, True),  # "good" says how good, not of what
        ("Will I get some bang for my buck here?", True, True),
        ("Is the wifi fast and free?", True, False),  # how fast too
        ("Does this restaurant have multiple beer options?", False, False),
        ("Is it quiet at night?", False, False),
        ("Do they have gluten-free options?", False, False),  # free of gluten, not of charge
        ("How would you rate the view?", False, False),
    ],
)
def test_which_questions_ask_a_price(question, price, alone):
    from augmenter.text import asks_price_alone, speaks_of_price

    assert speaks_of_price(question) is price and asks_price_alone(question) is alone
    assert speaks_of_price("It was $4 a pint.") and not speaks_of_price("The beer was cold.")


@pytest.mark.parametrize(
    "sides, lead",
    [
        ([("Gonville Hotel", "positive"), ("University Arms", "mixed")], "The reviews favour Gonville Hotel."),
        ([("Anatolia", "mixed"), ("Efes", "negative")], "The reviews favour Anatolia."),
        ([("Gonville Hotel", "positive"), ("University Arms", "positive")], "Both have reviews that speak well of it."),
        ([("A", "negative"), ("B", "negative"), ("C", "negative")], "All 3 have reviews that complain of it."),
        ([("A", "mixed"), ("B", "mixed")], "Both have divided reviews on it."),
        ([("A", "positive"), ("B", "positive"), ("C", "negative")], "A and B have reviews that speak well of it."),
    ],
)
def test_which_lead_answers_which_place(sides, lead):
    from augmenter.reviews.replies import which_lead

    assert which_lead(sides) == lead


def test_a_question_that_asks_which_of_several_places_gets_the_answer_first():
    """ "Which hotel has the most comfortable bed?" was answered with each place's verdict and quotes and no pick:
    labelled "partly" (the customer compares). The answer now leads, from the sides of the places' verdicts; it
    leads only where every place has a verdict and no FAQ answers."""
    gonville = review("The bed was so comfortable.", "positive", name="GONVILLE HOTEL")
    arms = [
        review("The beds were comfy.", "positive", 2, entity_id=2, name="UNIVERSITY ARMS HOTEL"),
        review("My bed was hard as a rock.", "negative", 3, entity_id=2, n=1, name="UNIVERSITY ARMS HOTEL"),
    ]
    e = [digest(name="GONVILLE HOTEL"), gonville, digest(entity_id=2, name="UNIVERSITY ARMS HOTEL"), *arms]
    mem = WorkingMemory(q="Which hotel has the most comfortable bed?", e=e)

    def verdict(question, sentences):
        side = side_of(sentences)
        text = "Guests are divided on the beds." if side == "mixed" else "Yes, a guest found the bed comfortable."
        return Verdict(text, side, True, "", list(sentences))

    reply = composed_reply(mem, verdict=verdict)
    assert reply.startswith("The reviews favour Gonville Hotel. Gonville Hotel: ")
    assert "University Arms Hotel: guests are divided on the beds." in reply
    # a question that does not ask which: no lead
    assert not composed_reply(mem.model_copy(update={"q": "Are the beds comfortable?"}), verdict=verdict).startswith(
        "The reviews"
    )
    # one place without a verdict (its quote alone): nothing to compare, no lead
    partial = lambda q, sentences: verdict(q, sentences) if sentences[0].entity_id == 1 else None  # noqa: E731
    assert composed_reply(mem, verdict=partial).startswith("Gonville Hotel: ")
    # a FAQ answers: no lead
    beds = faq("Are the beds comfortable?", "All our beds have memory foam mattresses.")
    assert not composed_reply(mem, [beds], verdict=verdict).startswith("The reviews")


def test_a_candidate_that_says_only_what_reviews_say_is_sent_as_their_verdict():
    """A passing candidate's claims on reviews were sent as the sentences quoted alone ("At Bedouin, a diner wrote:
    "Some things I liked was affordable price and drinks"." to "Does the Bedouin have reasonably priced drinks?"):
    labelled "partly". With verdicts, such a candidate is sent as the reviews' verdict and quotes."""
    from augmenter.memory import ClaimCheck, EntityMention, EvidenceRef
    from augmenter.memory import Verdict as Supported
    from augmenter.reviews.composer import VERDICT_NOTE, ReviewReplies

    stunning = review("The view from our room was stunning.", None)

    class Retrieved:
        def answering_faqs(self, mem):
            return []

        def answering_reviews(self, mem):
            return [stunning]

    linked = [EntityMention(domain="hotel", entity_id=1, name="ACORN GUEST HOUSE", surface="acorn", in_query=False)]
    mem = WorkingMemory(q="Does the room have a good view?", e=[stunning], entities=linked, consolidated=True)
    on_review = [
        ClaimCheck(
            claim="The rooms have a stunning view.",
            verdict=Supported.SUPPORTED,
            p_supported=0.9,
            evidence=[EvidenceRef(id=stunning.id, text=stunning.text)],
        )
    ]
    script = [judged(0.9, 0.05), "Yes, a guest found the view from the room stunning.", YES_PRAISES, judged(0.9, 0.05)]
    replies = ReviewReplies({stunning.id: stunning}, Retrieved(), llm=FakeLLM(script), verdicts=True)
    sent = replies.quote(mem, on_review)
    assert sent.text == 'Yes, a guest wrote: "The view from our room was stunning".' and sent.note == VERDICT_NOTE
    # without verdicts: the sentence quoted in place of the claim, as before
    plain = ReviewReplies({stunning.id: stunning}, Retrieved(), llm=FakeLLM([]), verdicts=False)
    quoted_alone = 'At Acorn Guest House, a guest wrote: "The view from our room was stunning".'
    assert plain.quote(mem, on_review).text == quoted_alone
    # a claim of the candidate rests on a FAQ: the candidate's words stay, the review's claim quoted
    wifi = faq("Is there wifi?", "Yes, free wifi in every room.")
    on_faq = ClaimCheck(
        claim="There is free wifi.",
        verdict=Supported.SUPPORTED,
        p_supported=0.9,
        evidence=[EvidenceRef(id=wifi.id, text=wifi.text)],
    )
    mixed = ReviewReplies({stunning.id: stunning, wifi.id: wifi}, Retrieved(), llm=FakeLLM([]), verdicts=True)
    assert mixed.quote(mem, [on_faq, *on_review]).text.startswith("There is free wifi. A guest wrote:")
