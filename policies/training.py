"""`augmenter train`: a T5 policy learns in `augmenter/Turn-v0` (paper sections 2.2 and 3.3).

Stage 1 clones a rule-based teacher's decisions (cross-entropy on its (observation, action) pairs). Stage 2 is
REINFORCE: episodes sampled from the policy, return-to-go minus a moving-average baseline (per user turn by
default: which turn is drawn moves the return far more than what the policy does, so a turn's own average
removes most of the variance), an entropy bonus, gradient-norm clipping. A plain torch loop, not `trl`: trl's
trainers fine-tune causal or seq2seq language models on text, and this policy is an encoder with a five-way action
head whose data come from an environment.

Every `checkpoint_every` episodes the whole training state (network, optimizer, baseline, episode counter, the
action sampler's RNG) is written atomically to `checkpoint.pt`; a killed run restarts from it and, since the
environment's seeds follow the episode counter, continues exactly as the uninterrupted run would have.

The trainer receives its environments and teacher built (`augmenter train` builds them from config with
`augmenter.api.envs`).
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from omegaconf import OmegaConf
from tqdm import tqdm

from augmenter.agent import Policy
from augmenter.errors import ConfigError, InputError
from augmenter.fingerprint import system_config
from augmenter.policies.env_policies import EnvPolicy, MemoryPolicy, RandomPolicy, run_episode
from augmenter.policies.t5 import ActionNetwork, T5Policy, Tokenizer
from augmenter.policies.vector_rollouts import play_episodes
from augmenter.storage import atomic_open, write_atomic

if TYPE_CHECKING:
    from augmenter.envs import TurnEnv

CSV_FIELDS = [
    "episode",
    "stage",
    "heldout_reward",
    "heldout_kf1",
    "heldout_llm_calls",
    "heldout_consolidate_seeking",
    "heldout_consolidate_other",
    "train_reward",
    "entropy",
    "baseline",
    "seconds",
]
# Settings that may change between a run and its resumption.
IGNORED_ON_RESUME = ("episodes", "progress", "restart", "seeds", "threads", "baselines")


@dataclass
class HeldoutScore:
    reward: float  # mean episode reward over every held-out turn
    kf1: float  # mean quality (the utility against gold knowledge, KF1 by default) over knowledge-seeking turns
    llm_calls: float  # per turn
    consolidate_seeking: float  # share of knowledge-seeking turns where knowledge was consolidated
    consolidate_other: float  # ... of turns that need none
    turns: int


def score_heldout(env: TurnEnv, policy: EnvPolicy, seed: int = 0) -> HeldoutScore:
    """Play every held-out turn once (in order) and average."""
    rewards, kf1, calls, consolidated = [], [], [], {True: [], False: []}
    for i, turn in enumerate(env.users.turns):
        episode = run_episode(env, lambda obs: policy.act(obs, env), seed=seed + i, options={"turn": turn})
        rewards.append(episode.reward)
        calls.append(env.mem.llm_calls)
        consolidated[turn.knowledge_seeking].append(env.mem.consolidated)
        if turn.knowledge_seeking:
            kf1.append(episode.info.get("quality", 0.0))

    def mean(xs):
        return float(np.mean(xs)) if xs else 0.0

    return HeldoutScore(
        mean(rewards), mean(kf1), mean(calls), mean(consolidated[True]), mean(consolidated[False]), len(env.users.turns)
    )


def tokenizer_corpus(train_env: TurnEnv, observations: list[str]) -> list[str]:
    """The project's own text: the training turns' utterances, the knowledge base's snippets, observations."""
    texts = list(observations)
    for turn in train_env.users.turns:
        texts += [turn.q] + [u.text for u in turn.history]
    kb = train_env.agent.executor.consolidator.kb if train_env.agent.executor.consolidator else None
    if kb is not None:
        texts += [s.text for s in kb.snippets[:20000]]
    return texts


Trajectory = tuple[list[dict], list[int], list[float]]  # observations, actions, rewards of one episode


