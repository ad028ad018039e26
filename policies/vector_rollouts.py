"""Episodes played on a gymnasium vector environment (`augmenter train` with `train.num_envs` > 1).

The vector environment (`augmenter.api.envs.make_vector_env`: `gymnasium.make_vec("augmenter/Turn-v0", ...)` with
autoreset disabled) steps all its sub-environments at once; each sub-environment is reset with the seed of the
episode it plays next, so an episode's turn follows its seed as in `run_episode`. Nothing here imports gymnasium.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Played = tuple[Any, list[dict], list[int], list[float]]  # turn id, observations, actions, rewards


def play_episodes(envs, choose: Callable[[dict], int], seeds: list[int]) -> list[Played]:
    """One episode per seed on `envs`, in the seeds' order. `choose(observation)` picks each action, called in
    sub-environment order. When no seed is left, a sub-environment plays a discarded episode (a vector environment
    steps all of them) with action 0, drawing nothing from `choose`."""
    n = envs.num_envs
    queue = list(enumerate(seeds))[::-1]
    slots: list[int | None] = [None] * n  # the seed index each sub-environment plays, or None (discarded)
    played: list[list] = [[None, [], [], []] for _ in seeds]

    def assign(mask: np.ndarray) -> list[int | None]:
        chosen: list[int | None] = [None] * n
        for i in np.flatnonzero(mask):
            slots[i] = None
            if queue:
                slots[i], chosen[i] = queue.pop()
        return chosen

    mask = np.ones(n, dtype=bool)
    obs, info = envs.reset(seed=assign(mask))
    left = len(seeds)
    while left:
        for i in np.flatnonzero(mask):
            if slots[i] is not None:
                played[slots[i]][0] = info["turn_id"][i]
        actions = np.zeros(n, dtype=np.int64)
        for i, slot in enumerate(slots):
            if slot is not None:
                observation = {"text": obs["text"][i], "features": np.array(obs["features"][i], copy=True)}
                actions[i] = choose(observation)
                played[slot][1].append(observation)
                played[slot][2].append(int(actions[i]))
        obs, rewards, terminated, truncated, _ = envs.step(actions)
        mask = np.asarray(terminated) | np.asarray(truncated)
        for i, slot in enumerate(slots):
            if slot is not None:
                played[slot][3].append(float(rewards[i]))
                left -= int(mask[i])
        if left and mask.any():
            obs, info = envs.reset(seed=assign(mask), options={"reset_mask": mask})
    return [tuple(p) for p in played]
