"""Compose the Hydra configs in `configs/` and build an agent from them, with one-line errors."""

from __future__ import annotations

import copy
import inspect
import logging
import os
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from hydra import compose as hydra_compose
from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.errors import HydraException, InstantiationException
from hydra.utils import get_object
from hydra.utils import instantiate as hydra_instantiate
from omegaconf import DictConfig, OmegaConf, open_dict
from omegaconf.errors import OmegaConfBaseException

from augmenter.agent import Agent, Executor
from augmenter.config_schema import validate
from augmenter.errors import AugmenterError, ConfigError
from augmenter.extras import explain
from augmenter.llm import CachedLLM, MeteredLLM, ResilientLLM, SamplingParams
from augmenter.text import closest, did_you_mean

GROUPS = ("llm", "retriever", "knowledge", "consolidator", "policy", "utility", "verifier", "prompt", "task")


def _handbook() -> str:
    from augmenter.documents.handbook import handbook_dir

    return str(handbook_dir())


if not OmegaConf.has_resolver("handbook"):  # ${handbook:}: the sample folder shipped with augmenter (task=docs)
    OmegaConf.register_new_resolver("handbook", _handbook)


def config_dir() -> Path:
    return Path(str(resources.files("augmenter.configs")))


def group_options(group: str) -> list[str]:
    return sorted(p.stem for p in (config_dir() / group).glob("*.yaml"))


_HOME_VALUE = re.compile(r"^(\+{0,2}[\w.@/-]+)=(~(?:/.*)?)$")


def _home(override: str) -> str:
    """`key=~/path` with ~ expanded as a shell would (the shell leaves it alone after `=`, and Hydra's grammar
    rejects it), quoted when the path holds characters Hydra reads as syntax."""
    found = _HOME_VALUE.match(override)
    if not found:
        return override
    path = os.path.expanduser(found.group(2))
    return f"{found.group(1)}={path}" if re.fullmatch(r"[\w./-]+", path) else f"{found.group(1)}='{path}'"


def compose(config_name: str = "chat", overrides: Sequence[str] = ()) -> DictConfig:
    """Compose a primary config with command-line style overrides and check it against the schema
    (`augmenter/config_schema.py`); raise ConfigError with a clear one-line message. A value that starts with
    `~/` is a path under the home folder."""
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(config_dir()), version_base="1.3"):
            cfg = hydra_compose(config_name=config_name, overrides=[_home(o) for o in overrides])
        validate(OmegaConf.to_container(cfg, resolve=True))
    except HydraException as exc:
        message = str(exc).splitlines()[0]
        if "LexerNoViableAlt" in message or "mismatched input" in message:
            message += (
                " (an override's value has characters Hydra reads as syntax, such as > or spaces: quote it,"
                " e.g. \"judge.known=['a>b']\")"
            )
        raise ConfigError(message + _hint(message, config_name, overrides)) from None
    except OmegaConfBaseException as exc:
        raise ConfigError(str(exc).splitlines()[0]) from None
    return cfg


def _hint(message: str, config_name: str, overrides: Sequence[str]) -> str:
    """What Hydra's error should have said: the closest valid option of a group (and its options), or the closest
    setting of a key's node (or of another option of its group: `llm.default` is the fake LLM's)."""
    found = re.search(r"Could not find '(\w+)/([^']*)'", message)
    if found:
        group, option = found.groups()
        options = group_options(group)
        return did_you_mean(option, options) + f" (options for {group}: {', '.join(options)})"
    found = re.search(r"Could not override '([^']+)'", message)
    if not found:
        return ""
    key = found.group(1)
    parent, _, name = key.rpartition(".")
    try:  # the config without that override: the keys it could have meant
        cfg = compose(config_name, [o for o in overrides if o.lstrip("+~").split("=", 1)[0] != key])
    except ConfigError:
        return ""
    node = OmegaConf.select(cfg, parent) if parent else cfg
    hint = did_you_mean(name, node.keys()) if isinstance(node, DictConfig) else ""
    if hint or not (config_dir() / parent).is_dir():
        return hint
    for option in group_options(parent):
        other = closest(name, OmegaConf.load(config_dir() / parent / f"{option}.yaml").keys())
        if other:
            return f" (did you mean {other!r}? {parent}={option} has it)"
    return ""


def _root_cause(exc: BaseException) -> BaseException:
    seen = set()
    while exc.__cause__ is not None and id(exc) not in seen:
        seen.add(id(exc))
        exc = exc.__cause__
    return exc


def instantiate(node: DictConfig, what: str, **available: Any) -> Any:
    """Instantiate a `_target_` node, passing those of `available` objects its target accepts."""
    try:
        hydra_log = logging.getLogger("hydra.utils")  # it logs a failed import as ERROR: our one line says it
        hydra_log.disabled, was = True, hydra_log.disabled
        try:
            target = get_object(node._target_)
        finally:
            hydra_log.disabled = was
        params = inspect.signature(target).parameters
        extras = {k: v for k, v in available.items() if k in params and k not in node}
        if not extras:
            return hydra_instantiate(node, _convert_="all")
        # built objects are passed to the target as they are (Hydra would try to turn a dataclass into config)
        return hydra_instantiate(node, _partial_=True, _convert_="all")(**extras)
    except (InstantiationException, ImportError, OmegaConfBaseException, TypeError, ValueError) as exc:
        cause = _root_cause(exc)
        if isinstance(cause, AugmenterError):
            raise cause from None
        if isinstance(cause, ImportError) and explain(cause, what):
            raise explain(cause, what) from None
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


