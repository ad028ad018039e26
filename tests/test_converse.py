"""`augmenter converse`, simulated conversations between the LLM user simulator and a system, with the
scripted fake LLM: one record per conversation with every turn's Working Memory, resumable, a failed conversation
recorded as failed and retried, a fatal LLM error stopping the run with its records kept."""

import json

import pytest

from augmenter.cli.main import main
from augmenter.envs.user_sim import LLMUserSimulator
from augmenter.errors import ConfigError, InputError, LLMError, LLMFatalError
from augmenter.eval.conversations import ConversationRunner, ConversationSeed, chat_seeds, dstc11_seeds, sample_seeds
from augmenter.llm import Completion, FakeLLM
from augmenter.memory import Utterance
from augmenter.policies import NoKnowledgePolicy
from conftest import DATA

SEEDS = DATA / "botchat" / "MuTual_test_starts.jsonl"
USER_PROMPT = "Write the user's next message."  # in every prompt of the user simulator
USER_LINES = ("Is it far from here?", "And is it open on Sunday?")


class ScriptedLLM(FakeLLM):
    """The user says "Is it far from here?", then "And is it open on Sunday?"; the assistant "It is a short walk."
    `errors[needle]` is raised when a
    prompt contains `needle`; every prompt is kept in `prompts` (class attributes: the config names the class)."""

    errors: dict = {}
    prompts: list = []

    def complete(self, messages, params):
        prompt = "\n".join(m["content"] for m in messages)
        type(self).prompts.append(prompt)
        for needle, error in self.errors.items():
            if needle in prompt:
                raise error
        answered = prompt.count("Assistant: It is a short walk.")
        text = USER_LINES[min(answered, 1)] if USER_PROMPT in prompt else "It is a short walk."
        return Completion(text=text, prompt_tokens=len(prompt.split()), completion_tokens=len(text.split()))


class EchoingLLM(ScriptedLLM):
    """As ScriptedLLM, but the assistant says the second user message back (as the 0.5B model often does)."""

    def complete(self, messages, params):
        done = super().complete(messages, params)
        prompt = "\n".join(m["content"] for m in messages)
        if USER_PROMPT not in prompt and USER_LINES[1] in prompt:
            return Completion(text=f"Yes. {USER_LINES[1]}", prompt_tokens=done.prompt_tokens, completion_tokens=7)
        return done


@pytest.fixture
def llm(monkeypatch):
    monkeypatch.setattr(ScriptedLLM, "errors", {})
    monkeypatch.setattr(ScriptedLLM, "prompts", [])
    return ScriptedLLM


def _args(tmp_path, *extra):
    return [
        "converse",
        f"data_root={DATA}",
        "llm=fake",
        f"llm._target_={__name__}.ScriptedLLM",
        "llm_cache.enabled=false",
        f"converse.out_dir={tmp_path}",
        "converse.progress=false",
        "converse.conversations=3",
        "converse.turns=2",
        "experiment=table2_llm_only",
        *extra,
    ]


def _run_dir(tmp_path, seeds="chat_seeds", n=3, turns=2):
    return tmp_path / f"{seeds}-n{n}-t{turns}-seed0" / "table2_llm_only"


def _records(run):
    return [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]


def test_conversations_record_every_turn_and_resume(tmp_path, llm):
    assert main(_args(tmp_path)) == 0
    run = _run_dir(tmp_path)
    records = _records(run)
    expected = [s.conversation_id for s in sample_seeds(chat_seeds(SEEDS), 3, 0)]
    assert [r["conversation_id"] for r in records] == expected
    for r in records:
        assert r["status"] == "ok" and r["error"] is None and len(r["turns"]) == 2 and not r["ended_early"]
        assert [u["speaker"] for u in r["utterances"]] == ["U", "S", "U", "S", "U", "S"]
        assert r["utterances"][:2] == r["opening"] and r["ground_truth"][:2] == r["opening"]
        assert [t["user"] for t in r["turns"]] == list(USER_LINES)
        assert [t["user_source"] for t in r["turns"]] == ["llm", "llm"]
        first, second = (t["memory"] for t in r["turns"])
        assert first["response"] == "It is a short walk." and first["trace"][-1]["action"] == "send"
        assert len(first["h_q"]) == 2 and len(second["h_q"]) == 4  # the opening, then the first exchange too
        assert r["cost"]["assistant_llm_calls"] == 2 and r["cost"]["user_llm_calls"] == 2
    # the simulator saw the assistant's reply before writing the second user message
    assert any(USER_PROMPT in p and "Assistant: It is a short walk." in p for p in llm.prompts)
    summary = json.loads((run / "summary.json").read_text())
    assert (summary["ok"], summary["failed"], summary["pending"]) == (3, 0, 0)
    assert summary["cost_per_conversation"]["user_llm_calls"] == 2
    assert summary["user_messages"] == {"llm": 6}
    assert summary["replies_repeating_percent"] == 50.0  # the second reply copies the first word for word
    assert summary["replies_echoing_user_percent"] == 0.0
    calls = len(llm.prompts)
    assert main(_args(tmp_path)) == 0  # resumed: nothing left to do, nothing asked, records as they were
    assert len(llm.prompts) == calls and _records(run) == records


