"""Gymnasium user-simulator environments for training policies (installed as `augmenter.envs`).

`augmenter/Turn-v0` (`TurnEnv`): one user turn of the paper's MDP, one step per policy decision;
`augmenter/Dialogue-v0`: a whole dialogue per episode. User simulators (`user_sim.py`): DSTC11 replay, and an LLM
user simulator seeded with BotChat's ChatSEEDs. `precompute.py` fills the LLM cache with every candidate a turn's
episodes can need, so training runs without the model. `policies.rollout` plays an episode.
"""

import gymnasium

from augmenter.envs.turn_env import (
    ACTIONS,
    CHARSET,
    N_FEATURES,
    TurnEnv,
    build_env,
    make_dialogue_env,
    make_turn_env,
    observation_features,
    observation_text,
)
from augmenter.envs.user_sim import DSTC11Replay, LLMUserSimulator, UserSimulator, UserTurn, load_chat_seeds

if "augmenter/Turn-v0" not in gymnasium.registry:
    gymnasium.register(id="augmenter/Turn-v0", entry_point="augmenter.envs.turn_env:make_turn_env")
if "augmenter/Dialogue-v0" not in gymnasium.registry:
    gymnasium.register(id="augmenter/Dialogue-v0", entry_point="augmenter.envs.turn_env:make_dialogue_env")

__all__ = ["make_turn_env", "make_dialogue_env", "build_env", "ACTIONS", "CHARSET", "N_FEATURES", "TurnEnv", "observation_features", "observation_text", "DSTC11Replay", "LLMUserSimulator", "UserSimulator", "UserTurn", "load_chat_seeds"]
