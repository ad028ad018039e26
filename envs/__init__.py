"""Gymnasium user-simulator environments for training policies (installed as `augmenter.envs`).

`augmenter/Turn-v0` (`TurnEnv`): one user turn of the paper's MDP, one step per policy decision;
`augmenter/Dialogue-v0`: a whole dialogue per episode. User simulators (`user_sim.py`): DSTC11 replay, and an LLM
user simulator seeded with BotChat's ChatSEEDs. `precompute.py` fills the LLM cache with every candidate a turn's
episodes can need, so training runs without the model. Everything here takes built objects; `gymnasium.make`
builds them from config through `augmenter.api.envs`, and `augmenter.policies.run_episode` plays an episode.
"""

try:
    import gymnasium
except ModuleNotFoundError as exc:  # one line naming the extra, not a bare "No module named"
    raise ModuleNotFoundError("augmenter.envs needs gymnasium: pip install 'augmenter[train]'", name=exc.name) from None

from augmenter.envs.turn_env import TurnEnv
from augmenter.envs.user_sim import DSTC11Replay, LLMUserSimulator, UserSimulator, UserTurn, load_chat_seeds
from augmenter.memory.observation import ACTIONS, CHARSET, N_FEATURES, observation_features, observation_text

TURN_MAX_STEPS = 12  # the agent's default step budget (agent.max_steps in configs/chat.yaml)

if "augmenter/Turn-v0" not in gymnasium.registry:
    gymnasium.register(
        id="augmenter/Turn-v0", entry_point="augmenter.api.envs:make_turn_env", max_episode_steps=TURN_MAX_STEPS
    )
if "augmenter/Dialogue-v0" not in gymnasium.registry:  # as long as the simulated user goes on: no step limit
    gymnasium.register(id="augmenter/Dialogue-v0", entry_point="augmenter.api.envs:make_dialogue_env")

__all__ = [
    "ACTIONS",
    "CHARSET",
    "N_FEATURES",
    "TURN_MAX_STEPS",
    "TurnEnv",
    "observation_features",
    "observation_text",
    "DSTC11Replay",
    "LLMUserSimulator",
    "UserSimulator",
    "UserTurn",
    "load_chat_seeds",
]