def test_replies_saying_the_user_message_back_are_counted(tmp_path, llm):
    assert main(_args(tmp_path, f"llm._target_={__name__}.EchoingLLM")) == 0
    run = _run_dir(tmp_path)
    assert [t["response"] for t in _records(run)[0]["turns"]] == ["It is a short walk.", f"Yes. {USER_LINES[1]}"]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["replies_echoing_user_percent"] == 50.0  # the second of each conversation's two replies
    assert summary["replies_repeating_percent"] == 0.0  # it repeats the user, not the assistant's earlier reply


def test_a_damaged_records_file_reruns_only_what_it_lost(tmp_path, llm):
    assert main(_args(tmp_path)) == 0
    run = _run_dir(tmp_path)
    good = _records(run)
    lines = (run / "records.jsonl").read_text().splitlines()
    damaged = [
        json.dumps({"conversation_id": good[0]["conversation_id"], "status": "ok"}),
        lines[1],
        lines[2][:40],
        "\udcff not json",
    ]
    (run / "records.jsonl").write_text("\n".join(damaged) + "\n", errors="surrogateescape")
    llm.prompts.clear()
    assert main(_args(tmp_path)) == 0
    again = _records(run)
    assert again[1] == good[1]  # kept as it was
    # the first and third ran again, the same way (seeded): the same dialogues
    assert [(r["conversation_id"], r["status"], r["utterances"]) for r in again] == [
        (r["conversation_id"], r["status"], r["utterances"]) for r in good
    ]
    assert llm.prompts and not any(good[1]["opening"][0]["text"] in p for p in llm.prompts)


def test_a_failed_conversation_is_recorded_and_retried_on_resume(tmp_path, llm, capsys):
    failing = sample_seeds(chat_seeds(SEEDS), 3, 0)[1]
    llm.errors = {failing.opening[0].text: LLMError("server down")}
    assert main(_args(tmp_path)) == 2  # eval-style: more failures than converse.max_failed (0)
    assert "1 of 3 conversations failed" in capsys.readouterr().err
    run = _run_dir(tmp_path)
    before = {r["conversation_id"]: r for r in _records(run)}
    bad = before[failing.conversation_id]
    assert bad["status"] == "failed" and bad["error"] == "user simulator: server down" and bad["turns"] == []
    summary = json.loads((run / "summary.json").read_text())
    assert summary["failed"] == 1 and summary["failure_reasons"] == {"user simulator: server down": 1}
    llm.errors = {}
    llm.prompts.clear()
    assert main(_args(tmp_path)) == 0
    after = {r["conversation_id"]: r for r in _records(run)}
    assert after[failing.conversation_id]["status"] == "ok"
    assert all(after[k] == before[k] for k in before if k != failing.conversation_id)  # not run again
    assert all(failing.opening[0].text in p for p in llm.prompts)  # only the failed one was asked for


def test_a_failed_assistant_turn_fails_the_conversation(tmp_path, llm):
    llm.errors = {"Is it far from here?": LLMError("model crashed")}  # the assistant's prompt has the user's message
    assert main(_args(tmp_path, "converse.max_failed=3")) == 0  # within converse.max_failed
    for r in _records(_run_dir(tmp_path)):
        assert r["status"] == "failed" and "model crashed" in r["error"]
        assert len(r["turns"]) == 1 and r["turns"][0]["status"] == "failed" and r["turns"][0]["memory"]


def test_a_fatal_llm_error_stops_with_the_records_kept(tmp_path, llm, capsys):
    second = sample_seeds(chat_seeds(SEEDS), 3, 0)[1]
    llm.errors = {second.opening[0].text: LLMFatalError("401: the key was rejected")}
    assert main(_args(tmp_path)) == 2
    err = capsys.readouterr().err
    assert "401" in err and "1 of 3 conversations recorded" in err and "\n" not in err.strip()
    assert [r["status"] for r in _records(_run_dir(tmp_path))] == ["ok"]


