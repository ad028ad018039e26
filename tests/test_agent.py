import pytest

from augmenter.agent import EMPTY_REPLY, FAILED_REPLY, Session, parse_yes_no
from augmenter.errors import ConfigError, LLMError
from augmenter.llm import FakeLLM
from augmenter.memory import Action, WorkingMemory
from augmenter.policies import AlwaysUsePolicy, LLMAugmenterPolicy, NoKnowledgePolicy, RulePolicy, SelfAskPolicy

GOOD = "Yes, the Grand Meridian Hotel has an indoor heated pool open from 7 am to 10 pm."
BAD = "I have no idea, sorry."
Q = "Does the Grand Meridian Hotel have a swimming pool?"


def actions(mem):
    return [r.action.value for r in mem.trace]


def test_paper_policy_retries_with_feedback_until_utility_passes(make_agent):
    fake = FakeLLM(responses=[BAD, GOOD])
    mem = make_agent(fake, LLMAugmenterPolicy()).respond(Q)
    assert actions(mem) == ["consolidate_knowledge", "call_llm", "verify_utility", "call_llm", "verify_utility", "send"]
    assert mem.response == GOOD and mem.u[0] < 0.3 <= mem.u[1]
    assert "indoor heated pool" in mem.evidence_text()
    assert "Feedback on it: The response is inconsistent" in fake.calls[1][-1]["content"]
    assert mem.trace[3].inputs["temperature"] == 0.7  # revisions are sampled, not greedy repeats


def test_budget_forces_the_best_candidate_out(make_agent):
    fake = FakeLLM(responses=["pool", BAD, BAD, BAD])
    mem = make_agent(fake, LLMAugmenterPolicy(), max_llm_calls=3).respond(Q)
    assert mem.llm_calls == 3 and len(fake.calls) == 3
    assert mem.response == "pool"  # KF1 > 0 beats the two 0-score candidates
    assert mem.trace[-1].action == Action.SEND and mem.trace[-1].requested == Action.CALL_LLM
    assert "budget" in mem.trace[-1].note


def test_no_knowledge_and_always_use(make_agent):
    mem = make_agent(FakeLLM(default=BAD), NoKnowledgePolicy()).respond(Q)
    assert actions(mem) == ["call_llm", "send"] and mem.e == [] and not mem.consolidated
    mem = make_agent(FakeLLM(default=BAD), AlwaysUsePolicy()).respond(Q)
    assert actions(mem) == ["consolidate_knowledge", "call_llm", "verify_utility", "send"]
    assert mem.f[0] is not None and mem.response == BAD  # scored, never revised


@pytest.mark.parametrize("answer, consolidates", [("YES", True), ("No.", False), ("maybe", True)])
def test_self_ask(make_agent, answer, consolidates):
    fake = FakeLLM(rules={"Reply with YES or NO": answer}, default=GOOD)
    mem = make_agent(fake, SelfAskPolicy()).respond(Q)
    assert mem.trace[0].action == Action.ASK_NEED_KNOWLEDGE
    assert (Action.CONSOLIDATE_KNOWLEDGE in [r.action for r in mem.trace]) is consolidates
    assert mem.llm_calls == 2


def test_if_then_rules_from_config(make_agent):
    rules = [
        {"if": "entity_mentioned and not consolidated", "then": "consolidate_knowledge"},
        {"if": "not has_candidate", "then": "call_llm"},
        {"then": "send"},
    ]
    agent = make_agent(FakeLLM(default=GOOD), RulePolicy(rules))
    assert actions(agent.respond(Q)) == ["consolidate_knowledge", "call_llm", "send"]
    assert actions(agent.respond("Thanks, goodbye!")) == ["call_llm", "send"]
    regex = RulePolicy(
        [
            {"if": "query_matches:\\breviews?\\b and not consolidated", "then": "consolidate_knowledge"},
            {"then": "call_llm"},
        ]
    )
    assert regex.next_action(WorkingMemory(q="What do reviews say?")) == Action.CONSOLIDATE_KNOWLEDGE
    assert regex.next_action(WorkingMemory(q="Hi")) == Action.CALL_LLM


