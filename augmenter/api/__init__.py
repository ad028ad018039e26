"""The public Python API: build an assistant from config, hold a conversation, get each reply with its Working
Memory (the evidence, every candidate with its score and feedback, the claims and citations, the trace).

    from augmenter.api import Assistant

    assistant = Assistant.from_overrides(["llm=fake"])          # the overrides `augmenter chat` takes
    session = assistant.session()
    memory = session.say("Does the Grand Meridian Hotel have a pool?")
    print(memory.response, memory.outcome, memory.citation_records())

`policy=` takes a Policy or a plain function of the memory, `utility=` any callable `(memory, candidate)` (what
sending relies on is what it declares as an `augmenter.agent.Check`: a plain function checks no claims),
`callbacks=` functions called as `callback(memory, record)` after every action (a UI, logging, streaming).
The jobs the commands run are built from config here too: `augmenter.api.jobs` (eval, grid, ground),
`augmenter.api.conversations` (converse, judge), `augmenter.api.training` (train); the gymnasium environments
and precompute are in `augmenter.api.envs`. They are imported on demand (some need an extra).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from omegaconf import DictConfig, OmegaConf

from augmenter.agent import Agent, Session
from augmenter.agent.protocols import Callback
from augmenter.config import build_agent, compose
from augmenter.errors import ConfigError
from augmenter.memory import Snippet, Utterance, WorkingMemory

__all__ = ["Assistant"]


class Assistant:
    """An augmenter system: an agent built once (model, knowledge, policy, utility), any number of sessions."""

    def __init__(self, agent: Agent, config: DictConfig | None = None):
        self.agent = agent
        self.config = config

    @classmethod
    def from_overrides(
        cls,
        overrides: Sequence[str] = (),
        config_name: str = "chat",
        *,
        llm: Any = None,
        policy: Any = None,
        utility: Any = None,
        callbacks: Sequence[Callback] = (),
    ) -> Assistant:
        """Compose `configs/<config_name>.yaml` with Hydra overrides (as on the command line) and build it."""
        return cls.from_config(
            compose(config_name, overrides), llm=llm, policy=policy, utility=utility, callbacks=callbacks
        )

    @classmethod
    def from_config(
        cls,
        config: DictConfig | Mapping,
        *,
        llm: Any = None,
        policy: Any = None,
        utility: Any = None,
        callbacks: Sequence[Callback] = (),
    ) -> Assistant:
        """Build from a whole composed config (a DictConfig or a plain dict, e.g. one saved by `--cfg job`),
        checked by the same schema as a composed one."""
        from augmenter.config_schema import validate

        if not isinstance(config, DictConfig):
            if not isinstance(config, Mapping):
                raise ConfigError(f"a config is a mapping or a DictConfig, got {type(config).__name__}")
            config = OmegaConf.create(dict(config))
        container = OmegaConf.to_container(config, resolve=True)
        assert isinstance(container, dict)  # a DictConfig's container is a dict
        validate(container)
        agent = build_agent(config, llm=llm, policy=policy, utility=utility, callbacks=callbacks)
        return cls(agent, config)

    def session(self, history: Sequence[Utterance] = ()) -> Session:
        """A new conversation (optionally continuing `history`); `session.say(text)` answers one turn."""
        return Session(self.agent, history)

    def ask(
        self, question: str, history: Sequence[Utterance] = (), knowledge: Sequence[Snippet] | None = None
    ) -> WorkingMemory:
        """Answer one question outside any session; `knowledge` hands in the evidence instead of retrieving it."""
        return self.agent.respond(question, history, given=knowledge)
