"""Few-shot leakage: the measure, the domain-neutral default prompt and the second demo."""

import json

import pytest

from augmenter.eval.leakage import allowed_text, fewshot_entities, fewshot_leaks, leak_rate
from augmenter.memory import Snippet, Utterance, WorkingMemory
from augmenter.prompts import PromptEngine, PromptTemplate

NORTH = PromptTemplate(
    name="north",
    instruction="Answer from the knowledge.",
    template="{{ q }}",
    few_shot=[
        {
            "user": "Knowledge:\n- [ALPHA HOTEL] Q: Where is it? A: North of the centre.\n\nContext:\n"
            "User: Where is the hotel?",
            "assistant": "Alpha Hotel is located in the north of the city, close to the river.",
        }
    ],
)


def test_a_phrase_copied_from_a_few_shot_answer_is_flagged():
    response = "Sorry, it is located in the north of the city, close to the park."
    leaks = fewshot_leaks(response, NORTH, allowed="Where is the Blue Inn? [BLUE INN] Review: Lovely rooms.")
    assert leaks == ["is located in north of city close to"]


def test_the_same_phrase_in_the_turns_own_evidence_is_not_leakage():
    response = "Sorry, it is located in the north of the city, close to the park."
    evidence = "[BLUE INN] Review: It is located in the north of the city, close to the park."
    assert fewshot_leaks(response, NORTH, allowed="Where is the Blue Inn?\n" + evidence) == []


def test_a_clean_response_does_not_leak():
    assert fewshot_leaks("The Blue Inn has lovely rooms.", NORTH, allowed="[BLUE INN] Review: Lovely rooms.") == []
    assert fewshot_leaks("", NORTH) == []


def test_few_shot_entities_leak_unless_the_turn_names_them():
    assert fewshot_entities(NORTH) == ["ALPHA HOTEL"]
    assert fewshot_leaks("Try Alpha Hotel.", NORTH, allowed="I need a hotel.") == ["ALPHA HOTEL"]
    assert fewshot_leaks("Try Alpha Hotel.", NORTH, allowed="Is Alpha Hotel nice?") == []
    paper = PromptTemplate.load("customer_service")
    names = {name.lower() for name in fewshot_entities(paper)}
    assert {"alpha hotel", "the nirala"} <= names
    assert fewshot_leaks("The Nirala is a good choice.", paper, allowed="Where can I eat?") == ["THE NIRALA"]


def test_what_the_instruction_asks_for_is_not_leakage():
    prompt = PromptTemplate.load("assistant")
    allowed = "Does the museum have a gift shop? [HARBOUR MUSEUM] Q: Is there a cafe? A: Yes."
    assert fewshot_leaks("I don't have that information. The knowledge says there is a cafe.", prompt, allowed) == []
    copied = fewshot_leaks("Yes, there are benches on every floor of Example Place.", prompt, allowed)
    assert "EXAMPLE PLACE" in copied and "there are benches on every floor" in " ".join(copied)


def test_leak_rate_over_pairs_memories_and_records():
    clean = ("The Blue Inn is quiet.", "[BLUE INN] Review: Quiet.")
    leaky = ("Alpha Hotel is located in the north of the city.", "")
    share, examples = leak_rate([clean, leaky, clean, clean], NORTH)
    assert share == pytest.approx(0.25)
    assert examples == [{"response": leaky[0], "leaks": ["ALPHA HOTEL", "alpha hotel is located in north of city"]}]
    assert leak_rate([], NORTH) == (None, [])
    mem = WorkingMemory(q="Is Alpha Hotel far?", h_q=[Utterance(speaker="U", text="Hi")])
    mem.e = [Snippet(id="1", text="It is located in the north of the city.", entity_name="ALPHA HOTEL")]
    mem.response = "Alpha Hotel is located in the north of the city."
    assert "ALPHA HOTEL" in allowed_text(mem) and "Hi" in allowed_text(mem)
    record = {"response": mem.response, "memory": mem.model_dump(mode="json")}
    assert leak_rate([mem, record], NORTH) == (0.0, [])
    assert leak_rate([{"memory": mem.model_dump(mode="json")}], NORTH)[0] == 0.0
    # in a live session the assistant's earlier turns are the agent's own replies: a repeated leak still counts
    mem.h_q.append(Utterance(speaker="S", text="Try Alpha Hotel."))
    assert "Try Alpha Hotel" in allowed_text(mem) and "Try Alpha Hotel" not in allowed_text(mem, system_turns=False)


