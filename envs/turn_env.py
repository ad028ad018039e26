"""`augmenter/Turn-v0`: one user turn as an episode of the paper's MDP (section 2.1); a step is one policy
decision.

- Observation: `{"text": the Working Memory as text, "features": [has evidence, has candidate, last utility
  (-1 before any), LLM calls so far / the budget, an entity is mentioned]}`. The text keeps to `CHARSET` (printable ASCII; anything else
  becomes "?") and `max_text` characters, so it always lies in its `spaces.Text`.
- Action: `Discrete(len(ACTIONS))` over `augmenter.memory.Action`. An inadmissible action is replaced the way
  the Agent replaces it (send with no candidate calls the LLM first; a call over the LLM budget sends the best
  candidate; ...): `info["replaced"]` says so. The `max_steps`-th decision ends the turn.
- Reward: each LLM call costs `llm_call_cost`, each knowledge consolidation `consolidation_cost`, charged on the
  step that makes it; the step that sends adds the response's quality: the configured utility's score against
  the turn's gold knowledge (0 for a turn that needs none, where only the costs count).

- Episode: one user turn (`episode="turn"`, `augmenter/Turn-v0`), or a whole dialogue (`episode="dialogue"`,
  `augmenter/Dialogue-v0`): when a turn's response is sent, its reward is paid and the user simulator's next
  turn begins with a fresh Working Memory (`info["turn_over"]`), until the simulator is done or `max_turns`.
"""

from __future__ import annotations

import string
from typing import Any, Optional

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from augmenter.agent import Agent
from augmenter.errors import ConfigError
from augmenter.memory import Action, Verdict, WorkingMemory

from augmenter.envs.user_sim import UserSimulator, UserTurn

ACTIONS: list[Action] = list(Action)
CHARSET = "".join(c for c in string.printable if c not in "\x0b\x0c")
_ALLOWED = set(CHARSET)


def observation_text(mem: WorkingMemory, max_chars: int = 2048) -> str:
    """The Working Memory in a few labelled lines, newest information last (the first snippet and each candidate
    clipped, so that a policy reading the text's start still sees the candidates)."""
    lines = [f"user: {mem.q}"]
    if mem.h_q:
        lines.append(f"before: {mem.h_q[-1].text}")
    lines.append(f"entities: {', '.join(e.name for e in mem.entities) or 'none'}")
    if mem.needs_knowledge is not None:
        lines.append(f"llm says it needs knowledge: {'yes' if mem.needs_knowledge else 'no'}")
    clip = lambda text, n: text if len(text) <= n else text[: n - 3] + "..."
    lines.append(f"evidence: {len(mem.e)} snippets" + (f"; first: {clip(mem.e[0].text, 200)}" if mem.e else ""))
    for i, candidate in enumerate(mem.o):
        score = f" (utility {mem.u[i]:.2f})" if i < len(mem.u) else " (not verified)"
        counts = mem.verdict_counts(i)
        if any(counts.values()):
            score += f" (claims: {counts[Verdict.SUPPORTED]} supported, {counts[Verdict.REFUTED]} refuted, " \
                     f"{counts[Verdict.NOT_ENOUGH_INFO]} not in the knowledge)"
        lines.append(f"candidate {i + 1}{score}: {clip(candidate, 300)}")
    if mem.feedback:
        lines.append(f"feedback: {mem.feedback}")
    text = "".join(c if c in _ALLOWED else "?" for c in "\n".join(lines))
    return text[:max_chars]


N_FEATURES = 5


def observation_features(mem: WorkingMemory, max_llm_calls: int) -> np.ndarray:
    """[has evidence, has candidate, last utility (-1 before any), LLM calls so far / the budget, a knowledge-base
    entity is mentioned (the linker's state-tracking, done before the first decision)]."""
    features = np.array([float(mem.has_evidence), float(mem.has_candidate), mem.u[-1] if mem.u else -1.0,
                         min(1.0, mem.llm_calls / max_llm_calls), float(bool(mem.entities))], dtype=np.float32)
    return np.clip(features, -1.0, 1.0)


