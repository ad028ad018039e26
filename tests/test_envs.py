"""The gymnasium environment (issue #4, first part): API conformance, invalid actions, reward and costs."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from augmenter.envs import ACTIONS, CHARSET, DSTC11Replay, TurnEnv, UserTurn, observation_text
from augmenter.memory import Action, Snippet, WorkingMemory

from conftest import DATA

FAKE = [f"data_root={DATA}", "llm=fake"]


@pytest.fixture(scope="module")
def env():
    return gymnasium.make("augmenter/Turn-v0", overrides=FAKE, part="all", limit=60, seeking_share=None, llm_call_cost=0.01,
                          consolidation_cost=0.005).unwrapped


def test_registered_env_passes_the_gymnasium_checker(env):
    check_env(env, skip_render_check=True)


def test_replay_has_both_kinds_of_turns(env):
    kinds = {t.knowledge_seeking for t in env.users.turns}
    assert kinds == {True, False}
    assert all(t.gold for t in env.users.turns if t.knowledge_seeking)
    assert not any(t.gold for t in env.users.turns if not t.knowledge_seeking)
    only_seeking = DSTC11Replay(DATA / "dstc11-track5", "dev", env.agent.executor.consolidator.kb, limit=60,
                                seeking_share=1.0)
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
    assert info["quality"] == pytest.approx(env.agent.executor.utility.score(
        WorkingMemory(q="x", e=_seeking_turn(env).gold), env.mem.response))
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


def test_the_step_budget_ends_an_endless_episode(env):
    env.reset(seed=3, options={"turn": _seeking_turn(env)})
    done, steps = False, 0
    while not done:
        _, _, done, _, _ = env.step(ACTIONS.index(Action.CONSOLIDATE_KNOWLEDGE))
        steps += 1
    assert steps == env.agent.max_steps and env.mem.response


def test_observation_text_stays_in_its_charset():
    mem = WorkingMemory(q="Café – “quoted”?", e=[Snippet(id="1", text="naïve résumé")])
    text = observation_text(mem, max_chars=40)
    assert len(text) <= 40 and set(text) <= set(CHARSET) and text.startswith("user: Caf?")


def test_costs_must_not_be_negative(env):
    with pytest.raises(ValueError, match="non-negative"):
        TurnEnv(env.agent, env.users, llm_call_cost=-1)
    assert isinstance(env.users.turns[0], UserTurn)


def test_a_rule_policy_plays_the_env_exactly_as_it_runs_in_the_agent(env):
    from policies import LLMAugmenterPolicy, MemoryPolicy, RandomPolicy, rollout

    turn = _seeking_turn(env)
    played = rollout(env, MemoryPolicy(LLMAugmenterPolicy()), seed=0, turn=turn)
    env.agent.policy = LLMAugmenterPolicy()
    direct = env.agent.respond(turn.q, turn.history)
    assert played.response == direct.response and played.llm_calls == direct.llm_calls
    assert played.steps == len(direct.trace)
    costs = 0.01 * direct.llm_calls + 0.005 * direct.count(Action.CONSOLIDATE_KNOWLEDGE)
    assert played.reward == pytest.approx(played.quality - costs)
    # a random policy always finishes its episodes (the step budget), whatever it picks
    episodes = [rollout(env, RandomPolicy(seed=s), seed=s) for s in range(10)]
    assert all(e.response and 1 <= e.steps <= env.agent.max_steps for e in episodes)


def test_a_dialogue_episode_walks_a_replayed_dialogue_turn_by_turn():
    env = gymnasium.make("augmenter/Dialogue-v0", overrides=FAKE, part="all", limit=300).unwrapped
    check_env(env, skip_render_check=True)
    rng = np.random.default_rng(0)
    longest = max((env.users.dialogue(rng) for _ in range(50)), key=lambda c: len(c.turns))
    assert len(longest.turns) >= 2
    env.reset(seed=0)
    env.conversation = longest  # play this dialogue
    env.turn = longest.first()
    env.mem = env.agent.begin(env.turn.q, env.turn.history)
    seen, done, send = [env.turn.turn_id], False, ACTIONS.index(Action.SEND)
    while not done:
        _, _, done, _, info = env.step(send)  # send: the Agent calls the LLM first, then sends
        if info.get("turn_over"):
            seen.append(env.turn.turn_id)
            assert env.mem.llm_calls == 0 and not env.mem.o  # a fresh Working Memory for the next turn
    assert seen == [t.turn_id for t in longest.turns]
    assert [len(t.history) for t in longest.turns] == sorted(len(t.history) for t in longest.turns)


def test_llm_user_simulator_continues_a_chat_seed_with_the_agent_in_the_history():
    from augmenter.envs import load_chat_seeds

    seeds = load_chat_seeds(DATA / "botchat" / "MuTual_test_starts.jsonl")
    assert len(seeds) == 547 and all(len(s) == 2 for s in seeds)
    overrides = [*FAKE, "llm_cache.enabled=false", "env.users=chat_seeds", "env.max_turns=3"]
    env = gymnasium.make("augmenter/Dialogue-v0", overrides=overrides).unwrapped
    fake = env.agent.executor.llm.llm.primary  # MeteredLLM -> ResilientLLM -> FakeLLM
    user_line = lambda messages: f"User: user line {messages[-1]['content'].count(':')}\nAssistant: leaked"
    fake.rules = {"Write the user's next message": user_line}
    check_env(env, skip_render_check=True)
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
