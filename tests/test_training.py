"""Policy training: the offline candidate cache, REINFORCE, checkpoints and resume after a kill, and a
trained policy in `augmenter chat` / `augmenter eval`."""

import csv
import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

from augmenter.api.envs import build_env, precompute
from augmenter.cli.main import main
from augmenter.config import compose
from augmenter.memory import Action
from augmenter.memory.observation import ACTIONS, N_FEATURES
from augmenter.policies import RandomPolicy, run_episode
from augmenter.policies.t5 import ActionNetwork, T5Policy, Tokenizer
from augmenter.policies.training import reinforce_update
from conftest import DATA

FAKE = [f"data_root={DATA}", "llm=fake"]


def _tiny_policy(seed=0):
    torch.manual_seed(seed)
    tokenizer = Tokenizer.train([f"user: question number {i} about the hotel" for i in range(50)], vocab_size=60)
    net = ActionNetwork(len(tokenizer), d_model=32, d_ff=64, num_layers=1, num_heads=2)
    return T5Policy(net, tokenizer, max_tokens=32, greedy=False, seed=seed)


def _obs(i):
    return {"text": f"user: question number {i} about the hotel", "features": np.zeros(N_FEATURES, dtype=np.float32)}


def _train_toward(rewarded: Action, updates=30):
    """REINFORCE on a one-step toy problem: reward 1 for `rewarded`, 0 otherwise. Returns P(rewarded) before/after."""
    policy = _tiny_policy()
    optimizer = torch.optim.Adam(policy.net.parameters(), lr=1e-2)
    target = ACTIONS.index(rewarded)

    def prob():
        return float(torch.softmax(policy.logits([_obs(0)]), -1)[0, target].detach())

    before, baseline = prob(), 0.0
    for _ in range(updates):
        batch = []
        for j in range(8):
            action = policy.choose(_obs(j))
            batch.append(([_obs(j)], [action], [1.0 if action == target else 0.0]))
        mean_return, _ = reinforce_update(policy, optimizer, batch, baseline, entropy_coef=0.0)
        baseline = 0.9 * baseline + 0.1 * mean_return
    return before, prob()


def test_reinforce_makes_the_rewarded_action_more_likely():
    for rewarded in (Action.SEND, Action.CONSOLIDATE_KNOWLEDGE):
        before, after = _train_toward(rewarded)
        assert before < 0.4 and after > 0.8, (rewarded, before, after)


def test_the_entropy_bonus_alone_keeps_the_policy_spread():
    policy = _tiny_policy()
    optimizer = torch.optim.Adam(policy.net.parameters(), lr=1e-2)
    entropies = [
        reinforce_update(policy, optimizer, [([_obs(0)], [0], [0.0])], 0.0, entropy_coef=1.0)[1] for _ in range(20)
    ]
    assert entropies[-1] >= entropies[0] - 1e-4 and entropies[-1] > 0.95 * np.log(len(ACTIONS))


def test_precompute_leaves_nothing_for_training_to_ask_the_model(tmp_path):
    overrides = [*FAKE, f"llm_cache.dir={tmp_path}", "env.train_limit=4", "env.heldout_limit=2", "train.progress=false"]
    summary = precompute(compose("train", overrides))
    assert summary["parts"]["train"]["walked_now"] == 4 and summary["parts"]["train"]["new_llm_calls"] > 4
    again = precompute(compose("train", overrides))  # resumes from its log: nothing left to walk
    assert again["parts"]["train"]["walked_now"] == 0 and again["parts"]["heldout"]["walked_now"] == 0
    cfg = compose("train", overrides)
    train_env = build_env(cfg, "train")
    cache = train_env.agent.executor.llm.llm.primary  # MeteredLLM -> ResilientLLM -> CachedLLM
    for env in (train_env, build_env(cfg, "heldout", train_env.agent)):
        policy = RandomPolicy(seed=1)
        for episode in range(40):
            run_episode(env, lambda obs, policy=policy, env=env: policy.act(obs, env), seed=episode)
    assert cache.hits > 100 and cache.misses == 0


TRAIN = [
    *FAKE,
    "llm_cache.enabled=false",
    "env.train_limit=12",
    "env.heldout_limit=6",
    "train.bc_episodes=12",
    "train.bc_epochs=2",
    "train.episodes=60",
    "train.batch_episodes=5",
    "train.eval_every=20",
    "train.checkpoint_every=20",
    "model.d_model=32",
    "model.d_ff=64",
    "model.num_layers=1",
    "model.num_heads=2",
    "model.max_tokens=64",
    "model.vocab_size=300",
    "train.progress=false",
]


def _rows(run_dir):
    with (run_dir / "metrics.csv").open() as source:
        return [{k: v for k, v in r.items() if k != "seconds"} for r in csv.DictReader(source)]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """An uninterrupted run of 60 episodes."""
    out = tmp_path_factory.mktemp("train")
    assert main(["train", *TRAIN, f"train.out_dir={out}"]) == 0
    return out / "t5"


