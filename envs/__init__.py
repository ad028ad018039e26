"""Gymnasium user-simulator environments for training policies (installed as `augmenter.envs`).

`augmenter/Turn-v0` (`TurnEnv`): one user turn of the paper's MDP, one step per policy decision, with DSTC11
replay as the user simulator; `policies.rollout` plays it with random or rule-based policies. Still to build
(issue #4): the whole-dialogue option with an LLM user simulator, the offline candidate cache, the T5 policy and
its training.
"""

import gymnasium

from augmenter.envs.turn_env import ACTIONS, CHARSET, TurnEnv, make_turn_env, observation_text
from augmenter.envs.user_sim import DSTC11Replay, UserSimulator, UserTurn

if "augmenter/Turn-v0" not in gymnasium.registry:
    gymnasium.register(id="augmenter/Turn-v0", entry_point="augmenter.envs.turn_env:make_turn_env")

__all__ = ["make_turn_env", "ACTIONS", "CHARSET", "TurnEnv", "observation_text", "DSTC11Replay", "UserSimulator", "UserTurn"]
