"""Compose the Hydra configs in `configs/` and build an agent from them, with one-line errors."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Sequence

from omegaconf import DictConfig, OmegaConf

from augmenter.errors import AugmenterError, ConfigError

GROUPS = ("llm", "retriever", "knowledge", "policy", "utility", "verifier", "prompt", "task")


def config_dir() -> Path:
    from importlib import resources

    return Path(str(resources.files("augmenter.configs")))


def group_options(group: str) -> list[str]:
    return sorted(p.stem for p in (config_dir() / group).glob("*.yaml"))


def compose(config_name: str = "chat", overrides: Sequence[str] = ()) -> DictConfig:
    """Compose a primary config with command-line style overrides and check it against the schema
    (`augmenter/config_schema.py`); raise ConfigError with a clear one-line message."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from augmenter.config_schema import validate

    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(config_dir()), version_base="1.3"):
            cfg = hydra_compose(config_name=config_name, overrides=list(overrides))
        validate(OmegaConf.to_container(cfg, resolve=True))
    except HydraException as exc:
        message = str(exc).splitlines()[0]
        for group in GROUPS:
            if f"'{group}/" in message or f"{group}=" in message:
                message += f" (options for {group}: {', '.join(group_options(group))})"
                break
        raise ConfigError(message) from None
    except OmegaConfBaseException as exc:
        raise ConfigError(str(exc).splitlines()[0]) from None
    return cfg


def _root_cause(exc: BaseException) -> BaseException:
    seen = set()
    while exc.__cause__ is not None and id(exc) not in seen:
        seen.add(id(exc))
        exc = exc.__cause__
    return exc


def instantiate(node: DictConfig, what: str, **available: Any) -> Any:
    """Instantiate a `_target_` node, passing those of `available` objects its target accepts."""
    from hydra.errors import InstantiationException
    from hydra.utils import get_object
    from hydra.utils import instantiate as hydra_instantiate
    from omegaconf.errors import OmegaConfBaseException

    try:
        target = get_object(node._target_)
        params = inspect.signature(target).parameters
        extras = {k: v for k, v in available.items() if k in params and k not in node}
        return hydra_instantiate(node, **extras, _convert_="all")
    except (InstantiationException, ImportError, OmegaConfBaseException, TypeError, ValueError) as exc:
        cause = _root_cause(exc)
        if isinstance(cause, AugmenterError):
            raise cause from None
        text = str(cause).splitlines()[0] if str(cause) else type(cause).__name__
        if isinstance(cause, OmegaConfBaseException) and "Missing mandatory value" in text:
            text = f"a required value is not set: {text.split(':', 1)[-1].strip()}"
        raise ConfigError(f"{what}: {text}") from None
    except AugmenterError:
        raise
    except (OSError, KeyError, AttributeError) as exc:
        raise ConfigError(f"{what}: {type(exc).__name__}: {exc}") from None


def build_llm(cfg: DictConfig, cache: bool | None = None):
    """The configured LLM and its fallbacks (`llm.fallbacks`: LLM config nodes, tried in order), each disk-cached
    if `llm_cache.enabled` (or `cache`), behind a circuit breaker (`llm_guard`), wrapped in a usage meter."""
    import copy

    from omegaconf import open_dict

    from augmenter.llm import CachedLLM, MeteredLLM, ResilientLLM, SamplingParams

    node = copy.deepcopy(cfg.llm)  # the caller's config keeps its fallbacks
    with open_dict(node):
        fallbacks = node.pop("fallbacks", None) or []
    backends = [instantiate(node, "llm")]
    backends += [instantiate(fallback, f"llm.fallbacks[{i}]") for i, fallback in enumerate(fallbacks)]
    use_cache = cfg.llm_cache.enabled if cache is None else cache
    if use_cache:
        backends = [CachedLLM(backend, cfg.llm_cache.dir) for backend in backends]
    guard = OmegaConf.to_container(cfg.get("llm_guard") or {})
    try:
        llm = ResilientLLM(backends[0], backends[1:], **guard)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"llm_guard: {exc}") from None
    sampling = OmegaConf.to_container(cfg.sampling)
    sampling.pop("retry_temperature", None)
    return MeteredLLM(llm, SamplingParams(**sampling))


def build_agent(cfg: DictConfig, llm=None, policy=None, utility=None, callbacks: Sequence = ()):
    """Everything a session needs, from one composed config. Built objects passed in replace the config's: `llm`,
    `policy` (a Policy or a plain function of the memory) and `utility` (any callable `(memory, candidate)`);
    `callbacks` are called after every action (see `Agent`)."""
    from augmenter.agent import Agent, Executor
    from augmenter.knowledge import KnowledgeConsolidator

    llm = llm or build_llm(cfg)
    knowledge = instantiate(cfg.knowledge, "knowledge")
    retriever = instantiate(cfg.retriever, "retriever")
    if "_target_" in cfg.consolidator:  # another consolidator (e.g. the table-text chainer of Wiki QA)
        consolidator = instantiate(cfg.consolidator, "consolidator", knowledge=knowledge, retriever=retriever)
    else:
        try:
            consolidator = KnowledgeConsolidator(knowledge, retriever, **OmegaConf.to_container(cfg.consolidator))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"consolidator: {exc}") from None
    prompts = instantiate(cfg.prompt, "prompt")
    if utility is None:
        verifier = instantiate(cfg.verifier, "verifier", llm=llm, prompts=prompts) if "verifier" in cfg else None
        utility = instantiate(cfg.utility, "utility", llm=llm, prompts=prompts, consolidator=consolidator,
                              verifier=verifier)
    policy = policy if policy is not None else instantiate(cfg.policy, "policy")
    try:
        executor = Executor(llm=llm, prompts=prompts, utility=utility, consolidator=consolidator,
                            retry_temperature=cfg.sampling.retry_temperature,
                            **OmegaConf.to_container(cfg.get("executor") or {}))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"executor: {exc}") from None
    try:
        return Agent(policy, executor, callbacks=callbacks, **OmegaConf.to_container(cfg.agent))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"agent: {exc}") from None
