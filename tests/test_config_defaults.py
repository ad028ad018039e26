"""One source per setting: the code's defaults are the configs' (or the parameter is required).

Each setting a shipped config gives a constructor or builder equals that parameter's default, so that code built
without Hydra (`Agent(policy, executor)`, `KnowledgeConsolidator(kb, retriever)`) is the system `augmenter chat`
runs. A target's reference is its one option not listed in VARIANTS (for a group's default, the option `chat`
composes); a variant, and an option that composes another (utility=grounded's `base`), is that target's defaults
with its own changes. The untargeted nodes are compared as `chat` composes them; `eval` and `train` change
some of them on purpose (the paper's system), each in its own YAML.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from hydra.utils import get_object
from omegaconf import OmegaConf

from augmenter.agent import Agent, Executor
from augmenter.config import GROUPS, REVIEW_SETTINGS, compose, group_options
from augmenter.documents.composer import DocumentComposer
from augmenter.llm import CachedLLM, ResilientLLM, SamplingParams
from augmenter.reviews.composer import ReviewReplies
from augmenter.reviews.evidence import OpinionSettings

# options that vary a target another option of their group defines (its reference)
VARIANTS = {
    "llm": {"local_1_5b", "local_small", "smollm"},  # other models for LocalLLM (llm=local)
    "retriever": {"dense_hnsw"},  # DenseRetriever's HNSW index (retriever=dense)
    "prompt": {"customer_service", "news_chat", "wiki_qa"},  # other prompt files (prompt=assistant)
    "utility": {"dodge", "repetition"},  # CombinedUtility's other checks (utility=grounded)
}

# settings whose config value is not the code's default, on purpose
EXCEPTIONS = {
    ("augmenter.knowledge.load_dstc11", "entity_mapping"): "the YAML's is under data_root; without one: no mapping",
    ("augmenter.policies.RulePolicy", "rules"): "the option's rules are a sample; the class itself has none",
    ("llm_cache", "enabled"): "read from the config alone (build_llm's `cache` overrides it)",
    ("knowledge.answer", "enabled"): "read by DocumentKnowledge.composer, true there too",
}

# the untargeted nodes the builders read (augmenter/config.py): node -> {key: (callable, parameter)}
_REVIEWS = {key: (ReviewReplies, parameter) for key, parameter in REVIEW_SETTINGS.items()}
UNTARGETED: dict[str, tuple[Callable, dict[str, tuple[Callable, str]]]] = {
    "agent": (Agent, {}),
    "executor": (Executor, _REVIEWS),
    "sampling": (SamplingParams, {"retry_temperature": (Executor, "retry_temperature")}),
    "llm_guard": (ResilientLLM, {}),
    "llm_cache": (CachedLLM, {"dir": (CachedLLM, "directory")}),
}


def _same(value: Any, default: Any) -> bool:
    if isinstance(default, enum.Enum):
        return type(default)(value) is default
    if isinstance(value, Sequence) and not isinstance(value, str) and isinstance(default, Sequence):
        return not isinstance(default, str) and list(value) == list(default)
    return (
        type(value) is type(default)
        and value == default
        or (type(value), type(default)) == (int, float)
        and (value == default)
    )


def _mismatches(where: str, target: Callable, node: Mapping, name: str, mapped=None) -> list[str]:
    """`node`'s keys whose value is not `target`'s default for them (a required parameter matches anything)."""
    out = []
    for key, value in node.items():
        if key == "_target_" or (name, key) in EXCEPTIONS:
            continue
        if isinstance(value, Mapping):
            continue  # a nested node: a target (utility.base) by its own option, knowledge.answer by its reader
        owner, parameter = (mapped or {}).get(key, (target, key))
        params = inspect.signature(owner).parameters
        if parameter not in params:
            out.append(f"{where}.{key}: {owner.__qualname__} has no parameter {parameter!r}")
            continue
        default = params[parameter].default
        if default is not inspect.Parameter.empty and not _same(value, default):
            out.append(f"{where}.{key}: the config says {value!r}, {owner.__qualname__}({parameter}=...) {default!r}")
    return out


def _node(group: str, option: str) -> dict:
    return OmegaConf.to_container(compose("chat", [f"{group}={option}"])[group], resolve=True)


def _references() -> dict[str, tuple[str, dict]]:
    """target -> (the option it is read from, its node)."""
    found: dict[str, tuple[str, dict]] = {}
    for group in (g for g in GROUPS if g != "task"):  # a task picks other groups' options
        for option in group_options(group):
            if option in VARIANTS.get(group, ()):
                continue
            node = _node(group, option)
            target = node["_target_"]
            assert target not in found, (
                f"{group}={option} and {found[target][0]} both define {target}: list one in VARIANTS"
            )
            found[target] = (f"{group}={option}", node)
    return found


def test_every_option_is_a_reference_or_a_listed_variant():
    references = _references()
    for group, options in VARIANTS.items():
        for option in options:
            assert option in group_options(group), f"VARIANTS names {group}={option}, which is not an option"
            target = _node(group, option)["_target_"]
            assert target in references, f"{group}={option} varies {target}, which no option defines"


def test_every_target_eval_and_train_compose_has_a_reference():
    references = _references()
    for config in ("eval", "train"):
        cfg = OmegaConf.to_container(compose(config), resolve=False)
        for group in GROUPS:
            if isinstance(cfg.get(group), Mapping) and "_target_" in cfg[group]:
                assert cfg[group]["_target_"] in references, f"{config}: {group} {cfg[group]['_target_']}"


def test_constructor_defaults_are_the_configs():
    bad = []
    for target, (option, node) in sorted(_references().items()):
        bad += _mismatches(option, get_object(target), node, target)
        if target == "augmenter.documents.load_documents":
            bad += _mismatches(f"{option} answer", DocumentComposer, node.get("answer") or {}, "knowledge.answer")
        if target == "augmenter.knowledge.KnowledgeConsolidator":  # its opinions node: the settings' defaults
            bad += _mismatches(f"{option} opinions", OpinionSettings, node["opinions"], "consolidator.opinions")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("name", sorted(UNTARGETED))
def test_builder_defaults_are_the_configs(name):
    target, mapped = UNTARGETED[name]
    node = OmegaConf.to_container(compose("chat")[name], resolve=True)
    assert not (bad := _mismatches(name, target, node, name, mapped)), "\n".join(bad)


def test_every_untargeted_node_the_builders_read_is_checked():
    chat = compose("chat")
    untargeted = {k for k, v in chat.items() if OmegaConf.is_dict(v) and "_target_" not in v}
    assert untargeted == set(UNTARGETED)


def test_exceptions_name_real_settings():
    references = _references()
    for owner, key in EXCEPTIONS:
        if owner in references:
            assert key in references[owner][1], (owner, key)
        elif owner == "knowledge.answer":
            assert key in references["augmenter.documents.load_documents"][1]["answer"]
        else:
            assert key in compose("chat")[owner], (owner, key)
