"""Policies as the environment sees them: `act(obs, env) -> action index`, and `rollout` to play one episode.

`RandomPolicy` draws uniformly from the action space (the paper's Fig. 3 baseline); `MemoryPolicy` wraps any
Working-Memory policy (the rule-based ones) so it plays in `augmenter/Turn-v0` exactly as it does in the Agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Protocol

import numpy as np

from augmenter.agent.loop import Policy
from augmenter.envs.turn_env import ACTIONS, TurnEnv
from augmenter.envs.user_sim import UserTurn


class EnvPolicy(Protocol):
    def act(self, obs: dict[str, Any], env: TurnEnv) -> int: ...


class RandomPolicy:
    def __init__(self, seed: Optional[int] = None):
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
    turn_id: str
    knowledge_seeking: bool
    reward: float
    quality: float
    llm_calls: int
    steps: int
    response: str


def rollout(env: TurnEnv, policy: EnvPolicy, seed: Optional[int] = None, turn: Optional[UserTurn] = None) -> Episode:
    """Play one episode (one user turn) to its end."""
    options = {"turn": turn} if turn is not None else None
    obs, info = env.reset(seed=seed, options=options)
    total, steps, done, step_info = 0.0, 0, False, {}
    while not done:
        obs, reward, done, truncated, step_info = env.step(policy.act(obs, env))
        total += reward
        steps += 1
        done = done or truncated
    mem = env.unwrapped.mem
    return Episode(info["turn_id"], info["knowledge_seeking"], total, step_info.get("quality", 0.0),
                   mem.llm_calls, steps, mem.response or "")
