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
