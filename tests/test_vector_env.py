"""`augmenter/Turn-v0` through gymnasium's vector environments: `gymnasium.make_vec` in sync and
async mode steps its sub-environments as the plain environment steps, and training's rollouts run on one
(`train.num_envs`)."""

import gymnasium
import numpy as np
import pytest

import augmenter.envs  # noqa: F401  (registers the environments)
from augmenter.api.envs import make_vector_env
from augmenter.cli.main import main
from augmenter.memory import Action
from augmenter.memory.observation import ACTIONS
from augmenter.policies import run_episode
from augmenter.policies.vector_rollouts import play_episodes
from conftest import DATA

FAKE = [f"data_root={DATA}", "llm=fake", "llm_cache.enabled=false"]
SCRIPT = [ACTIONS.index(a) for a in (Action.CONSOLIDATE_KNOWLEDGE, Action.CALL_LLM, Action.SEND)]


def rule(obs: dict) -> int:
    """Consolidate, call the LLM, send: from the observation's features alone."""
    has_evidence, has_candidate = obs["features"][0], obs["features"][1]
    return SCRIPT[0] if not has_evidence else SCRIPT[1] if not has_candidate else SCRIPT[2]


@pytest.fixture(scope="module")
def single():
    return gymnasium.make("augmenter/Turn-v0", overrides=FAKE, limit=20)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_steps_each_sub_env_as_the_plain_env(mode, single):
    envs = gymnasium.make_vec("augmenter/Turn-v0", num_envs=2, vectorization_mode=mode, overrides=FAKE, limit=20)
    try:
        assert envs.single_observation_space == single.observation_space
        assert envs.single_action_space == single.action_space
        obs, info = envs.reset(seed=0)  # sub-env i is seeded 0 + i
        assert obs["features"].shape == (2, 5) and len(obs["text"]) == 2
        rewards = []
        for action in SCRIPT:
            obs, reward, terminated, truncated, info = envs.step(np.array([action, action]))
            rewards.append(reward)
        assert terminated.all() and not truncated.any()
        for i in range(2):
            single.reset(seed=i)
            expected = [single.step(action)[1] for action in SCRIPT]
            assert [r[i] for r in rewards] == pytest.approx(expected)
        # next-step autoreset: the step after the end starts a new turn, its action ignored
        obs, reward, terminated, truncated, info = envs.step(np.array(SCRIPT[2:] * 2))
        assert (reward == 0).all() and not terminated.any() and (obs["features"][:, :2] == 0).all()
    finally:
        envs.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_rollouts_on_a_vector_env_play_each_seed_as_run_episode(mode, single):
    envs = make_vector_env(FAKE, 2, mode, limit=20)
    try:
        seeds = [11, 22, 33, 44, 55]  # more episodes than sub-envs: finished ones are reset with the next seed
        played = play_episodes(envs, rule, seeds)
        again = play_episodes(envs, rule, seeds[:3])
    finally:
        envs.close()
    for seed, (turn, observations, actions, rewards) in zip(seeds, played):
        actions_one = []
        episode = run_episode(single, lambda obs, acts=actions_one: acts.append(rule(obs)) or acts[-1], seed=seed)
        assert turn == episode.info["turn_id"] and actions == actions_one
        assert rewards == pytest.approx(episode.rewards) and len(observations) == len(actions)
    assert [p[0] for p in again] == [p[0] for p in played[:3]]


TRAIN = [
    *FAKE,
    "env.train_limit=12",
    "env.heldout_limit=4",
    "train.bc_episodes=6",
    "train.bc_epochs=1",
    "train.episodes=20",
    "train.batch_episodes=5",
    "train.eval_every=10",
    "train.checkpoint_every=10",
    "model.d_model=32",
    "model.d_ff=64",
    "model.num_layers=1",
    "model.num_heads=2",
    "model.max_tokens=64",
    "model.vocab_size=300",
    "train.progress=false",
    "train.baselines=[]",
]


def test_training_rollouts_on_async_sub_environments(tmp_path):
    assert main(["train", *TRAIN, f"train.out_dir={tmp_path}", "train.num_envs=2"]) == 0
    run = tmp_path / "t5" / "seed0"
    assert (run / "policy.pt").exists() and "num_envs: 2" in (run / "config.yaml").read_text()
    rows = (run / "metrics.csv").read_text().splitlines()
    assert [r.split(",")[0] for r in rows[1:]] == ["0", "10", "20"]


def test_one_env_keeps_the_run_config_of_runs_before_the_option(tmp_path):
    from augmenter.api.envs import build_env
    from augmenter.config import compose
    from augmenter.errors import ConfigError
    from augmenter.policies import LLMAugmenterPolicy
    from augmenter.policies.training import Trainer

    cfg = compose("train", [*TRAIN, f"train.out_dir={tmp_path}"])
    env = build_env(cfg, "train")
    assert "num_envs" not in Trainer(cfg, env, env, LLMAugmenterPolicy())._config_text()
    with pytest.raises(ConfigError, match="train.num_envs=2 needs a vector environment"):
        Trainer(compose("train", [*TRAIN, "train.num_envs=2"]), env, env, LLMAugmenterPolicy())
