"""`augmenter/Turn-v0`: one user turn as an episode of the paper's MDP (section 2.1); a step is one policy
decision.

- Observation: `{"text": the Working Memory as text, "features": [has evidence, has candidate, last utility
  (-1 before any), LLM calls so far / the budget, an entity is mentioned]}` (`augmenter.memory.observation`). The
  text keeps to `CHARSET` (printable ASCII; anything else becomes "?") and `max_text` characters, so it always
  lies in its `spaces.Text`.
- Action: `Discrete(len(ACTIONS))` over `augmenter.memory.Action`. An inadmissible action is replaced the way
  the Agent replaces it (send with no candidate calls the LLM first; a call over the LLM budget sends the best
  candidate; ...): `info["replaced"]` says so.
- End: a send ends the turn (`terminated`); at the agent's step budget (`agent.max_steps`) the agent sends the
  best candidate itself and the episode is `truncated` instead.
- Reward: each LLM call costs `llm_call_cost`, each knowledge consolidation `consolidation_cost`, charged on the
  step that makes it; the step that sends adds the response's quality: the score of the agent's utility, called
  as `utility(memory, response)` with the turn's gold knowledge as evidence (0 for a turn that needs none, where
  only the costs count).
- Episode: one user turn (`episode="turn"`, `augmenter/Turn-v0`), or a whole dialogue (`episode="dialogue"`,
  `augmenter/Dialogue-v0`): when a turn's response is sent, its reward is paid and the user simulator's next
  turn begins with a fresh Working Memory (`info["turn_over"]`), until the simulator is done or `max_turns`.
- Render: `render_mode="ansi"` returns the observation text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from augmenter.agent import Agent, utility_result
from augmenter.envs.user_sim import UserSimulator, UserTurn
from augmenter.memory import Action, ActionRecord, WorkingMemory
from augmenter.memory.observation import ACTIONS, CHARSET, observation_features, observation_text


def _budget_ended(taken: Sequence[ActionRecord]) -> bool:
    """Whether the agent's step budget, not the policy, ended the turn (the agent notes it on the forced step)."""
    return any((r.note or "").startswith("step budget") for r in taken)


class TurnEnv(gym.Env):
    metadata = {"render_modes": ["ansi"], "render_fps": 4}  # gymnasium's checker asks for a rate; text is not timed

    def __init__(
        self,
        agent: Agent,
        users: UserSimulator,
        llm_call_cost: float = 0.0,
        consolidation_cost: float = 0.0,
        max_text: int = 2048,
        render_mode: str | None = None,
        episode: str = "turn",
        max_turns: int | None = None,
    ):
        if llm_call_cost < 0 or consolidation_cost < 0:
            raise ValueError("costs are non-negative amounts subtracted from the reward")
        if episode not in ("turn", "dialogue"):
            raise ValueError(f"episode must be 'turn' or 'dialogue', got {episode!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.episode, self.max_turns = episode, max_turns
        self.conversation = None
        self.turns_done = 0
        self.agent, self.users = agent, users
        self.llm_call_cost, self.consolidation_cost = llm_call_cost, consolidation_cost
        self.max_text = max_text
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(len(ACTIONS))
        self.observation_space = spaces.Dict(
            {
                "text": spaces.Text(max_length=max_text, min_length=0, charset=CHARSET),
                "features": spaces.Box(
                    low=np.array([0, 0, -1, 0, 0], dtype=np.float32),
                    high=np.array([1, 1, 1, 1, 1], dtype=np.float32),
                    dtype=np.float32,
                ),
            }
        )
        self.turn: UserTurn | None = None
        self.mem: WorkingMemory | None = None

    def _observation(self) -> dict[str, Any]:
        return {
            "text": observation_text(self.mem, self.max_text),
            "features": observation_features(self.mem, self.agent.max_llm_calls),
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.turns_done = 0
        if self.episode == "dialogue":
            self.conversation = self.users.dialogue(self.np_random)
            self.turn = self.conversation.first()
        else:
            self.turn = (options or {}).get("turn") or self.users.sample(self.np_random)
        self.mem = self.agent.begin(self.turn.q, self.turn.history)
        return self._observation(), {"turn_id": self.turn.id, "knowledge_seeking": self.turn.knowledge_seeking}

    def quality(self) -> float:
        """The sent response's utility against the turn's gold knowledge (0 when the turn needs none, and 0 for a
        reply that says the knowledge does not answer: every replayed turn's gold knowledge does answer it)."""
        if not self.turn.gold or not self.mem.response or self.mem.outcome == "abstained":
            return 0.0
        gold = list(self.turn.gold)
        judged = self.mem.model_copy(update={"e": gold, "given": gold})
        return float(utility_result(self.agent.executor.utility(judged, self.mem.response)).score)

    def step(self, action):
        if self.mem is None:
            raise RuntimeError("call reset() before step()")
        if self.mem.sent:
            raise RuntimeError("the turn is over: call reset()")
        requested = ACTIONS[int(action)]
        before = len(self.mem.trace)
        done = self.agent.act(self.mem, requested)
        taken = self.mem.trace[before:]
        calls = sum(r.llm_calls for r in taken)
        consolidations = sum(r.action == Action.CONSOLIDATE_KNOWLEDGE for r in taken)
        reward = -self.llm_call_cost * calls - self.consolidation_cost * consolidations
        info: dict[str, Any] = {
            "requested": requested.value,
            "taken": [r.action.value for r in taken],
            "replaced": any(r.requested is not None for r in taken) or len(taken) > 1,
        }
        truncated = False
        if done:
            info["quality"] = self.quality()
            info["llm_calls"] = self.mem.llm_calls
            info["outcome"] = self.mem.outcome
            reward += info["quality"]
            self.turns_done += 1
            truncated = _budget_ended(taken)
            if self.episode == "dialogue" and (self.max_turns is None or self.turns_done < self.max_turns):
                upcoming = self.conversation.next(self.mem.response)
                if upcoming is not None:
                    info["turn_over"], info["turn_id"] = True, self.turn.id
                    self.turn, self.mem = upcoming, self.agent.begin(upcoming.q, upcoming.history)
                    done = truncated = False
        return self._observation(), float(reward), done and not truncated, truncated, info

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        return observation_text(self.mem, self.max_text) if self.mem is not None else ""
