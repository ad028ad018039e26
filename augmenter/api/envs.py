"""The gymnasium environments and what trains in them, built from config.

`make_turn_env` and `make_dialogue_env` are the entry points `gymnasium.make("augmenter/Turn-v0",
overrides=[...], ...)` calls; `build_env` and `build_users` build what a composed `train` config describes;
`precompute` is `augmenter precompute`; `named_policy` instantiates a rule-based policy of `configs/policy/`
(training's teacher and baselines). The environment, the precompute walk and the trainer only receive built
objects.

    import gymnasium, augmenter.envs
    env = gymnasium.make("augmenter/Turn-v0", overrides=["llm=fake"], llm_call_cost=0.01, render_mode="ansi")
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from omegaconf import DictConfig, open_dict

from augmenter.agent import Agent, Policy
from augmenter.config import build_agent, compose, instantiate
from augmenter.envs.precompute import precompute_parts
from augmenter.envs.turn_env import TurnEnv
from augmenter.envs.user_sim import DSTC11Replay, LLMUserSimulator, UserSimulator, UserTurn, load_chat_seeds
from augmenter.errors import ConfigError, InputError
from augmenter.fingerprint import fingerprint
from augmenter.paths import cache_dir

__all__ = [
    "build_env",
    "build_users",
    "call_fingerprint",
    "make_dialogue_env",
    "make_turn_env",
    "make_vector_env",
    "named_policy",
    "precompute",
]


def make_turn_env(overrides: Sequence[str] = (), part: str = "train", render_mode: str | None = None, **env) -> TurnEnv:
    """`gymnasium.make("augmenter/Turn-v0", overrides=[...], part=..., limit=..., render_mode=..., ...)`: the
    `train` config composed with `overrides` (e.g. "llm=fake"); other keyword arguments set `env.*` values
    (`limit` sets the sample size of the chosen part: train, heldout or all)."""
    cfg = compose("train", list(overrides))
    with open_dict(cfg):
        if "limit" in env:
            cfg.env.train_limit = cfg.env.heldout_limit = env.pop("limit")
        unknown = set(env) - set(cfg.env)
        if unknown:
            raise TypeError(
                f"unknown environment setting(s): {', '.join(sorted(unknown))}; known: limit, {', '.join(cfg.env)}"
            )
        cfg.env.update(env)
    return build_env(cfg, part, render_mode=render_mode)


def make_dialogue_env(
    overrides: Sequence[str] = (), part: str = "train", render_mode: str | None = None, **env
) -> TurnEnv:
    """`gymnasium.make("augmenter/Dialogue-v0", ...)`: as `make_turn_env`, a whole dialogue per episode."""
    return make_turn_env(overrides, part, render_mode, **{"episode": "dialogue", **env})


def make_vector_env(
    overrides: Sequence[str] = (),
    num_envs: int = 2,
    mode: str = "async",
    part: str = "train",
    max_episode_steps: int | None = None,
    **env,
):
    """`gymnasium.make_vec("augmenter/Turn-v0", num_envs, vectorization_mode=mode, overrides=..., part=...)` with
    autoreset disabled: its user resets each finished sub-environment (`reset(seed=[...], options={"reset_mask":
    ...})`), as training does to seed each episode (`augmenter.policies.vector_rollouts`). `max_episode_steps`:
    the sub-environments' step limit when the agent's budget (`agent.max_steps`) is not the registered 12."""
    import gymnasium
    from gymnasium.vector import AutoresetMode

    spec = gymnasium.spec("augmenter/Turn-v0")
    if max_episode_steps is not None:
        spec = replace(spec, max_episode_steps=max_episode_steps)
    return gymnasium.make_vec(
        spec,
        num_envs=num_envs,
        vectorization_mode=mode,
        vector_kwargs={"autoreset_mode": AutoresetMode.DISABLED},
        overrides=list(overrides),
        part=part,
        **env,
    )


def build_env(
    cfg: DictConfig, part: str = "train", agent: Agent | None = None, render_mode: str | None = None
) -> TurnEnv:
    """The environment a composed `train` config describes: its agent (or `agent`) answering the turns of
    `build_users(cfg, agent, part)`."""
    _check_data(cfg)
    agent = agent or build_agent(cfg)
    e = cfg.env
    try:
        return TurnEnv(
            agent,
            build_users(cfg, agent, part),
            llm_call_cost=e.llm_call_cost,
            consolidation_cost=e.consolidation_cost,
            max_text=e.max_text,
            render_mode=render_mode,
            episode=e.episode,
            max_turns=e.max_turns,
        )
    except ValueError as exc:
        raise ConfigError(f"env: {exc}") from None


def build_users(cfg: DictConfig, agent: Agent, part: str = "train") -> UserSimulator:
    """`env.users`: DSTC11 replay of one side of the dialogue-level split (`part`: train | heldout | all), gold
    knowledge from the agent's knowledge base; or the LLM user simulator on BotChat's seeds, written by the
    agent's LLM."""
    e = cfg.env
    if e.users == "dstc11":
        kb = getattr(agent.executor.consolidator, "kb", None)
        if kb is None:
            raise ConfigError("env.users=dstc11 needs an agent whose knowledge consolidator has a knowledge base")
        return DSTC11Replay(
            Path(cfg.data_root) / "dstc11-track5",
            e.split,
            kb,
            limit=e.heldout_limit if part == "heldout" else e.train_limit,
            seeking_share=e.seeking_share if part == "train" else None,
            part=part,
            heldout_share=e.heldout_share,
        )
    if e.users == "chat_seeds":
        return LLMUserSimulator(
            agent.executor.llm,
            load_chat_seeds(e.chat_seeds.path, e.chat_seeds.utterances),
            max_turns=e.max_turns or 3,
            guard=False,
        )  # as before: one call per user turn
    raise ConfigError(f"env.users must be dstc11 or chat_seeds, got {e.users!r}")


