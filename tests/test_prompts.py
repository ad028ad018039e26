import pytest

import augmenter.reviews  # noqa: F401  (the room that declares how a review sentence shows in a prompt)
from augmenter.errors import ConfigError
from augmenter.memory import Snippet, Utterance, WorkingMemory
from augmenter.prompts import PromptEngine, PromptTemplate


def test_response_prompt_has_instruction_history_evidence_and_feedback():
    engine = PromptEngine(max_history_turns=2, response="customer_service")
    mem = WorkingMemory(
        q="Is their beer good?",
        h_q=[
            Utterance(speaker="U", text="old turn"),
            Utterance(speaker="U", text="Find me food."),
            Utterance(speaker="S", text="Try The Nirala."),
        ],
    )
    mem.e = [Snippet(id="1", text="The drinks are priced well.", entity_name="THE NIRALA", doc_type="review")]
    first = engine.respond(mem)
    assert first[0]["role"] == "system" and "travel planning" in first[0]["content"]
    last = first[-1]["content"]
    assert "- [THE NIRALA] Review: The drinks are priced well." in last
    assert "User: Find me food.\nAssistant: Try The Nirala.\nUser: Is their beer good?" in last
    assert "old turn" not in last and "Feedback" not in last
    mem.add_candidate("I don't know.")
    mem.add_verdict(0.0, "The response is inconsistent with the knowledge. Please generate again.")
    revised = engine.respond(mem)[-1]["content"]
    assert "Your previous response was: I don't know." in revised
    assert "Feedback on it: The response is inconsistent" in revised


def test_prompt_without_evidence_has_no_knowledge_section():
    text = PromptEngine(response="customer_service").respond(WorkingMemory(q="Hello"))[-1]["content"]
    assert "Knowledge" not in text and text.endswith("User: Hello")


def test_prompt_files_load_by_path_and_fail_clearly(tmp_path):
    good = tmp_path / "mine.yaml"
    good.write_text("instruction: Be brief.\ntemplate: 'Q: {{ q }}'\nfew_shot:\n  - {user: hi, assistant: hello}\n")
    messages = PromptTemplate.load(str(good)).render(q="why?")
    assert messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "Q: why?"},
    ]
    with pytest.raises(ConfigError, match="unknown prompt"):
        PromptTemplate.load("no_such_prompt")
    bad = tmp_path / "bad.yaml"
    bad.write_text("template: '{{ q '\n")
    with pytest.raises(ConfigError):
        PromptTemplate.load(str(bad))


def test_a_reply_that_runs_on_into_the_prompt_format_is_cut():
    cut = PromptTemplate.load("customer_service").cut
    assert cut("Yes, it has free parking.\nUser: Great, book it.\nAssistant: Done.") == "Yes, it has free parking."
    assert cut("Assistant: Yes, free parking.") == "Yes, free parking."
    assert cut("It is cheap.\nFeedback on it: The response is inconsistent.") == "It is cheap."
    assert cut("Two lines,\nboth the answer.") == "Two lines,\nboth the answer."
    assert cut("The User: label inside a line stays.") == "The User: label inside a line stays."
    assert cut("User: only labels") == "User: only labels"  # never cut to nothing
    assert PromptTemplate.load("self_critique").cut("Feedback: Use the parking fact.") == "Use the parking fact."


def test_the_agent_sends_the_cut_reply_and_keeps_the_raw_one_in_the_trace(make_agent):
    from augmenter.llm import FakeLLM
    from policies import LLMAugmenterPolicy

    agent = make_agent(
        FakeLLM(default="Alpha Hotel has free parking.\nUser: thanks\nAssistant: bye"), LLMAugmenterPolicy()
    )
    mem = agent.respond("Does Alpha Hotel have free parking?")
    assert mem.response == "Alpha Hotel has free parking."
    call = next(a for a in mem.trace if a.action.value == "call_llm")
    assert call.outputs["raw"].endswith("Assistant: bye")


@pytest.mark.parametrize("response", ["customer_service", "assistant"])
def test_self_ask_shares_the_response_prompts_prefix(response):
    """Self-ask is asked after the response prompt's instruction and examples, so llama.cpp evaluates them once
    per turn; its own instruction and examples follow, then the question."""
    engine = PromptEngine(response=response)
    mem = WorkingMemory(q="Do they allow pets?", h_q=[Utterance(speaker="U", text="I need a hotel in the north.")])
    mem.e = [Snippet(id="1", text="Pets are welcome.")]
    ask, answer = engine.self_ask(mem), engine.respond(mem)
    shared = len(engine.response.few_shot) * 2 + 1  # the system message and every example
    assert ask[:shared] == answer[:shared] and ask[shared] != answer[shared]
    assert ask[shared]["content"].startswith(engine.self_ask_prompt.instruction.strip())
    assert ask[-1]["role"] == "user" and ask[-1]["content"].endswith("User: Do they allow pets?")
    assert "Pets are welcome." not in " ".join(m["content"] for m in ask)  # no evidence before it is looked up
