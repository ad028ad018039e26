"""Policies as the environment sees them (`act(obs, env) -> action index`), and `run_episode`, the one loop that
plays an episode.

`RandomPolicy` draws uniformly from the actions (the paper's Fig. 3 baseline); `MemoryPolicy` wraps any
Working-Memory policy (the rule-based ones) so it plays in `augmenter/Turn-v0` exactly as it does in the Agent.
Nothing here imports gymnasium: an environment is anything with gymnasium's `reset` and `step`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from augmenter.agent import Policy
from augmenter.memory.observation import ACTIONS

if TYPE_CHECKING:
    from augmenter.envs import TurnEnv


class EnvPolicy(Protocol):
    def act(self, obs: dict[str, Any], env: TurnEnv) -> int: ...


class RandomPolicy:
    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def act(self, obs: dict[str, Any], env: TurnEnv) -> int:
        return int(self.rng.integers(len(ACTIONS)))


class MemoryPolicy:
    """A policy over the Working Memory (e.g. `LLMAugmenterPolicy`), reading the env's memory."""

    def __init__(self, policy: Policy):
        self.policy = policy

    def act(self, obs: dict[str, Any], env: TurnEnv) -> int:
        return ACTIONS.index(self.policy.next_action(env.unwrapped.mem))


@dataclass
class Episode:
    """A played episode: each step's reward, and the reset's info updated with the last step's (turn_id,
    knowledge_seeking, quality, llm_calls, outcome, ...)."""

    rewards: list[float]
    info: dict[str, Any]

    @property
    def reward(self) -> float:
        """The return (undiscounted)."""
        return sum(self.rewards)

    @property
    def steps(self) -> int:
        return len(self.rewards)


def run_episode(
    env, act: Callable[[dict[str, Any]], int], seed: int | None = None, options: dict | None = None
) -> Episode:
    """Reset `env` (with `seed` and `options`, e.g. `{"turn": a UserTurn}`) and step it with `act(observation)`
    until the episode terminates or is truncated."""
    obs, info = env.reset(seed=seed, options=options)
    rewards, last, done = [], {}, False
    while not done:
        obs, reward, terminated, truncated, last = env.step(act(obs))
        rewards.append(reward)
        done = terminated or truncated
    return Episode(rewards, {**info, **last})