class TurnEnv(gym.Env):
    metadata = {"render_modes": ["ansi"]}

    def __init__(self, agent: Agent, users: UserSimulator, llm_call_cost: float = 0.0,
                 consolidation_cost: float = 0.0, max_text: int = 2048, render_mode: Optional[str] = None,
                 episode: str = "turn", max_turns: Optional[int] = None):
        if llm_call_cost < 0 or consolidation_cost < 0:
            raise ValueError("costs are non-negative amounts subtracted from the reward")
        if episode not in ("turn", "dialogue"):
            raise ValueError(f"episode must be 'turn' or 'dialogue', got {episode!r}")
        self.episode, self.max_turns = episode, max_turns
        self.conversation = None
        self.turns_done = 0
        self.agent, self.users = agent, users
        self.llm_call_cost, self.consolidation_cost = llm_call_cost, consolidation_cost
        self.max_text = max_text
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(len(ACTIONS))
        self.observation_space = spaces.Dict({
            "text": spaces.Text(max_length=max_text, min_length=0, charset=CHARSET),
            "features": spaces.Box(low=np.array([0, 0, -1, 0, 0], dtype=np.float32),
                                   high=np.array([1, 1, 1, 1, 1], dtype=np.float32), dtype=np.float32),
        })
        self.turn: Optional[UserTurn] = None
        self.mem: Optional[WorkingMemory] = None

    def _observation(self) -> dict[str, Any]:
        return {"text": observation_text(self.mem, self.max_text),
                "features": observation_features(self.mem, self.agent.max_llm_calls)}

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        self.turns_done = 0
        if self.episode == "dialogue":
            self.conversation = self.users.dialogue(self.np_random)
            self.turn = self.conversation.first()
        else:
            self.turn = (options or {}).get("turn") or self.users.sample(self.np_random)
        self.mem = self.agent.begin(self.turn.q, self.turn.history)
        return self._observation(), {"turn_id": self.turn.turn_id, "knowledge_seeking": self.turn.knowledge_seeking}

    def quality(self) -> float:
        """The sent response's utility against the turn's gold knowledge (0 when the turn needs none, and 0 for a
        reply that says the knowledge does not answer: every replayed turn's gold knowledge does answer it)."""
        if not self.turn.gold or not self.mem.response or self.mem.outcome == "abstained":
            return 0.0
        scorer = self.agent.executor.utility
        gold = list(self.turn.gold)
        return float(scorer.score(self.mem.model_copy(update={"e": gold, "given": gold}), self.mem.response))

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
        info: dict[str, Any] = {"requested": requested.value, "taken": [r.action.value for r in taken],
                                "replaced": any(r.requested is not None for r in taken) or len(taken) > 1}
        if done:
            info["quality"] = self.quality()
            info["llm_calls"] = self.mem.llm_calls
            info["outcome"] = self.mem.outcome
            reward += info["quality"]
            self.turns_done += 1
            if self.episode == "dialogue" and (self.max_turns is None or self.turns_done < self.max_turns):
                upcoming = self.conversation.next(self.mem.response)
                if upcoming is not None:
                    info["turn_over"], info["turn_id"] = True, self.turn.turn_id
                    self.turn, self.mem, done = upcoming, self.agent.begin(upcoming.q, upcoming.history), False
        return self._observation(), float(reward), done, False, info

    def render(self):
        if self.render_mode == "ansi" and self.mem is not None:
            return observation_text(self.mem, self.max_text)
        return None


def build_env(cfg, part: str = "train", agent: Optional[Agent] = None) -> TurnEnv:
    """The environment a composed `train` config describes: its agent (or `agent`) answering DSTC11 replay
    turns of one side of the dialogue-level split (`part`: train | heldout | all)."""
    from pathlib import Path

    from augmenter.config import build_agent
    from augmenter.envs.user_sim import DSTC11Replay, LLMUserSimulator, load_chat_seeds

    e = cfg.env
    agent = agent or build_agent(cfg)
    if e.users == "dstc11":
        users = DSTC11Replay(Path(cfg.data_root) / "dstc11-track5", e.split, agent.executor.consolidator.kb,
                             limit=e.heldout_limit if part == "heldout" else e.train_limit,
                             seeking_share=e.seeking_share if part == "train" else None, part=part,
                             heldout_share=e.heldout_share)
    elif e.users == "chat_seeds":
        users = LLMUserSimulator(agent.executor.llm, load_chat_seeds(e.chat_seeds.path, e.chat_seeds.utterances),
                                 max_turns=e.max_turns or 3)
    else:
        raise ConfigError(f"env.users must be dstc11 or chat_seeds, got {e.users!r}")
    try:
        return TurnEnv(agent, users, llm_call_cost=e.llm_call_cost, consolidation_cost=e.consolidation_cost,
                       max_text=e.max_text, episode=e.episode, max_turns=e.max_turns)
    except ValueError as exc:
        raise ConfigError(f"env: {exc}") from None


def make_dialogue_env(overrides: tuple[str, ...] = (), part: str = "train", **env) -> TurnEnv:
    """`gymnasium.make("augmenter/Dialogue-v0", ...)`: as `make_turn_env`, a whole dialogue per episode."""
    return make_turn_env(overrides, part, **{"episode": "dialogue", **env})


def make_turn_env(overrides: tuple[str, ...] = (), part: str = "train", **env) -> TurnEnv:
    """The entry point of `gymnasium.make("augmenter/Turn-v0", overrides=[...], part=..., limit=..., ...)`: the
    `train` config composed with `overrides` (e.g. "llm=fake"); keyword arguments set `env.*` values (`limit`
    sets the sample size of the chosen part)."""
    from omegaconf import open_dict

    from augmenter.config import compose

    cfg = compose("train", list(overrides))
    with open_dict(cfg):
        if "limit" in env:
            limit = env.pop("limit")
            cfg.env.train_limit = cfg.env.heldout_limit = limit
        unknown = set(env) - set(cfg.env)
        if unknown:
            raise TypeError(f"unknown environment setting(s): {', '.join(sorted(unknown))}; known: limit, "
                            f"{', '.join(cfg.env)}")
        cfg.env.update(env)
    return build_env(cfg, part)