def test_stopped_by_hand_the_summary_says_what_is_pending(tmp_path, llm):
    second = sample_seeds(chat_seeds(SEEDS), 3, 0)[1]
    llm.errors = {second.opening[0].text: KeyboardInterrupt()}
    assert main(_args(tmp_path)) == 130
    run = _run_dir(tmp_path)
    summary = json.loads((run / "summary.json").read_text())
    assert (summary["ok"], summary["failed"], summary["pending"]) == (1, 0, 2)
    assert [r["status"] for r in _records(run)] == ["ok"]
    llm.errors = {}
    assert main(_args(tmp_path)) == 0  # resumed: the two pending conversations run
    assert json.loads((run / "summary.json").read_text())["ok"] == 3


def test_another_configuration_is_refused_unless_restarted(tmp_path, llm, capsys):
    assert main(_args(tmp_path)) == 0
    assert main(_args(tmp_path, "user_simulator.temperature=0.3")) == 2
    assert "different configuration" in capsys.readouterr().err
    assert main(_args(tmp_path, "user_simulator.temperature=0.3", "converse.restart=true")) == 0


def test_dstc11_openings(tmp_path, llm):
    assert main(_args(tmp_path, "converse.seeds=dstc11", "converse.conversations=2", "converse.turns=1")) == 0
    records = _records(_run_dir(tmp_path, "dstc11", 2, 1))
    assert len(records) == 2 and all(r["conversation_id"].startswith("dstc11-dev-") for r in records)
    assert all([u["speaker"] for u in r["opening"]] == ["U", "S"] for r in records)
    with pytest.raises(InputError, match="even"):
        dstc11_seeds(DATA / "dstc11-track5" / "dev", opening=3)


def test_gold_knowledge_is_refused(tmp_path, llm, capsys):
    assert main(_args(tmp_path, "eval.knowledge=gold")) == 2
    assert "no gold knowledge" in capsys.readouterr().err


def test_bad_seed_files_are_one_clear_error(tmp_path):
    bad = tmp_path / "seeds.jsonl"
    bad.write_text('{"index": "x", "conv-GT": "[\\"Hi\\", \\"Hello\\"]"}\n{"index": "y"}\n')
    with pytest.raises(InputError, match=r"seeds.jsonl:2"):
        chat_seeds(bad)
    with pytest.raises(InputError, match="not found"):
        chat_seeds(tmp_path / "missing.jsonl")
    assert len(chat_seeds(SEEDS)) == 547 and all(len(s.opening) == 2 for s in chat_seeds(SEEDS))


def test_the_runner_takes_built_objects(tmp_path, make_agent):
    seeds = [ConversationSeed("c1", [Utterance(speaker="U", text="Hi there."), Utterance(speaker="S", text="Hello!")])]
    user = FakeLLM(responses=["Does the Grand Meridian Hotel have a pool?", "Is it heated?", "Thanks, bye!"])
    agent = make_agent(FakeLLM(default="Yes, there is an indoor heated pool."), NoKnowledgePolicy())
    runner = ConversationRunner(
        agent,
        LLMUserSimulator(user, [["Hi there.", "Hello!"]], max_turns=3),
        seeds,
        3,
        tmp_path / "run",
        "api",
        progress=False,
    )
    summary = runner.run()
    assert summary["ok"] == 1 and summary["turns_per_conversation"] == 3
    (record,) = runner.read().values()
    assert record["system"] == "api" and len(record["utterances"]) == 8

    class Crashing:
        def respond(self, *args, **kwargs):
            raise RuntimeError("boom")

    crashed = ConversationRunner(
        Crashing(),
        LLMUserSimulator(FakeLLM(), [["a", "b"]]),
        seeds,
        2,
        tmp_path / "crash",
        max_failed=1,
        progress=False,
    )
    assert crashed.run()["failure_reasons"] == {"crash: RuntimeError: boom": 1}
    with pytest.raises(ConfigError, match="max_failed"):
        ConversationRunner(agent, LLMUserSimulator(user, [["a", "b"]]), seeds, 2, tmp_path, max_failed=-1)