class MovingBaseline:
    """Moving average of the episode return, overall and (with `per_turn`) per user turn: a turn's own average
    once it has been played, else the overall one. Early visits average plainly, later ones move by
    1 - `momentum`."""

    def __init__(self, momentum: float = 0.9, per_turn: bool = True):
        self.momentum, self.per_turn = momentum, per_turn
        self.overall: float | None = None
        self.turns: dict[str, tuple[float, int]] = {}  # turn id -> (average, visits)

    def value(self, turn_id: str) -> float:
        if self.per_turn and turn_id in self.turns:
            return self.turns[turn_id][0]
        return self.overall if self.overall is not None else 0.0

    def update(self, turn_id: str, ret: float) -> None:
        self.overall = ret if self.overall is None else self.momentum * self.overall + (1 - self.momentum) * ret
        mean, visits = self.turns.get(turn_id, (0.0, 0))
        step = max(1.0 - self.momentum, 1.0 / (visits + 1))
        self.turns[turn_id] = (mean + step * (ret - mean), visits + 1)

    def state(self) -> dict:
        return {"overall": self.overall, "turns": self.turns}

    def load(self, state: dict) -> None:
        self.overall, self.turns = state["overall"], {k: tuple(v) for k, v in state["turns"].items()}


def reinforce_update(
    policy: T5Policy,
    optimizer,
    batch: list[Trajectory],
    baseline: float | Sequence[float],
    gamma: float = 1.0,
    entropy_coef: float = 0.01,
    grad_clip: float = 1.0,
) -> tuple[float, float]:
    """One REINFORCE step on a batch of episodes: minimise -(G_t - b) log pi(a_t|s_t) - entropy_coef * H(pi(.|s_t)),
    G_t the return-to-go, b the baseline (one for the batch, or one per episode); gradient norm clipped.
    Returns (mean episode return, mean entropy)."""
    observations, actions, advantages = [], [], []
    baselines = [baseline] * len(batch) if isinstance(baseline, (int, float)) else list(baseline)
    for (obs, acts, rewards), base in zip(batch, baselines):
        to_go, returns = 0.0, []
        for r in reversed(rewards):
            to_go = r + gamma * to_go
            returns.append(to_go)
        observations += obs
        actions += acts
        advantages += [g - base for g in reversed(returns)]
    log_probs = torch.log_softmax(policy.logits(observations), -1)
    chosen = log_probs.gather(1, torch.tensor(actions).unsqueeze(1)).squeeze(1)
    entropy = -(log_probs.exp() * log_probs).sum(-1)
    loss = -(torch.tensor(advantages, dtype=torch.float32) * chosen).sum() / len(batch) - entropy_coef * entropy.mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.net.parameters(), grad_clip)
    optimizer.step()
    return float(np.mean([sum(r) for _, _, r in batch])), float(entropy.mean().detach())


def _atomic_save(obj: Any, path: Path) -> None:
    with atomic_open(path, "wb") as sink:
        torch.save(obj, sink)