def test_knowledge_answers_when_a_kind_declares_a_snippet_its_answer_and_reviews_answer_reads_the_same():
    import augmenter.reviews  # noqa: F401  (declares the "opinions" kind: a line that takes a side answers)
    from augmenter.memory import Snippet
    from augmenter.policies import GroundedPolicy

    def line(stance):
        return Snippet(id="opinions:hotel:1", text="2 positive, 1 negative.", doc_type="opinions", stance=stance)

    sides = WorkingMemory(q="Is it quiet?", consolidated=True, e=[line("mixed")])
    neutral = WorkingMemory(q="Is it quiet?", consolidated=True, e=[line("neutral")])
    review = WorkingMemory(q="Is it quiet?", consolidated=True, e=[Snippet(id="r", text="Quiet.", doc_type="review")])
    assert sides.knowledge_answers and not neutral.knowledge_answers and not review.knowledge_answers
    for name in ("knowledge_answers", "reviews_answer"):
        rules = RulePolicy([{"if": f"{name} and not has_candidate", "then": "send"}, {"then": "call_llm"}])
        assert [rules.next_action(m) for m in (sides, neutral, review)] == [Action.SEND, *[Action.CALL_LLM] * 2]
    grounded = GroundedPolicy()
    assert [grounded.next_action(m) for m in (sides, neutral)] == [Action.SEND, Action.CALL_LLM]


@pytest.mark.parametrize(
    "rules, message",
    [
        ([{"if": "moon_is_full", "then": "send"}], "unknown predicate"),
        ([{"then": "dance"}], "unknown action"),
        ([{"if": "consolidated"}], "needs 'then"),
        ([{"if": "query_matches:([", "then": "send"}], "bad regular expression"),
        ([], "no rules"),
    ],
)
def test_bad_rules_fail_clearly(rules, message):
    with pytest.raises(ConfigError, match=message):
        RulePolicy(rules)


def test_invalid_policy_choices_are_replaced_not_crashing(make_agent):
    class SendFirst:
        def next_action(self, mem):
            return Action.SEND

    mem = make_agent(FakeLLM(default=GOOD), SendFirst()).respond(Q)
    assert actions(mem) == ["call_llm", "send"] and mem.trace[0].requested == Action.SEND

    class Loops:
        def next_action(self, mem):
            return Action.CONSOLIDATE_KNOWLEDGE

    mem = make_agent(FakeLLM(default=GOOD), Loops(), max_steps=4).respond(Q)
    assert actions(mem)[-2:] == ["call_llm", "send"] and mem.response == GOOD
    assert "step budget" in mem.trace[-1].note


def test_bad_input_gives_safe_answers(make_agent):
    fake = FakeLLM(default=GOOD)
    agent = make_agent(fake, LLMAugmenterPolicy())
    for empty in ("", "   \n\t"):
        mem = agent.respond(empty)
        assert mem.response == EMPTY_REPLY and mem.trace == []
    assert fake.calls == []
    huge = "pool " * 20_000  # 100,000 characters
    mem = agent.respond(huge)
    assert len(mem.q) == 2000 and mem.response and "cut to 2000" in mem.warnings[0]
    assert all(len(m["content"]) < 20_000 for m in fake.calls[-1])


def test_llm_failure_is_a_safe_answer(make_agent):
    def down(messages):
        raise LLMError("http://127.0.0.1:9/v1: APIConnectionError: Connection error.")

    mem = make_agent(FakeLLM(default=down), LLMAugmenterPolicy()).respond(Q)
    assert mem.response == FAILED_REPLY and "APIConnectionError" in mem.warnings[0]


def test_session_keeps_history_and_links_across_turns(make_agent):
    fake = FakeLLM(default=GOOD)
    session = Session(make_agent(fake, LLMAugmenterPolicy()))
    session.say(Q)
    mem = session.say("Is there an airport shuttle there?")
    assert [t.speaker for t in mem.h_q] == ["U", "S"]
    assert [m.name for m in mem.entities] == ["Grand Meridian Hotel"] and not mem.entities[0].in_query
    assert any("shuttle" in s.text for s in mem.e)
    assert "User: " + Q in fake.calls[-1][-1]["content"]


def test_parse_yes_no():
    assert parse_yes_no("Yes.") is True and parse_yes_no("NO") is False and parse_yes_no("hmm") is None


def test_a_fallback_that_answers_is_named_in_the_trace(make_agent):
    from augmenter.errors import LLMError
    from augmenter.llm import FakeLLM
    from augmenter.llm.resilient import ResilientLLM
    from augmenter.memory import Action
    from augmenter.policies import AlwaysUsePolicy

    primary = FakeLLM(default=LLMError("primary down"), model="primary")
    llm = ResilientLLM(primary, [FakeLLM(default="The pool opens at 7 am.", model="backup")])
    mem = make_agent(llm, AlwaysUsePolicy()).respond("When does the pool open?")
    call = next(r for r in mem.trace if r.action == Action.CALL_LLM)
    assert mem.response == "The pool opens at 7 am." and mem.outcome == "answered"
    assert call.outputs["served_by"] == "fake|backup" and len(primary.calls) == 1