@pytest.mark.live
def test_two_short_conversations_with_the_embedded_model(tmp_path):
    """Two conversations of two turns from DSTC11 openings between the user simulator and the paper's system (both
    the embedded Qwen model), resumed, then UniEval over them with the same model."""
    from augmenter.envs.user_sim import unusable

    args = [
        "converse",
        f"data_root={DATA}",
        f"converse.out_dir={tmp_path}",
        "converse.conversations=2",
        "converse.turns=2",
        "converse.progress=false",
        f"llm_cache.dir={tmp_path / 'cache'}",
        "sampling.max_tokens=60",
        "user_simulator.max_tokens=40",
        "converse.seeds=dstc11",
        "converse.min_goals=2",
    ]
    assert main(args) == 0
    run = tmp_path / "dstc11-n2-t2-g2-seed0" / "table2_bm25_feedback"  # min_goals names the sample
    records = _records(run)
    assert len(records) == 2
    for r in records:
        assert r["status"] == "ok" and len(r["turns"]) == 2  # a goal for every turn: never ended early
        # At most: retries=2, so a fallback follows 3 tries.
        tries = {"llm": 1, "llm_goal": 3, "llm_retry": 2, "goal": 3}
        assert (
            2
            <= r["cost"]["user_llm_calls"]
            <= sum(tries[t["user_source"]] + (t["user_source"] == "llm_retry") for t in r["turns"])
        )
        for turn in r["turns"]:
            history = [Utterance(**u) for u in turn["memory"]["h_q"]]
            assert turn["user_source"] == "goal" or unusable(turn["user"], history) is None
            assert turn["response"].strip() and turn["memory"]["trace"][-1]["action"] == "send"
        assert r["turns"][1]["memory"]["h_q"][-1]["text"] == r["turns"][0]["response"]
    assert main(args) == 0 and _records(run) == records  # resumed: nothing left to do
    judged = [
        "judge",
        str(run),
        "judge.judges=[unieval]",
        "judge.progress=false",
        f"judge.out={tmp_path / 'judge'}",
        f"llm_cache.dir={tmp_path / 'cache'}",
        "judge.max_tokens=60",
        "llm=local_small",
    ]  # the system's model
    assert main(judged) == 0
    results = json.loads((tmp_path / "judge" / "results.json").read_text())
    row = results["unieval"]["table2_bm25_feedback"]
    # every conversation is judged (wholly or in part), unparsed or found to copy the prompt's worked example
    assert row["failed"] == 0 and row["judged"] + row["partial"] + row["unparsed"] + row.get("copied", 0) == 2


# ---- the user simulator's guard: unusable messages written again, the human's own message as the fallback ---------
def test_unusable_user_messages_are_named():
    from augmenter.envs.user_sim import unusable

    history = [
        Utterance(speaker="U", text="I need a cheap hotel."),
        Utterance(speaker="S", text="The Alpha-Milton guest house is cheap and in the north of town."),
    ]
    assert unusable("Does it have free parking?", history) is None
    assert unusable("", history) == "empty"
    assert unusable("word " * 61, history) == "too long"
    assert unusable("User: Does it have parking?", history) == "prompt labels"
    assert unusable("Write the user's next message.", history) == "prompt labels"
    assert unusable("Thanks! What the user says next, in other words: a room.", history) == "prompt labels"
    for text in (
        "I'm sorry, but I can't assist with that request.",
        "Sure, let me look that up for you.",
        "How can I help you today?",
        "I'd be happy to help with that.",
        "What would you like to do?",
        "Here's a revised response: it is cheap.",
    ):
        assert unusable(text, history) == "speaks as the assistant", text
    assert unusable("The Alpha-Milton guest house is cheap and in the north.", history) == "copies the assistant"
    assert unusable("I need a cheap hotel!", history) == "repeats an earlier user message"


