from augmenter.memory import Action, ActionRecord, Snippet, Utterance, WorkingMemory


def test_round_trips_through_json():
    mem = WorkingMemory(
        q="Is there parking?", h_q=[Utterance(speaker="U", text="Hi"), Utterance(speaker="S", text="Hello")]
    )
    mem.e.append(
        Snippet(
            id="hotel:1:faq:0",
            text="Q: Parking? A: Free.",
            domain="hotel",
            entity_id=1,
            entity_name="X",
            doc_type="faq",
            doc_id=0,
            score=1.5,
        )
    )
    mem.add_candidate("Yes, parking is free.")
    mem.add_verdict(0.4, None)
    mem.trace.append(
        ActionRecord(
            action=Action.CALL_LLM,
            llm_calls=1,
            prompt_tokens=10,
            completion_tokens=5,
            inputs={"messages": [{"role": "user", "content": "x"}]},
        )
    )
    mem.response = "Yes, parking is free."
    again = WorkingMemory.from_json(mem.to_json())
    assert again == mem
    assert again.trace[0].action is Action.CALL_LLM
    assert again.llm_calls == 1 and again.prompt_tokens == 10


def test_best_candidate_prefers_highest_utility_then_latest():
    mem = WorkingMemory(q="q")
    assert mem.best_candidate() is None
    mem.add_candidate("a")
    assert mem.best_candidate() == "a"  # unverified: the latest
    mem.add_verdict(0.5, None)
    mem.add_candidate("b")
    mem.add_verdict(0.2, "bad")
    mem.add_candidate("c")
    mem.add_verdict(0.5, None)
    assert mem.best_candidate() == "c"
    assert mem.feedback is None and mem.last_utility == 0.5


def test_verdict_needs_an_unverified_candidate():
    mem = WorkingMemory(q="q")
    try:
        mem.add_verdict(1.0, None)
    except ValueError:
        pass
    else:
        raise AssertionError("expected ValueError")


def test_a_snippet_shows_the_label_its_kind_declares_and_no_label_for_an_undeclared_kind():
    from augmenter.memory import KINDS, KnowledgeKind, register_kind

    register_kind("memo", KnowledgeKind(label=lambda s: f"Memo ({s.stance or 'plain'}): "))
    try:
        memo = Snippet(id="m", text="Lunch at one.", entity_name="TEAM", doc_type="memo", context=["ask Ann"])
        assert memo.render() == "[TEAM] Memo (plain): Lunch at one. (ask Ann)"
        assert Snippet(id="n", text="Lunch at one.", doc_type="note").render() == "Lunch at one."
    finally:
        del KINDS["memo"]


def test_the_reviews_room_declares_how_faqs_and_review_sentences_show():
    import augmenter.reviews  # noqa: F401  (declares its kinds on import)

    review = Snippet(id="r", text="The beds were comfy.", entity_name="GONVILLE HOTEL", doc_type="review")
    assert review.render() == "[GONVILLE HOTEL] Review: The beds were comfy."
    assert review.model_copy(update={"stance": "negative"}).render().startswith("[GONVILLE HOTEL] Review (negative): ")
    assert Snippet(id="f", text="Q: Parking? A: Free.", doc_type="faq").render() == "Q: Parking? A: Free."
    assert "stance" in review.model_dump() and "label" not in review.model_dump()  # records carry no label
