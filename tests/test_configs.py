"""Every option of every config group composes, instantiates to its `_target_` and does its job (after
lightning-hydra-template's test_configs), and the agent built around it answers."""

import json
import re

import pytest
from hydra.utils import get_object

from augmenter.config import GROUPS, build_agent, build_llm, build_utility, compose, group_options, instantiate
from augmenter.errors import AugmenterError, ConfigError
from augmenter.knowledge import KnowledgeBase, top_k
from augmenter.llm import FakeLLM, SamplingParams
from augmenter.memory import Action, Snippet, Verdict, WorkingMemory
from conftest import DATA

# Per knowledge base: a question, a reply its knowledge supports (the fake LLM gives it) and where it says so.
TURNS = {
    "demo": (
        "Does the Grand Meridian Hotel have a pool?",
        "Yes, there is an indoor heated pool open from 7 am to 10 pm.",
        "an indoor heated pool open from 7 am",
    ),
    "demo2": (
        "How much does a puncture repair cost at Spoke Doctor?",
        "A puncture repair costs 8 pounds and is done while you wait.",
        "A puncture repair costs 8 pounds",
    ),
    "dstc11": (
        "Is there an onsite pool at Ashley Hotel?",
        "There is no onsite pool at Ashley Hotel.",
        "There is no onsite pool at Ashley Hotel.",
    ),
    "dstc7_facts": (
        "Why was Grbac featured as sexiest athlete?",
        "Grbac was featured as the sexiest athlete in 1998.",
        "grbac was featured as people ' s sexiest athlete in 1998",
    ),
    "jsonl": ("Is the Spa open every day?", "The Spa is open daily.", "The Spa is open daily."),
    "docs": ("When does the Spa open?", "The Spa opens at 9 am every day.", "The Spa opens at 9 am every day."),
    "ottqa": (
        "Who created the series in which the character of Robert , played by actor Nonso Anozie , appeared ?",
        "Lynda La Plante",
        "Lynda La Plante",
    ),
}
TEXTS = ["The indoor pool is open from 7 am to 10 pm.", "Parking is free for all guests.", "Dogs are welcome."]


def _quotes_the_evidence(mem) -> bool:
    """Every quoted passage of the reply is a passage of the turn's evidence."""
    quotes = re.findall(r'"([^"]+)"', mem.response)
    return bool(quotes) and all(any(q.rstrip(".") in s.text for s in mem.e) for q in quotes)


def _overrides(group, option, tmp_path, policy_file=None):
    knowledge = (
        option if group == "knowledge" else "ottqa" if (group, option) == ("consolidator", "table_text") else "demo"
    )
    extra = [f"data_root={DATA}", "llm_cache.enabled=false"]
    if knowledge == "ottqa":  # tables and passages need their own consolidator (task=ottqa)
        extra += ["task=ottqa", "retriever=bm25s"]
    if (group, option) == ("policy", "trained"):
        extra.append(f"policy.checkpoint={policy_file}")
    if group != "llm":  # the LLM verifier reads the fake's label
        extra += ["llm=fake", f"llm.default='{'SUPPORTED' if group == 'verifier' else TURNS[knowledge][1]}'"]
    if knowledge == "jsonl":
        kb = tmp_path / "kb.jsonl"
        kb.write_text(json.dumps({"entity": "Spa", "text": "The Spa is open daily."}) + "\n")
        extra.append(f"knowledge.path={kb}")
    if knowledge == "docs":  # a folder of one Markdown page, indexed into tmp_path
        (tmp_path / "docs").mkdir()
        (tmp_path / "docs" / "spa.md").write_text("# Spa Guide\n\n## Hours\n\nThe Spa opens at 9 am every day.\n")
        extra += [f"knowledge.path={tmp_path / 'docs'}", f"knowledge.index_dir={tmp_path / 'index'}"]
    return [f"{group}={option}", *extra]


CASES = [(g, o) for g in GROUPS for o in group_options(g)]


def test_every_group_has_options():
    assert all(group_options(g) for g in GROUPS)
    assert len(CASES) >= 17


def _memory(evidence: list[str]) -> WorkingMemory:
    mem = WorkingMemory(q="Is parking free?")
    mem.e = [Snippet(id=str(i), text=text) for i, text in enumerate(evidence)]
    return mem


