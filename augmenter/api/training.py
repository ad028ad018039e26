"""Training a T5 policy in augmenter/Turn-v0 (`augmenter train`), built from config: the environments, each seed's
run (behaviour cloning, then REINFORCE; resumable), then the baselines and the learning curve.

    from augmenter.api.training import Training

    training = Training(["llm=fake", "env.train_limit=20"])
    with training:                          # the teacher and the sub-environments, closed on leaving
        for seed in training.seeds:
            print(training.train(seed)["run_dir"])
    print(training.finish())                # fig3.png
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from augmenter.api.envs import CALL_SHAPING, build_env, make_vector_env, named_policy
from augmenter.config import compose
from augmenter.fingerprint import fingerprint

__all__ = ["Training"]


class Training:
    """A composed `train` config's two environments (one agent answers both: training and held-out turns), built
    at once. Entering it makes the teacher and, with train.num_envs > 1, the asynchronous sub-environments
    REINFORCE's rollouts run on; leaving closes them."""

    def __init__(self, overrides: Sequence[str] = ()):
        self.overrides = list(overrides)
        self.cfg = compose("train", self.overrides)
        t = self.cfg.train
        self.seeds: list[int] = list(t.seeds) if t.seeds else [t.seed]
        self.train_env = build_env(self.cfg, "train")
        self.heldout_env = build_env(self.cfg, "heldout", self.train_env.agent)
        self.teacher: Any = None
        self.train_envs: Any = None

    @property
    def turns(self) -> tuple[int, int]:
        """The number of training turns and of held-out turns."""
        return len(self.train_env.users), len(self.heldout_env.users)

    def __enter__(self) -> Training:
        self.teacher = named_policy(self.cfg.train.teacher, "train.teacher")
        num_envs = int(self.cfg.train.get("num_envs") or 1)
        if num_envs > 1:
            self.train_envs = make_vector_env(self.overrides, num_envs, "async", "train", self.cfg.agent.max_steps)
        return self

    def __exit__(self, *exc) -> None:
        if self.train_envs is not None:
            self.train_envs.close()
            self.train_envs = None

    def train(self, seed: int) -> dict:
        """One seed's run (resumed where it stopped): episodes, resumed_from and run_dir (its policy.pt)."""
        from augmenter.policies.training import Trainer

        if self.teacher is None:
            raise RuntimeError("Training.train runs inside `with training:`")
        return Trainer(self.cfg, self.train_env, self.heldout_env, self.teacher, seed, self.train_envs).run()

    def finish(self) -> Path:
        """The held-out scores of train.baselines (kept while the environment is the same), then the learning curve
        of every seed; the path of fig3.png."""
        from augmenter.eval.curve import write_curve
        from augmenter.policies.training import baselines

        name_dir = Path(self.cfg.train.out_dir) / self.cfg.train.name
        names = list(self.cfg.train.baselines)
        key = fingerprint(self.cfg, (*CALL_SHAPING, "env")) + str(names)  # the held-out scores of these baselines
        baselines(
            self.heldout_env, {name: named_policy(name, name) for name in names}, name_dir / "baselines.json", key
        )
        return write_curve(name_dir) / "fig3.png"