def test_the_simulator_writes_again_then_says_the_humans_own_message(tmp_path, make_agent):
    opening = [Utterance(speaker="U", text="I need a hotel."), Utterance(speaker="S", text="Which area?")]
    truth = [
        *opening,
        Utterance(speaker="U", text="The north, please."),
        Utterance(speaker="S", text="Acorn House."),
        Utterance(speaker="U", text="Does it have wifi?"),
    ]
    seed = ConversationSeed("c1", opening, truth)
    assert seed.goals == ["The north, please.", "Does it have wifi?"]
    refusal = "I'm sorry, but I can't assist with that."
    user = FakeLLM(responses=[refusal, "Somewhere in the north.", refusal, refusal, refusal, refusal, refusal, refusal])
    agent = make_agent(FakeLLM(default="Acorn House is in the north."), NoKnowledgePolicy())
    simulator = LLMUserSimulator(user, [["I need a hotel.", "Which area?"]], max_turns=3, retries=2)
    runner = ConversationRunner(agent, simulator, [seed], 3, tmp_path / "run", progress=False)
    summary = runner.run()
    (record,) = runner.read().values()
    assert [(t["user"], t["user_source"]) for t in record["turns"]] == [
        ("Somewhere in the north.", "llm_retry"),
        ("Does it have wifi?", "goal"),
    ]  # then no goal left: done
    assert record["ended_early"] and record["status"] == "ok"
    assert "What the user says next, in other words: The north, please." in user.calls[0][-1]["content"]
    assert len(user.calls) == 2 + 3 + 3  # two tries, then three unusable ones and the goal, then three and done
    assert summary["user_messages"] == {"llm_retry": 1, "goal": 1}
    # without goals the LLM alone writes: unusable three times, "Hello!" opens, and then the user is done
    plain = ConversationRunner(
        agent,
        LLMUserSimulator(FakeLLM(default=refusal), [["a", "b"]], retries=2),
        [seed],
        3,
        tmp_path / "plain",
        progress=False,
        goals=False,
    )
    assert plain.run()["user_messages"] == {"default": 1}
    (record,) = plain.read().values()
    assert [(t["user"], t["user_source"]) for t in record["turns"]] == [("Hello!", "default")]
    assert record["ended_early"] and record["status"] == "ok"
    with pytest.raises(InputError, match="retries"):
        LLMUserSimulator(user, [["a", "b"]], retries=-1)


def test_min_goals_keeps_only_seed_dialogues_long_enough():
    seeds = dstc11_seeds(DATA / "dstc11-track5" / "dev")
    long_ones = sample_seeds(seeds, 20, 0, min_goals=6)
    assert len(long_ones) == 20 and all(len(s.goals) >= 6 for s in long_ones)
    assert sum(len(s.goals) >= 6 for s in seeds) < len(seeds)  # it does leave some out
    with pytest.raises(InputError, match="min_goals"):
        sample_seeds(seeds, 5, 0, min_goals=1000)


def test_a_copy_of_the_simulators_prompt_example_is_written_again():
    copy = "I hope so! Are the trams easy with two big suitcases?"  # the prompt's few-shot answer
    user = FakeLLM(responses=[copy, "Is the Acorn House near the station?"])
    history = [Utterance(speaker="U", text="I need a hotel."), Utterance(speaker="S", text="Acorn House is nice.")]
    simulator = LLMUserSimulator(user, [["a", "b"]])
    assert simulator.next_message(history, seed=1) == ("Is the Acorn House near the station?", "llm_retry")
    said = [Utterance(speaker="U", text="Are the trams easy with two big suitcases?"), *history[1:]]
    mine = "Yes, and are the trams easy with two big suitcases and a dog in the evening rush hour?"
    assert LLMUserSimulator(FakeLLM(default=mine), [["a", "b"]]).next_message(said, seed=1) == (mine, "llm")


def test_the_simulators_guard_under_greedy_decoding_and_without_it():
    history = [Utterance(speaker="U", text="I need a hotel."), Utterance(speaker="S", text="Which area?")]
    refusal = "I'm sorry, but I can't assist with that."
    greedy = FakeLLM(default=refusal)
    assert (
        LLMUserSimulator(greedy, [["a", "b"]], temperature=0.0).next_message(history, 1, "The north.")
        == ("The north.", "goal")
        and len(greedy.calls) == 1
    )  # another seed would write the same: no retries
    copier = FakeLLM(default="The north, please!")
    assert LLMUserSimulator(copier, [["a", "b"]]).next_message(history, 1, "The north, please.") == (
        "The north, please!",
        "llm_goal",
    )  # said the hint word for word: counted apart from its own words
    unguarded = LLMUserSimulator(FakeLLM(default=refusal), [["a", "b"]], guard=False)
    assert unguarded.next_message(history, 1) == (refusal, "llm")  # the training env's simulator, as before


def test_the_summary_line_when_no_reply_was_counted(capsys):
    from augmenter.cli.conversations import print_converse_summary

    print_converse_summary(
        {
            "name": "s",
            "ok": 1,
            "conversations": 1,
            "failed": 0,
            "run_dir": "d",
            "turns_per_conversation": 0.0,
            "cost_per_conversation": {"seconds": 1.0},
            "replies_repeating_percent": None,
            "replies_dodging_percent": None,
            "replies_echoing_user_percent": None,
        }
    )
    out = capsys.readouterr().out
    assert "replies repeating -, dodging -, echoing the user -" in out and "1 of 1 conversations" in out