def _check_works(group, option, obj, cfg) -> None:
    """Use the object as the agent does and check what it gives."""
    if group == "llm" and isinstance(obj, FakeLLM):  # the others load a model or reach a server: tests/test_llm.py
        assert obj.complete([{"role": "user", "content": "Hi"}], SamplingParams()).text == cfg.llm.default
    elif group == "retriever":
        obj.index(TEXTS)
        assert [i for i, _ in top_k(obj.scores("is parking free"), 3)][0] == 1
    elif group == "knowledge":
        texts = [s.text for s in obj.snippets] if isinstance(obj, KnowledgeBase) else obj.texts
        assert any(TURNS[option][2] in text for text in texts)
    elif group == "verifier":
        judgement = obj.judge("Parking is free for all guests.", TEXTS)
        assert judgement.verdict == Verdict.SUPPORTED and judgement.evidence[0] == 1
    elif group == "utility":
        supported, invented = (
            obj(_memory(TEXTS), "Parking is free for all guests."),
            obj(_memory(TEXTS), "The moon hosts a casino with a rooftop golf course."),
        )
        assert supported.passed and not invented.passed and supported.score > invented.score
    elif group == "policy":  # the first action for a question (no entity named); an untrained policy: any
        first = {
            "always_use": Action.CONSOLIDATE_KNOWLEDGE,
            "llm_augmenter": Action.CONSOLIDATE_KNOWLEDGE,
            "no_knowledge": Action.CALL_LLM,
            "rules": Action.CALL_LLM,
            "self_ask": Action.ASK_NEED_KNOWLEDGE,
        }
        choice = obj.next_action(_memory([]))
        assert choice == first[option] if option in first else isinstance(choice, Action)
    elif group == "consolidator":  # links and retrieves the evidence its knowledge supports the reply with
        question, _, evidence = TURNS["ottqa" if option == "table_text" else "demo"]
        query, snippets = obj.retrieve(question, [], obj.link(question, []))
        assert query and len(snippets) <= cfg.consolidator.k and any(evidence in s.text for s in snippets)
    elif group == "prompt":
        messages = obj.respond(_memory(TEXTS))
        assert "Is parking free?" in messages[-1]["content"]
        assert all(any(text in m["content"] for m in messages) for text in TEXTS)


@pytest.mark.parametrize("group, option", CASES)
def test_option_composes_instantiates_and_works(group, option, tmp_path, untrained_policy_file):
    cfg = compose("chat", _overrides(group, option, tmp_path, untrained_policy_file))
    if group == "task":  # a task selects its knowledge base (and for Wiki QA its consolidator)
        assert (
            cfg.knowledge._target_
            == {
                "demo": "augmenter.knowledge.demo.load_demo_knowledge",
                "demo2": "augmenter.knowledge.demo.load_demo2_knowledge",
                "dstc11": "augmenter.knowledge.load_dstc11",
                "dstc7": "augmenter.tasks.dstc7.load_facts",
                "docs": "augmenter.documents.load_documents",
                "ottqa": "augmenter.tasks.ottqa.load_corpus",
            }[option]
        )
        return
    llm = build_llm(cfg) if group != "llm" else None
    prompts = instantiate(cfg.prompt, "prompt")
    verifier = instantiate(cfg.verifier, "verifier", llm=llm, prompts=prompts)
    available = {"llm": llm, "prompts": prompts, "verifier": verifier}
    if group == "consolidator":
        available.update(knowledge=instantiate(cfg.knowledge, "knowledge"), retriever=instantiate(cfg.retriever, "r"))
    obj = (
        build_utility(cfg.utility, **available)
        if group == "utility"  # a combined utility builds its base first
        else instantiate(cfg[group], group, **available)
    )
    target = get_object(cfg[group]._target_)
    if isinstance(target, type):  # a class: the object is one (loaders return their own types)
        assert isinstance(obj, target)
    _check_works(group, option, obj, cfg)
    if group in ("policy", "utility", "knowledge", "prompt", "consolidator"):  # the agent built around it answers
        question, reply, _ = TURNS[option if group == "knowledge" else "ottqa" if option == "table_text" else "demo"]
        mem = build_agent(cfg).respond(question)
        actions = [r.action.value for r in mem.trace]
        if option == "no_knowledge":  # nothing retrieved, so nothing in the reply is supported: it abstains
            assert "consolidate_knowledge" not in actions and not mem.e and mem.outcome == "abstained"
        elif option == "trained":  # an untrained policy's greedy choices, within the step budget, then a send
            # the max_steps-th decision ends the turn: a forced first LLM call and the send may follow it
            assert actions[-1] == "send" and len(actions) <= cfg.agent.max_steps + 2
            assert (
                mem.response == reply
                or (mem.outcome == "abstained" and mem.response.startswith("I'm sorry"))
                or (mem.outcome == "quoted" and _quotes_the_evidence(mem))
            )
        elif cfg.policy._target_.endswith("GroundedPolicy") and cfg.consolidator.get("opinions") and not mem.o:
            # the default: a review speaks to the question, so the knowledge's own words answer it, no draft
            assert mem.outcome == "quoted" and ' wrote: "' in mem.response and _quotes_the_evidence(mem)
        elif option == "docs":  # a document's answer leads, then the passage it rests on, quoted with its file
            assert mem.outcome == "answered" and mem.response == f'{reply}\n\n"{reply}" (spa.md, Hours)'
        else:  # the evidence supports the fake's reply: it is sent as it is
            assert mem.e and mem.response == reply and mem.outcome == "answered"


def test_wrong_option_is_one_clear_line():
    with pytest.raises(ConfigError) as err:
        compose("chat", ["policy=nope"])
    assert "policy/nope" in str(err.value) and "llm_augmenter" in str(err.value) and "\n" not in str(err.value)


def test_missing_data_path_is_one_clear_line(tmp_path):
    with pytest.raises(AugmenterError) as err:
        build_agent(compose("chat", ["llm=fake", "task=dstc11", f"data_root={tmp_path}"]))
    assert "knowledge file not found" in str(err.value) and "\n" not in str(err.value)


def test_bad_value_is_one_clear_line():
    with pytest.raises(ConfigError, match="threshold"):
        build_agent(compose("chat", ["llm=fake", "utility.threshold=7"]))
    with pytest.raises(ConfigError, match="max_llm_calls"):
        build_agent(compose("chat", ["llm=fake", "agent.max_llm_calls=0"]))
