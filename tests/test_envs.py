"""The gymnasium environment: API conformance, invalid actions, reward and costs."""

import os
import re
import subprocess
import sys
import textwrap
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from augmenter.envs import ACTIONS, CHARSET, DSTC11Replay, TurnEnv, UserTurn, observation_text
from augmenter.errors import ConfigError
from augmenter.memory import Action, Snippet, WorkingMemory
from augmenter.policies import LLMAugmenterPolicy, MemoryPolicy, RandomPolicy, run_episode
from conftest import DATA, ROOT

FAKE = [f"data_root={DATA}", "llm=fake"]


@pytest.fixture(scope="module")
def env():
    return gymnasium.make(
        "augmenter/Turn-v0",
        overrides=FAKE,
        part="all",
        limit=60,
        seeking_share=None,
        llm_call_cost=0.01,
        consolidation_cost=0.005,
    ).unwrapped


def test_registered_env_passes_the_gymnasium_checker(env):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)  # render and close checks included: they make the env again from its spec
    assert not [str(w.message) for w in caught if "gymnasium" in w.filename]
    assert gymnasium.spec("augmenter/Turn-v0").max_episode_steps == env.agent.max_steps


def test_ansi_render_shows_the_working_memory():
    env = gymnasium.make("augmenter/Turn-v0", overrides=FAKE, part="all", limit=10, render_mode="ansi")
    obs, _ = env.reset(seed=0)
    assert env.render() == obs["text"] and obs["text"].startswith("user: ")
    obs, *_ = env.step(ACTIONS.index(Action.CALL_LLM))
    assert "candidate 1" in env.render() and env.render() == obs["text"]
    with pytest.raises(ConfigError, match="render_mode"):
        gymnasium.make("augmenter/Turn-v0", overrides=FAKE, limit=10, render_mode="human")


def test_replay_has_both_kinds_of_turns(env):
    kinds = {t.knowledge_seeking for t in env.users.turns}
    assert kinds == {True, False}
    assert all(t.gold for t in env.users.turns if t.knowledge_seeking)
    assert not any(t.gold for t in env.users.turns if not t.knowledge_seeking)
    only_seeking = DSTC11Replay(
        DATA / "dstc11-track5", "dev", env.agent.executor.consolidator.kb, limit=60, seeking_share=1.0
    )
    rng = np.random.default_rng(0)
    assert all(only_seeking.sample(rng).knowledge_seeking for _ in range(20))


def _seeking_turn(env):
    return next(t for t in env.users.turns if t.knowledge_seeking)


def test_an_episode_pays_costs_and_ends_with_the_quality(env):
    obs, info = env.reset(seed=0, options={"turn": _seeking_turn(env)})
    assert obs in env.observation_space and info["knowledge_seeking"]
    obs, r1, done, truncated, _ = env.step(ACTIONS.index(Action.CONSOLIDATE_KNOWLEDGE))
    assert r1 == pytest.approx(-0.005) and not done and obs["features"][0] == 1.0
    obs, r2, done, _, _ = env.step(ACTIONS.index(Action.CALL_LLM))
    assert r2 == pytest.approx(-0.01) and not done and obs["features"][1] == 1.0
    obs, r3, done, _, info = env.step(ACTIONS.index(Action.SEND))
    assert done and not truncated and r3 == pytest.approx(info["quality"])
    assert info["quality"] == pytest.approx(
        env.agent.executor.utility.score(WorkingMemory(q="x", e=_seeking_turn(env).gold), env.mem.response)
    )
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_sending_with_nothing_to_send_is_replaced_not_a_crash(env):
    env.reset(seed=1, options={"turn": _seeking_turn(env)})
    obs, reward, done, _, info = env.step(ACTIONS.index(Action.SEND))  # the Agent's rule: call the LLM first
    assert not done and info["replaced"] and info["taken"] == ["call_llm"] and obs["features"][1] == 1.0
    assert reward == pytest.approx(-0.01)