def test_train_writes_metrics_checkpoints_policy_and_curve(trained):
    run_dir = trained / "seed0"
    rows = _rows(run_dir)
    assert [int(r["episode"]) for r in rows] == [0, 20, 40, 60] and rows[0]["stage"] == "cloned"
    assert torch.load(run_dir / "checkpoint.pt", weights_only=False)["episode"] == 60
    assert (trained / "fig3.png").stat().st_size > 10_000
    baselines = json.loads((trained / "baselines.json").read_text())["scores"]
    assert set(baselines) == {"random", "no_knowledge", "always_use", "rules", "llm_augmenter"}
    assert baselines["no_knowledge"]["consolidate_seeking"] == 0
    assert baselines["llm_augmenter"]["consolidate_seeking"] == 1
    assert "| llm_augmenter |" in (trained / "curve.md").read_text()


def test_the_cost_tradeoff_plot(trained, tmp_path):
    assert main(["curve", "--tradeoff", str(trained), "--out", str(tmp_path)]) == 0
    assert (tmp_path / "tradeoff.png").stat().st_size > 10_000
    table = (tmp_path / "tradeoff.md").read_text()
    assert "| t5 | 0.02 / 0.01 | 1 |" in table and "| llm_augmenter (reference) |" in table


def test_a_killed_run_resumes_from_its_last_checkpoint_as_if_never_stopped(trained, tmp_path):
    command = [sys.executable, "-m", "augmenter.cli.main", "train", *TRAIN, f"train.out_dir={tmp_path}"]
    run_dir = tmp_path / "t5" / "seed0"
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline and process.poll() is None:
        if (run_dir / "checkpoint.pt").exists() and len(_rows(run_dir)) >= 2:  # past the checkpoint at episode 20
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.05)
    process.wait()
    assert process.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    assert not (run_dir / "policy.pt").exists()
    assert main(["train", *TRAIN, f"train.out_dir={tmp_path}"]) == 0
    assert _rows(run_dir) == _rows(trained / "seed0")  # no row lost, none twice, the same numbers
    resumed = torch.load(run_dir / "policy.pt", weights_only=False)["policy"]["net"]
    uninterrupted = torch.load(trained / "seed0" / "policy.pt", weights_only=False)["policy"]["net"]
    assert all(torch.equal(resumed[k], uninterrupted[k]) for k in uninterrupted)


def test_a_changed_config_refuses_to_resume(trained, capsys):
    out = trained.parent
    assert main(["train", *TRAIN, f"train.out_dir={out}", "train.lr=0.1"]) == 2
    assert "train.restart=true" in capsys.readouterr().err


def test_the_trained_policy_plugs_into_chat_and_eval(trained, tmp_path):
    policy = trained / "seed0" / "policy.pt"
    script = tmp_path / "script.txt"
    script.write_text("Does the Avalon have free wifi?\nThanks!\n")
    transcript = tmp_path / "chat.jsonl"
    common = [*FAKE, "task=dstc11", "policy=trained", f"policy.checkpoint={policy}"]
    assert main(["chat", "--script", str(script), "--output", str(transcript), *common]) == 0
    turns = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert len(turns) == 2 and all(t["memory"]["response"] for t in turns)
    assert (
        main(
            [
                "eval",
                *common,
                "eval.limit=3",
                f"eval.out_dir={tmp_path}",
                "eval.progress=false",
                "name=trained",
                "llm_cache.enabled=false",
            ]
        )
        == 0
    )
    records = [json.loads(line) for line in next(tmp_path.glob("*/trained/records.jsonl")).read_text().splitlines()]
    assert len(records) == 3
    chosen = {r["action"] for rec in records for r in rec["memory"]["trace"]}
    assert chosen <= {a.value for a in ACTIONS} and "send" in chosen


def test_a_missing_or_foreign_checkpoint_is_a_clear_error(tmp_path, capsys):
    argv = ["chat", "--script", "/dev/null", *FAKE, "policy=trained", f"policy.checkpoint={tmp_path}/nope.pt"]
    assert main(argv) == 2
    assert "policy checkpoint not found" in capsys.readouterr().err
    bad = tmp_path / "bad.pt"
    bad.write_text("not a checkpoint")
    assert main(["chat", "--script", "/dev/null", *FAKE, "policy=trained", f"policy.checkpoint={bad}"]) == 2
    assert "not a policy checkpoint" in capsys.readouterr().err


def test_the_per_turn_baseline_tracks_each_turn():
    from augmenter.policies.training import MovingBaseline

    b = MovingBaseline(momentum=0.5, per_turn=True)
    assert b.value("a") == 0.0
    b.update("a", 1.0)
    b.update("b", 0.0)
    assert b.value("a") == 1.0 and b.value("b") == 0.0 and b.value("c") == 0.5  # unseen: the overall average
    b.update("a", 0.0)
    assert b.value("a") == 0.5  # the plain mean of its first visits
    overall = MovingBaseline(momentum=0.5, per_turn=False)
    overall.update("a", 1.0)
    overall.update("b", 0.0)
    assert overall.value("a") == overall.value("b") == 0.5
    restored = MovingBaseline()
    restored.load(b.state())
    assert restored.value("a") == b.value("a")