def _check_data(cfg: DictConfig) -> None:
    """One clear line when the replayed dialogues are missing (a relative data_root is read from the working
    directory)."""
    split = Path(cfg.data_root) / "dstc11-track5" / cfg.env.split
    if cfg.env.users == "dstc11" and not split.is_dir():
        raise ConfigError(
            f"DSTC11 data not found: {split.resolve()} (data_root={cfg.data_root}); set "
            "AUGMENTER_DATA=/path/to/data or pass the override data_root=/path/to/data"
        )


def named_policy(name: str, what: str = "policy") -> Policy:
    """The rule-based policy `configs/policy/<name>.yaml` (training's teacher, a baseline); `what` names it in
    errors."""
    return instantiate(compose("train", [f"policy={name}"]).policy, what)


CALL_SHAPING = (
    "llm",
    "prompt",
    "sampling",
    "agent",
    "executor",
    "retriever",
    "knowledge",
    "consolidator",
    "utility",
    "data_root",
)


def call_fingerprint(cfg: DictConfig) -> str:
    """A short hash of the config parts that shape an episode's LLM calls (names the precompute log)."""
    return fingerprint(cfg, CALL_SHAPING)


def precompute(cfg: DictConfig) -> dict:
    """`augmenter precompute` for a composed `train` config: every turn of `precompute.parts` walked through the
    agent's disk-cached LLM (`augmenter.envs.precompute`); returns the summary."""
    if not cfg.llm_cache.enabled:
        raise InputError("precompute fills the LLM cache: set llm_cache.enabled=true")
    _check_data(cfg)
    agent = build_agent(cfg)
    directory = Path(cfg.llm_cache.dir) if cfg.llm_cache.dir else cache_dir() / "llm"
    parts: dict[str, Sequence[UserTurn]] = {}
    for part in cfg.precompute.parts:
        users = build_users(cfg, agent, part)
        if not isinstance(users, DSTC11Replay):
            raise ConfigError("precompute walks recorded DSTC11 turns: it needs env.users=dstc11")
        parts[part] = users.turns
    return precompute_parts(
        agent,
        parts,
        directory / f"precomputed-{call_fingerprint(cfg)}.jsonl",
        cfg.precompute.max_states,
        progress=cfg.train.progress,
    )
