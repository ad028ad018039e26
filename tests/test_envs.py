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
    return gymnasium.make("augmenter/Turn-v0", overrides=FAKE, limit=60, llm_call_cost=0.01,
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
