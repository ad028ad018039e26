"""What system a config describes: the one config fingerprint behind resuming evals and training runs and
naming the precompute log.

`system_config` is the resolved config without the options that only say how a run is executed or shown, with
options added after runs were recorded dropped while they are off (older runs still match), the verifier only when
the claims utility uses it, and the content of the prompt files (their comments apart) and verifier weights it names
(an edited prompt changes the system as much as a changed option does). `fingerprint` is a short hash of it or of
some of its groups.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import fields

from omegaconf import DictConfig, OmegaConf

from augmenter.prompts import PromptTemplate
from augmenter.reviews.evidence import OpinionSettings
from augmenter.storage import content_hash
from augmenter.verification.model import StoredModel

# How a run is executed, shown and judged, not which system it is: changing them (a longer LLM timeout to retry
# failed turns, say) still resumes. {group: keys}; "" is the top level.
RUN_OPTIONS: dict[str, tuple[str, ...]] = {
    "": ("trace", "script", "output", "data_root", "llm_cache", "llm_guard"),
    "eval": ("out_dir", "progress", "restart", "max_failed", "concurrency"),
    "llm": ("timeout", "deadline", "max_retries", "backoff"),
}

# Options added after runs were recorded, with their "off" value: left out while off, so older runs still resume.
ADDED_OPTIONS: dict[str, dict[str, object]] = {
    "consolidator": {
        "review_window": 0,
        "faq_context": 0,
        "_target_": "augmenter.knowledge.KnowledgeConsolidator",
        "opinions_about_by": "question",
        "opinions_praise_about": None,
        "opinions_stance_by": "question",
    },
    "executor": {"unsupported": "supported_part", "fewshot_guard": False, "review_faq_check": None},
}


# Options a node once carried without using them: configs before the consolidator group gave the table-text
# consolidator the snippet consolidator's settings.
UNUSED_OPTIONS = {
    ("consolidator", "augmenter.knowledge.chainer.TableTextConsolidator"): (
        "history_turns",
        "focus_entities",
        "review_window",
        "faq_context",
    )
}


def flat_opinions(node: dict) -> None:
    """The consolidator's `opinions` node as the flat options runs were recorded with (`opinions: true` and
    `opinions_<setting>`; the defaults when off), so that a node and its flat form compare equal. In place."""
    if "opinions" not in node or any(key.startswith("opinions_") for key in node):
        return
    value = node["opinions"]
    settings = value if isinstance(value, dict) else {}
    node["opinions"] = bool(value)
    node.update({f"opinions_{f.name}": settings.get(f.name, f.default) for f in fields(OpinionSettings)})


def normalized(data: dict) -> dict:
    """A config dict (today's or one stored by an earlier version) as it is compared: without run options, the
    opinions node flat (`flat_opinions`), options added since at their off value, or options its node never used.
    In place; applying it twice changes nothing."""
    without_options(data)
    if isinstance(data.get("consolidator"), dict):
        flat_opinions(data["consolidator"])
    for group, options in ADDED_OPTIONS.items():
        for key, off in options.items():
            if isinstance(data.get(group), dict) and data[group].get(key, off) == off:
                data[group].pop(key, None)
    for (group, target), keys in UNUSED_OPTIONS.items():
        if isinstance(data.get(group), dict) and data[group].get("_target_") == target:
            for key in keys:
                data[group].pop(key, None)
    return data


def without_options(data: dict, options: Mapping[str, Sequence[str]] = RUN_OPTIONS) -> dict:
    """`data` (a config as a dict) without `options` ({group: keys}; "" is the top level), in place."""
    for group, keys in options.items():
        node = data.get(group) if group else data
        for key in keys if isinstance(node, dict) else ():
            node.pop(key, None)
    return data


def system_config(cfg: DictConfig, ignore: Mapping[str, Sequence[str]] | None = None) -> dict:
    """The config as the system it describes (see the module's docstring); `ignore` drops more options."""
    data = normalized(OmegaConf.to_container(cfg, resolve=True))
    if ignore:
        without_options(data, ignore)
    utility = data.get("utility") or {}
    claims = any(
        str((node or {}).get("_target_", "")).endswith("ClaimsUtility")
        for node in (utility, utility.get("base"))
        if isinstance(node, dict)
    )  # alone, or under checks
    if not claims:
        data.pop("verifier", None)  # only the claims utility uses a verifier
    prompts = data.get("prompt", {})
    files = {key: prompts.get(key) for key in ("response", "self_ask", "self_critique", "search_query")}
    if claims:  # the claim-splitting and verification prompts (PromptEngine's defaults unless set)
        files.update({key: prompts.get(key, key) for key in ("claims", "verify_claim")})
    data["prompt_files"] = {
        key: content_hash(PromptTemplate.content(name)) for key, name in files.items() if isinstance(name, str)
    }
    model = (data.get("verifier") or {}).get("model")
    if claims and model:  # refitted verifier weights are a different system too
        stored = StoredModel.load(model)
        data["verifier_weights"] = content_hash(json.dumps([list(stored.coef), stored.intercept, stored.threshold]))
    return data


def fingerprint(cfg: DictConfig, groups: Sequence[str] | None = None, length: int = 12) -> str:
    """A short hash of `system_config(cfg)`, or of its `groups` only (with the prompt files when "prompt" is one)."""
    data = system_config(cfg)
    if groups is not None:
        keep = set(groups) | ({"prompt_files"} if "prompt" in groups else set())
        data = {k: v for k, v in data.items() if k in keep}
    return content_hash(json.dumps(data, sort_keys=True, default=str), length=length)