# ---- the domain-neutral default prompt ----------------------------------------------------------------------
def test_assistant_prompt_renders_with_and_without_evidence_and_feedback():
    prompt = PromptTemplate.load("assistant")
    text = prompt.instruction.lower()
    assert "travel" not in text and "hotel" not in text and "restaurant" not in text
    assert "i don't have that information" in text
    assert prompt.few_shot and any("don't have that information" in s["assistant"] for s in prompt.few_shot)
    assert all(name.upper() == "EXAMPLE PLACE" for name in fewshot_entities(prompt))
    engine = PromptEngine(response="assistant")
    bare = engine.respond(WorkingMemory(q="Hello"))
    assert bare[0]["content"] == prompt.instruction and len(bare) == 2 + 2 * len(prompt.few_shot)
    assert bare[-1]["content"] == "Context:\nUser: Hello"
    mem = WorkingMemory(
        q="Is it open on Sundays?",
        h_q=[Utterance(speaker="U", text="Tell me about the bakery."), Utterance(speaker="S", text="It sells bread.")],
    )
    mem.e = [Snippet(id="1", text="Q: Open on Sundays? A: No.", entity_name="CRUMB AND CRUST BAKERY")]
    first = engine.respond(mem)[-1]["content"]
    assert first.startswith("Knowledge:\n- [CRUMB AND CRUST BAKERY] Q: Open on Sundays? A: No.")
    assert "User: Tell me about the bakery.\nAssistant: It sells bread.\nUser: Is it open on Sundays?" in first
    assert "Feedback" not in first
    mem.add_candidate("Yes.")
    mem.add_verdict(0.0, "The response is inconsistent with the knowledge. Please generate again.")
    revised = engine.respond(mem)[-1]["content"]
    assert "Your previous response was: Yes.\nFeedback on it: The response is inconsistent" in revised
    assert revised.endswith("Write an improved response.")
    assert prompt.cut("No, it is closed.\nUser: thanks") == "No, it is closed."


def test_chat_defaults_to_the_assistant_prompt_and_the_papers_experiments_keep_theirs():
    from augmenter.config import compose

    assert compose("chat", ["llm=fake"]).prompt.response == "assistant"
    expected = {"table1": "news_chat", "table5": "wiki_qa", "grounded": "assistant"}  # grounded: the checked system
    for name in _experiments():
        cfg = compose("eval", [f"experiment={name}"])
        want = next((p for prefix, p in expected.items() if name.startswith(prefix)), "customer_service")
        assert cfg.prompt.response == want, name
    # a prompt asked for on the command line still wins over the experiment's
    assert compose("eval", ["experiment=table2_bm25", "prompt=assistant"]).prompt.response == "assistant"


def _experiments():
    from augmenter.config import config_dir

    return sorted(p.stem for p in (config_dir() / "experiment").glob("*.yaml"))


