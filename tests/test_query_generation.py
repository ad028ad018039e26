"""The LLM writes the search query: parsing, the NONE answer, multiple queries, the switch."""

from augmenter.agent.executor import parse_queries
from augmenter.llm import FakeLLM
from augmenter.memory import Action, Utterance
from augmenter.policies import AlwaysUsePolicy


def test_parse_queries():
    assert parse_queries("Grand Meridian Hotel pool hours") == ["Grand Meridian Hotel pool hours"]
    assert parse_queries("NONE") == [] and parse_queries(" none. ") == [] and parse_queries("") == []
    assert parse_queries('1. "hotel pool"\n2. Query: airport shuttle price\n- hotel pool') == [
        "hotel pool",
        "airport shuttle price",
    ]
    assert len(parse_queries("\n".join(f"q{i}" for i in range(9)), limit=3)) == 3


def _agent(make_agent, reply):
    fake = FakeLLM(rules={"You write search queries": reply}, default="An answer.")
    agent = make_agent(fake, AlwaysUsePolicy())
    agent.executor.query_generation = True
    return agent, fake


def test_the_generated_query_decides_the_evidence(make_agent):
    agent, fake = _agent(make_agent, "Grand Meridian Hotel airport shuttle")
    history = [
        Utterance(speaker="U", text="I'm staying at the Grand Meridian Hotel."),
        Utterance(speaker="S", text="Great choice!"),
    ]
    mem = agent.respond("How do I get there from the airport?", history)
    record = mem.trace[0]
    assert record.action == Action.CONSOLIDATE_KNOWLEDGE and record.llm_calls == 1
    assert record.inputs["queries"] == ["Grand Meridian Hotel airport shuttle"]
    assert "shuttle" in mem.e[0].text.lower()
    search_prompt = next(m for m in fake.calls if "You write search queries" in m[0]["content"])
    assert "I'm staying at the Grand Meridian Hotel." in search_prompt[-1]["content"]  # h_q is in the prompt


def test_none_means_no_lookup(make_agent):
    agent, _ = _agent(make_agent, "NONE")
    mem = agent.respond("Thanks, that's all!")
    assert mem.e == [] and "no search query" in mem.trace[0].note and mem.response == "An answer."


def test_several_queries_interleave_their_hits(make_agent):
    agent, _ = _agent(make_agent, "Grand Meridian Hotel pool\nGrand Meridian Hotel airport shuttle")
    mem = agent.respond("Tell me about the pool and the shuttle of the Grand Meridian Hotel.")
    texts = [s.text.lower() for s in mem.e]
    assert "pool" in texts[0] and "shuttle" in texts[1] and len(mem.e) <= agent.executor.consolidator.k


def test_the_date_hint_goes_into_the_prompt():
    from augmenter.memory import WorkingMemory
    from augmenter.prompts import PromptEngine

    assert (
        "Today is 2026-11-22"
        in PromptEngine(today="2026-11-22", response="customer_service").search_query(WorkingMemory(q="hi"))[-1][
            "content"
        ]
    )
    assert (
        "Today is" not in PromptEngine(response="customer_service").search_query(WorkingMemory(q="hi"))[-1]["content"]
    )