def build_utility(node: DictConfig, **available: Any) -> Any:
    """The configured utility. A combined utility's `base` (KF1, claims, ...) is built first, with the same
    `available` objects (the claims utility needs the verifier), and handed to it."""
    if isinstance(node.get("base"), DictConfig) and "_target_" in node.base:
        base = instantiate(node.base, "utility.base", **available)
        rest = OmegaConf.create({k: v for k, v in node.items() if k != "base"})
        return instantiate(rest, "utility", base=base, **available)
    return instantiate(node, "utility", **available)


REVIEW_SETTINGS = {  # executor.* -> ReviewReplies
    "quote_reviews": "quote",
    "review_verdicts": "verdicts",
    "review_faq_check": "faq_check",
    "review_sure_on_topic": "sure_on_topic",
}


def build_replies(knowledge, consolidator, utility, llm, **settings):
    """The replies in the knowledge's own words for the executor (its `ReplyComposer`): for a knowledge base of
    snippets (FAQs and reviews) the reviews' `ReviewReplies`, which takes the FAQs and review sentences that answer
    from the utility when it finds them (the answers check), and the review judge from the opinion gatherer;
    `settings`: its `quote`, `verdicts`, `faq_check` and `sure_on_topic` (`executor.quote_reviews`, `review_verdicts`,
    `review_faq_check` and `review_sure_on_topic`). None for other knowledge."""
    from augmenter.knowledge import KnowledgeBase, KnowledgeConsolidator
    from augmenter.reviews.composer import AnswerFinder, ReviewReplies

    if not isinstance(knowledge, KnowledgeBase):
        return None
    gatherer = consolidator.opinions if isinstance(consolidator, KnowledgeConsolidator) else None
    return ReviewReplies(
        knowledge.by_id,
        utility if isinstance(utility, AnswerFinder) else None,
        llm,
        judge=gatherer.judge if gatherer is not None else None,
        on_topic=getattr(gatherer, "on_topic", None),
        min_on_topic=getattr(gatherer, "min_on_topic", 0.5),
        **settings,
    )


def build_agent(cfg: DictConfig, llm=None, policy=None, utility=None, callbacks: Sequence = ()):
    """Everything a session needs, from one composed config. Built objects passed in replace the config's: `llm`,
    `policy` (a Policy or a plain function of the memory) and `utility` (any callable `(memory, candidate)`; what
    sending relies on is what it declares as an `augmenter.agent.Check`);
    `callbacks` are called after every action (see `Agent`)."""
    given = llm is not None
    llm = llm or build_llm(cfg)
    knowledge = instantiate(cfg.knowledge, "knowledge")
    retriever = instantiate(cfg.retriever, "retriever")
    consolidator = instantiate(cfg.consolidator, "consolidator", knowledge=knowledge, retriever=retriever)
    if getattr(consolidator, "needs_llm", False):  # the opinion gatherer's judge (consolidator.opinions.stance=llm):
        # a model instance of its own, so that its scoring passes and the response calls each keep their prompt's
        # prefix in their own KV cache; its calls count in the same usage (the turn's trace and cost)
        consolidator.use_llm(llm if given else llm.sharing_usage(build_llm(cfg).llm))
    prompts = instantiate(cfg.prompt, "prompt")
    if utility is None:
        verifier = instantiate(cfg.verifier, "verifier", llm=llm, prompts=prompts) if "verifier" in cfg else None
        utility = build_utility(cfg.utility, llm=llm, prompts=prompts, consolidator=consolidator, verifier=verifier)
    policy = policy if policy is not None else instantiate(cfg.policy, "policy")
    try:
        composer = knowledge.composer() if callable(getattr(knowledge, "composer", None)) else None
        settings = OmegaConf.to_container(cfg.get("executor") or {})
        # some of the executor's settings are the reviews' replies': quotes, verdict, FAQ check, sure on-topic bar
        reviews = {new: settings.pop(old) for old, new in REVIEW_SETTINGS.items() if old in settings}
        replies = build_replies(knowledge, consolidator, utility, llm, **reviews) if composer is None else None
        executor = Executor(
            llm=llm,
            prompts=prompts,
            utility=utility,
            consolidator=consolidator,
            composer=composer,
            replies=replies,
            retry_temperature=cfg.sampling.retry_temperature,
            **settings,
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"executor: {exc}") from None
    try:
        return Agent(policy, executor, callbacks=callbacks, **OmegaConf.to_container(cfg.agent))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"agent: {exc}") from None


def build_task(cfg: DictConfig):
    """The eval task of an `eval` config (`eval.dataset`; DSTC11's with the configured knowledge base, which its
    gold labels refer to)."""
    from augmenter.eval.tasks import build_task as eval_task  # the metrics' packages: augmenter[eval]

    knowledge = instantiate(cfg.knowledge, "knowledge") if cfg.eval.dataset == "dstc11" else None
    return eval_task(str(cfg.eval.dataset), cfg.data_root, str(cfg.eval.split), knowledge)


def build_evaluator(cfg: DictConfig):
    """The evaluator of an `eval` config: its task built now, its agent when turns are left to answer."""
    from augmenter.eval.runner import Evaluator

    return Evaluator(cfg, lambda: build_agent(cfg), build_task(cfg))