class Trainer:
    """One seed's run in `<out_dir>/<name>/seed<seed>/`: config.yaml, metrics.csv, checkpoint.pt, policy.pt.
    `cfg` is the composed `train` config (its `train` and `model` settings; the whole of it is saved, so that a
    resumed run is known to be the same); `teacher` is the Working-Memory policy stage 1 clones."""

    def __init__(
        self, cfg, train_env: TurnEnv, heldout_env: TurnEnv, teacher: Policy, seed: int | None = None, train_envs=None
    ):
        self.cfg, self.t = cfg, cfg.train
        self.seed = int(self.t.seed if seed is None else seed)
        self._validate()
        self.train_envs = train_envs  # `train.num_envs` > 1: REINFORCE's episodes on a vector env's sub-envs
        num_envs = int(self.t.get("num_envs") or 1)
        if num_envs != (train_envs.num_envs if train_envs is not None else 1):
            raise ConfigError(
                f"train.num_envs={num_envs} needs a vector environment of as many sub-environments "
                "(augmenter.api.envs.make_vector_env)"
            )
        torch.set_num_threads(max(1, int(self.t.threads)))
        self.train_env, self.heldout_env, self.teacher = train_env, heldout_env, MemoryPolicy(teacher)
        self.run_dir = Path(self.t.out_dir) / self.t.name / f"seed{self.seed}"

    def _validate(self) -> None:
        t = self.t
        for key in ("eval_every", "checkpoint_every"):
            if t[key] < t.batch_episodes or t[key] % t.batch_episodes:
                raise ConfigError(
                    f"train.{key} ({t[key]}) must be a multiple of train.batch_episodes ({t.batch_episodes})"
                )
        for key in ("episodes", "bc_episodes", "bc_epochs"):
            if t[key] < 0:
                raise ConfigError(f"train.{key} must be >= 0, got {t[key]}")
        if t.baseline not in ("turn", "global"):
            raise ConfigError(f"train.baseline must be turn or global, got {t.baseline!r}")
        if not 0.0 <= t.baseline_momentum < 1.0:
            raise ConfigError(f"train.baseline_momentum must be in [0, 1), got {t.baseline_momentum}")

    # -- run directory -------------------------------------------------------------------------------
    def _config_text(self) -> str:
        """The run's system (`augmenter.fingerprint.system_config`) and training settings, as YAML."""
        data = system_config(self.cfg, ignore={"train": IGNORED_ON_RESUME})
        data["train"]["seed"] = self.seed
        if data["train"].get("num_envs", 1) == 1:  # added later: runs without it resume
            data["train"].pop("num_envs", None)
        return OmegaConf.to_yaml(OmegaConf.create(data))

    def _legacy_config_text(self) -> str:
        """`_config_text` as runs before the shared fingerprint wrote it (the whole config): such runs resume."""
        data = OmegaConf.to_container(self.cfg, resolve=True)
        for key in IGNORED_ON_RESUME:
            data["train"].pop(key, None)
        data["train"]["seed"] = self.seed
        if data["train"].get("num_envs", 1) == 1:
            data["train"].pop("num_envs", None)
        return OmegaConf.to_yaml(OmegaConf.create(data))

    def _prepare_dir(self) -> None:
        if self.t.restart and self.run_dir.exists():
            for name in ("checkpoint.pt", "policy.pt", "metrics.csv", "config.yaml"):
                (self.run_dir / name).unlink(missing_ok=True)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        saved = self.run_dir / "config.yaml"
        text = self._config_text()
        if saved.exists() and saved.read_text(encoding="utf-8") not in (text, self._legacy_config_text()):
            raise InputError(
                f"{self.run_dir} holds a run of another configuration: resume with the same settings, "
                "or start over with train.restart=true (or another train.name)"
            )
        saved.write_text(text, encoding="utf-8")

    def _log(self, row: dict) -> None:
        path = self.run_dir / "metrics.csv"
        new = not path.exists()
        with path.open("a", newline="", encoding="utf-8") as sink:
            writer = csv.DictWriter(sink, fieldnames=CSV_FIELDS)
            if new:
                writer.writeheader()
            writer.writerow({k: (round(v, 5) if isinstance(v, float) else v) for k, v in row.items()})

    def _truncate_log(self, episode: int) -> None:
        """Drop rows written after the checkpoint a resumed run starts from (they will be written again)."""
        path = self.run_dir / "metrics.csv"
        if not path.exists():
            return
        with path.open(newline="", encoding="utf-8") as source:
            rows = [r for r in csv.DictReader(source) if int(r["episode"]) <= episode]
        path.unlink()
        for row in rows:
            self._log(row)

    # -- stage 1: behaviour cloning --------------------------------------------------------------------
    def _teacher_data(self) -> tuple[list[dict], list[int]]:
        observations, actions = [], []

        def act(obs: dict) -> int:
            observations.append(obs)
            actions.append(self.teacher.act(obs, self.train_env))
            return actions[-1]

        for i in range(self.t.bc_episodes):
            run_episode(self.train_env, act, seed=self._episode_seed(-1 - i))
        return observations, actions

    def _clone(self, policy: T5Policy, observations: list[dict], actions: list[int]) -> float:
        """Cross-entropy on the teacher's pairs; returns the final training accuracy."""
        if not observations:
            return float("nan")
        optimizer = torch.optim.Adam(policy.net.parameters(), lr=self.t.bc_lr)
        order_rng = np.random.default_rng(self.seed)
        targets = torch.tensor(actions)
        accuracy = 0.0
        for _ in range(self.t.bc_epochs):
            order, correct = order_rng.permutation(len(observations)), 0
            for start in range(0, len(order), 32):
                idx = order[start : start + 32]
                logits = policy.logits([observations[i] for i in idx])
                loss = torch.nn.functional.cross_entropy(
                    logits, targets[idx], label_smoothing=self.t.bc_label_smoothing
                )
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(policy.net.parameters(), self.t.grad_clip)
                optimizer.step()
                correct += int((logits.argmax(-1) == targets[idx]).sum())
            accuracy = correct / len(order)
        return accuracy

    # -- stage 2: REINFORCE ----------------------------------------------------------------------------
    def _episode_seed(self, episode: int) -> int:
        return int(np.random.SeedSequence([self.seed, episode + 1_000_000]).generate_state(1)[0])

    def _sample_episode(self, policy: T5Policy, episode: int) -> tuple[str, Trajectory]:
        observations, actions = [], []

        def act(obs: dict) -> int:
            observations.append(obs)
            actions.append(policy.choose(obs))
            return actions[-1]

        played = run_episode(self.train_env, act, seed=self._episode_seed(episode))
        return played.info["turn_id"], (observations, actions, played.rewards)

    def _sample_batch(self, policy: T5Policy, episode: int) -> list[tuple[str, Trajectory]]:
        """A batch of episodes, each seeded by its number: one by one in the environment, or (`train.num_envs` > 1)
        on the vector environment's sub-environments, the policy sampling in their order."""
        count = self.t.batch_episodes
        if self.train_envs is None:
            return [self._sample_episode(policy, episode + i) for i in range(count)]
        seeds = [self._episode_seed(episode + i) for i in range(count)]
        return [
            (turn, (obs, acts, rewards))
            for turn, obs, acts, rewards in play_episodes(self.train_envs, policy.choose, seeds)
        ]

    # -- the run -------------------------------------------------------------------------------------
    def _new_policy(self) -> tuple[T5Policy, dict]:
        torch.manual_seed(self.seed)
        start = time.perf_counter()
        observations, actions = self._teacher_data()
        texts = [o["text"] for o in observations]
        teacher_seconds = time.perf_counter() - start
        if not texts:  # no cloning: let the tokenizer see a few observations of random play
            random_policy = RandomPolicy(self.seed)

            def act(obs: dict) -> int:
                texts.append(obs["text"])
                return random_policy.act(obs, self.train_env)

            for i in range(20):
                run_episode(self.train_env, act, seed=self._episode_seed(-10_000 - i))
        m = self.cfg.model
        tokenizer = Tokenizer.train(tokenizer_corpus(self.train_env, texts), vocab_size=m.vocab_size)
        tokenizer_seconds = time.perf_counter() - start - teacher_seconds
        net = ActionNetwork(len(tokenizer), m.d_model, m.d_ff, m.num_layers, m.num_heads)
        policy = T5Policy(
            net, tokenizer, m.max_tokens, self.train_env.agent.max_llm_calls, greedy=False, seed=self.seed
        )
        accuracy = self._clone(policy, observations, actions)
        return policy, {
            "bc_pairs": len(actions),
            "bc_accuracy": accuracy,
            "teacher_seconds": teacher_seconds,
            "tokenizer_seconds": tokenizer_seconds,
            "bc_seconds": time.perf_counter() - start,
        }

    def _save(self, policy: T5Policy, optimizer, episode: int, baseline: MovingBaseline, extra: dict) -> None:
        _atomic_save(
            {
                "policy": policy.state(),
                "optimizer": optimizer.state_dict(),
                "episode": episode,
                "baseline": baseline.state(),
                "sampler": policy.generator.get_state(),
                "extra": extra,
            },
            self.run_dir / "checkpoint.pt",
        )

    def _evaluate(
        self,
        policy: T5Policy,
        episode: int,
        stage: str,
        train_reward: float,
        entropy: float,
        baseline: MovingBaseline,
        started: float,
    ) -> HeldoutScore:
        policy.greedy = True
        score = score_heldout(self.heldout_env, policy)
        policy.greedy = False
        self._log(
            {
                "episode": episode,
                "stage": stage,
                "heldout_reward": score.reward,
                "heldout_kf1": score.kf1,
                "heldout_llm_calls": score.llm_calls,
                "heldout_consolidate_seeking": score.consolidate_seeking,
                "heldout_consolidate_other": score.consolidate_other,
                "train_reward": train_reward,
                "entropy": entropy,
                "baseline": baseline.overall if baseline.overall is not None else float("nan"),
                "seconds": round(time.perf_counter() - started, 2),
            }
        )
        return score

    def run(self) -> dict:
        self._prepare_dir()
        checkpoint_path = self.run_dir / "checkpoint.pt"
        started = time.perf_counter()
        baseline = MovingBaseline(self.t.baseline_momentum, per_turn=self.t.baseline == "turn")
        if checkpoint_path.exists():
            state = torch.load(checkpoint_path, map_location="cpu", weights_only=False)
            policy = T5Policy.from_state(state["policy"], greedy=False)
            policy.net.train()
            optimizer = torch.optim.Adam(policy.net.parameters(), lr=self.t.lr)
            optimizer.load_state_dict(state["optimizer"])
            policy.generator.set_state(state["sampler"])
            episode, extra = state["episode"], state["extra"]
            baseline.load(state["baseline"])
            self._truncate_log(episode)
            resumed = episode
        else:
            self._truncate_log(-1)
            policy, extra = self._new_policy()
            policy.net.train()
            optimizer = torch.optim.Adam(policy.net.parameters(), lr=self.t.lr)
            episode, resumed = 0, None
            self._evaluate(
                policy, 0, "cloned" if self.t.bc_episodes else "init", float("nan"), float("nan"), baseline, started
            )
            self._save(policy, optimizer, 0, baseline, extra)
        bar = tqdm(
            total=self.t.episodes,
            initial=min(episode, self.t.episodes),
            desc=f"train seed {self.seed}",
            unit="ep",
            disable=not self.t.progress,
        )
        window: list[float] = []
        entropy = float("nan")
        while episode < self.t.episodes:
            sampled = self._sample_batch(policy, episode)
            batch = [trajectory for _, trajectory in sampled]
            mean_return, entropy = reinforce_update(
                policy,
                optimizer,
                batch,
                [baseline.value(turn) for turn, _ in sampled],
                self.t.gamma,
                self.t.entropy_coef,
                self.t.grad_clip,
            )
            for turn, (_, _, rewards) in sampled:
                baseline.update(turn, sum(rewards))
            window.append(mean_return)
            episode += len(batch)
            bar.update(len(batch))
            bar.set_postfix(reward=f"{np.mean(window[-20:]):.3f}", entropy=f"{entropy:.2f}")
            if episode % self.t.eval_every == 0 or episode >= self.t.episodes:
                self._evaluate(policy, episode, "reinforce", float(np.mean(window)), entropy, baseline, started)
                window = []
            if episode % self.t.checkpoint_every == 0 or episode >= self.t.episodes:
                self._save(policy, optimizer, episode, baseline, extra)
        bar.close()
        _atomic_save({"policy": policy.state()}, self.run_dir / "policy.pt")
        return {"run_dir": str(self.run_dir), "episodes": episode, "resumed_from": resumed, **extra}


def baselines(
    heldout_env: TurnEnv, policies: dict[str, Policy], path: Path, key: str, seeds: int = 3
) -> dict[str, dict]:
    """Held-out scores of the reference policies (the horizontal lines of Fig. 3): random (mean of `seeds`
    seeds) and the named Working-Memory `policies`. Kept in `path` (baselines.json) with `key`, which names the
    environment they were scored in; scored again when it changes."""
    if path.exists():
        saved = json.loads(path.read_text(encoding="utf-8"))
        if saved.get("key") == key:
            return saved["scores"]
    out = {}
    randoms = [score_heldout(heldout_env, RandomPolicy(s), seed=0) for s in range(seeds)]
    out["random"] = {k: float(np.mean([asdict(r)[k] for r in randoms])) for k in asdict(randoms[0])}
    for name, policy in policies.items():
        out[name] = asdict(score_heldout(heldout_env, MemoryPolicy(policy)))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps({"scores": out, "key": key}, indent=1))
    return out