# ---- the second demo --------------------------------------------------------------------------------------------
def test_demo2_knowledge_is_jsonl_of_other_domains(tmp_path):
    from augmenter.knowledge import load_jsonl
    from augmenter.knowledge.demo import DEMO2_SCRIPT, DEMO2_TURNS, write_demo2_knowledge

    path = write_demo2_knowledge(tmp_path)
    assert path == tmp_path / "knowledge.jsonl" and write_demo2_knowledge(tmp_path) == path  # idempotent
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*"))
    kb = load_jsonl(path)
    assert len(kb.entities) == 5 and {e.domain for e in kb.entities} >= {"bakery", "library", "museum"}
    assert all(e.aliases for e in kb.entities)
    assert {s.doc_type for s in kb.snippets} == {"faq", "review"}
    assert any("closed on Sundays" in s.text for s in kb.snippets)
    kinds = [kind for _, kind in DEMO2_TURNS]
    assert len(DEMO2_SCRIPT) == 12 and kinds.count("unanswerable") == 4 and kinds.count("no") >= 2
    assert kinds.count("price") + kinds.count("time") >= 2
    assert all(json.loads(line)["entity"] for line in path.read_text().splitlines())


def test_chat_runs_on_demo2_with_the_fake_llm(tmp_path, monkeypatch):
    from augmenter.cli.main import main
    from augmenter.knowledge.demo import DEMO2_SCRIPT

    monkeypatch.setenv("AUGMENTER_CACHE", str(tmp_path / "cache"))
    script, out = tmp_path / "turns.txt", tmp_path / "session.jsonl"
    script.write_text("\n".join(DEMO2_SCRIPT[:3]) + "\n")
    assert main(["chat", "task=demo2", "llm=fake", "--script", str(script), "--output", str(out)]) == 0
    turns = [json.loads(line)["memory"] for line in out.read_text().splitlines()]
    assert len(turns) == 3
    assert any("Sundays" in s["text"] for s in turns[0]["e"])  # the bakery's evidence
    assert (tmp_path / "cache" / "demo2" / "knowledge.jsonl").exists()


# ---- the guard: a leaking candidate loses the copied sentences before anything sees it ------------------------
def test_drop_fewshot_leaks_keeps_the_sentences_of_the_turns_own():
    from augmenter.prompts.leakage import drop_fewshot_leaks

    prompt = PromptTemplate.load("assistant")  # its second example: "... two guests loved the colourful murals ..."
    allowed = "Is Avalon's room large? [AVALON] Review: The room was small."
    text = "Avalon's room was small. Two guests loved the colourful murals in the hall."
    kept, leaks = drop_fewshot_leaks(text, prompt, allowed)
    assert leaks == ["two guests loved colourful murals in hall"] and kept == "Avalon's room was small."
    assert fewshot_leaks(kept, prompt, allowed) == []
    assert drop_fewshot_leaks("Avalon's room was small.", prompt, allowed) == ("Avalon's room was small.", [])
    # nothing of the turn's own left: empty
    assert drop_fewshot_leaks("There are benches on every floor of Example Place.", prompt, allowed)[0] == ""


@pytest.mark.parametrize("guard", [True, False])
def test_the_executor_drops_copied_sentences_and_keeps_the_raw_reply(make_agent, guard):
    from augmenter.agent.executor import ABSTAIN_REPLY
    from augmenter.llm import FakeLLM
    from augmenter.memory import Action
    from augmenter.policies import AlwaysUsePolicy

    reply = "The Grand Meridian has a pool. Also there are benches on every floor of Example Place."
    agent = make_agent(
        FakeLLM(responses=[reply, "There are benches on every floor of Example Place."]), AlwaysUsePolicy()
    )
    agent.executor.prompts = PromptEngine(response="assistant")
    agent.executor.fewshot_guard = guard
    mem = agent.respond("Does the Grand Meridian Hotel have a pool?")
    call = next(r for r in mem.trace if r.action == Action.CALL_LLM)
    if not guard:
        assert mem.response == reply and "fewshot_leaks" not in call.outputs
        return
    assert mem.response == "The Grand Meridian has a pool."
    assert call.outputs["raw"] == reply and "EXAMPLE PLACE" in call.outputs["fewshot_leaks"]
    assert any("copied the prompt's examples" in w for w in mem.warnings)
    # a reply that is nothing but the examples becomes the "does not answer" reply, not an empty candidate
    second = agent.respond("Does the Grand Meridian Hotel have a pool?")
    assert second.response == ABSTAIN_REPLY