def test_a_turn_that_needs_no_knowledge_only_pays_costs(env):
    chat = next(t for t in env.users.turns if not t.knowledge_seeking)
    env.reset(seed=2, options={"turn": chat})
    env.step(ACTIONS.index(Action.CALL_LLM))
    _, reward, done, _, info = env.step(ACTIONS.index(Action.SEND))
    assert done and info["quality"] == 0.0 and reward == 0.0


def test_the_step_budget_truncates_an_endless_episode(env):
    env.reset(seed=3, options={"turn": _seeking_turn(env)})
    terminated = truncated = False
    steps = 0
    while not (terminated or truncated):
        _, reward, terminated, truncated, info = env.step(ACTIONS.index(Action.CONSOLIDATE_KNOWLEDGE))
        steps += 1
    assert steps == env.agent.max_steps and env.mem.response and truncated is True and terminated is False
    assert "quality" in info and env.mem.trace[-1].action == Action.SEND  # the agent sent its best candidate


def test_observation_text_stays_in_its_charset():
    mem = WorkingMemory(q="Café – “quoted”?", e=[Snippet(id="1", text="naïve résumé")])
    text = observation_text(mem, max_chars=40)
    assert len(text) <= 40 and set(text) <= set(CHARSET) and text.startswith("user: Caf?")


def test_costs_must_not_be_negative(env):
    with pytest.raises(ValueError, match="non-negative"):
        TurnEnv(env.agent, env.users, llm_call_cost=-1)
    assert isinstance(env.users.turns[0], UserTurn)


def test_a_rule_policy_plays_the_env_exactly_as_it_runs_in_the_agent(env):
    turn = _seeking_turn(env)
    rules = MemoryPolicy(LLMAugmenterPolicy())
    played = run_episode(env, lambda obs: rules.act(obs, env), seed=0, options={"turn": turn})
    env.agent.policy = LLMAugmenterPolicy()
    direct = env.agent.respond(turn.q, turn.history)
    assert env.mem.response == direct.response and played.info["llm_calls"] == direct.llm_calls
    assert played.steps == len(direct.trace) and played.info["turn_id"] == turn.id
    costs = 0.01 * direct.llm_calls + 0.005 * direct.count(Action.CONSOLIDATE_KNOWLEDGE)
    assert played.reward == pytest.approx(played.info["quality"] - costs)
    # a random policy always finishes its episodes (the step budget), whatever it picks
    for s in range(10):
        random = RandomPolicy(seed=s)
        episode = run_episode(env, lambda obs, random=random: random.act(obs, env), seed=s)
        assert env.mem.response and 1 <= episode.steps <= env.agent.max_steps


def test_a_plain_function_utility_scores_the_reward(env):
    from augmenter.agent import Agent, Executor
    from augmenter.prompts import PromptEngine

    judged = []

    def utility(memory, candidate):  # a bare score: the agent's protocol allows it
        judged.append([s.id for s in memory.e])
        return 0.25

    ex = env.agent.executor
    agent = Agent(
        LLMAugmenterPolicy(),
        Executor(ex.llm, PromptEngine(response="customer_service"), utility, ex.consolidator),
        max_llm_calls=2,
    )
    plain = TurnEnv(agent, env.users)
    turn = _seeking_turn(env)
    plain.reset(seed=0, options={"turn": turn})
    plain.step(ACTIONS.index(Action.CALL_LLM))
    _, reward, terminated, _, info = plain.step(ACTIONS.index(Action.SEND))
    assert terminated and reward == info["quality"] == 0.25
    assert judged[-1] == [s.id for s in turn.gold]  # scored against the turn's gold knowledge


def test_a_dialogue_episode_walks_a_replayed_dialogue_turn_by_turn():
    env = gymnasium.make("augmenter/Dialogue-v0", overrides=FAKE, part="all", limit=300).unwrapped
    check_env(env)
    assert gymnasium.spec("augmenter/Dialogue-v0").max_episode_steps is None  # as long as the dialogue
    rng = np.random.default_rng(0)
    longest = max((env.users.dialogue(rng) for _ in range(50)), key=lambda c: len(c.turns))
    assert len(longest.turns) >= 2
    env.reset(seed=0)
    env.conversation = longest  # play this dialogue
    env.turn = longest.first()
    env.mem = env.agent.begin(env.turn.q, env.turn.history)
    seen, done, send = [env.turn.id], False, ACTIONS.index(Action.SEND)
    while not done:
        _, _, done, _, info = env.step(send)  # send: the Agent calls the LLM first, then sends
        if info.get("turn_over"):
            seen.append(env.turn.id)
            assert env.mem.llm_calls == 0 and not env.mem.o  # a fresh Working Memory for the next turn
    assert seen == [t.id for t in longest.turns]
    assert [len(t.history) for t in longest.turns] == sorted(len(t.history) for t in longest.turns)


def test_llm_user_simulator_continues_a_chat_seed_with_the_agent_in_the_history():
    from augmenter.envs import load_chat_seeds

    seeds = load_chat_seeds(DATA / "botchat" / "MuTual_test_starts.jsonl")
    assert len(seeds) == 547 and all(len(s) == 2 for s in seeds)
    overrides = [*FAKE, "llm_cache.enabled=false", "env.users=chat_seeds", "env.max_turns=3"]
    env = gymnasium.make("augmenter/Dialogue-v0", overrides=overrides).unwrapped
    fake = env.agent.executor.llm.llm.primary  # MeteredLLM -> ResilientLLM -> FakeLLM

    def user_line(messages):
        return f"User: user line {messages[-1]['content'].count(':')}\nAssistant: leaked"

    fake.rules = {"Write the user's next message": user_line}
    check_env(env)
    obs, info = env.reset(seed=3)
    opening = env.turn.history
    assert [u.speaker for u in opening] == ["U", "S"] and opening[0].text in {s[0] for s in seeds}
    assert env.turn.q.startswith("user line") and "leaked" not in env.turn.q  # the prompt's labels are cut
    turns, done = 1, False
    while not done:
        _, reward, done, _, info = env.step(ACTIONS.index(Action.SEND))
        if info.get("turn_over"):
            turns += 1
            assert env.turn.history[-1].speaker == "S"  # the agent's reply is in what the user answers
            assert env.turn.history[-1].text == "This is a scripted reply from the fake LLM."
    assert turns == 3 and info["quality"] == 0.0  # chit-chat has no gold knowledge: only costs count


def test_chat_seed_errors_are_clear(tmp_path):
    from augmenter.envs import load_chat_seeds
    from augmenter.errors import InputError

    with pytest.raises(InputError, match="not found"):
        load_chat_seeds(tmp_path / "none.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"index": 1}\n')
    with pytest.raises(InputError, match="bad.jsonl:1"):
        load_chat_seeds(bad)


def _readme_env_snippet() -> str:
    """The gymnasium snippet of the training guide (the README's tour shows the same one)."""
    guide = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    return textwrap.dedent(re.search(r"```python\n(.*?)```", guide, re.DOTALL).group(1))


def test_the_readme_env_snippet_runs_from_another_directory(tmp_path):
    code = _readme_env_snippet()
    assert 'gymnasium.make("augmenter/Turn-v0", overrides=["llm=fake"], llm_call_cost=0.01)' in code
    environ = {**os.environ, "AUGMENTER_DATA": str(DATA), "AUGMENTER_CACHE": str(tmp_path / "cache")}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-2000:]
    without = {k: v for k, v in environ.items() if k != "AUGMENTER_DATA"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=without, capture_output=True, text=True, timeout=600
    )
    assert out.returncode != 0 and "set AUGMENTER_DATA=/path/to/data" in out.stderr.splitlines()[-1]
