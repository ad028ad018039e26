"""The config groups a command's overrides choose from, read from `configs/` (for `--help`)."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Sequence
from typing import Any

from augmenter.config import config_dir, group_options


def group_defaults(config_name: str) -> dict[str, str]:
    """Each config group of a primary config with the option it picks when not overridden, as Hydra resolves
    its defaults lists (an experiment's or a task's overrides included), in the primary config's order."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(config_dir()), version_base="1.3"):
        choices = compose(config_name=config_name, return_hydra_config=True).hydra.runtime.choices
    return {
        group: option
        for group, option in reversed(choices.items())  # not a group's own nested choice
        if not group.startswith("hydra/") and "@" not in group
    }  # (utility@utility.base: the checks' base)


def groups_help(config_name: str, width: int = 100) -> str:
    """The help epilog: every group with its options (the default starred) and how to override."""
    lines = ["config groups (choose one with group=option; * marks the default):"]
    for group, default in group_defaults(config_name).items():
        options = ", ".join(o + ("*" if o == default else "") for o in group_options(group))
        lines.append(textwrap.fill(options, width, initial_indent=f"  {group:<12} ", subsequent_indent=" " * 15))
    lines += [
        "",
        "overrides: group=option swaps a group, key=value sets any setting (e.g. agent.max_llm_calls=5,",
        "llm.model=my-model); flags and overrides go in any order.",
    ]
    return "\n".join(lines)


def _comments(config_name: str) -> dict[str, str]:
    """{dotted key: its comment} from a primary config's YAML and the primary configs it builds on (chat's), a
    comment continued on the lines below a key joined to it."""
    comments: dict[str, str] = {}
    for name in dict.fromkeys([config_name, "chat"]):
        path, stack, last = config_dir() / f"{name}.yaml", [], None
        for line in path.read_text(encoding="utf-8").splitlines():
            found = re.match(r"^( *)([A-Za-z_]\w*):(.*?)(?:\s+#\s?(.*))?$", line)
            if found:
                indent, key, _, comment = found.groups()
                stack = stack[: len(indent) // 2] + [key]
                last = ".".join(stack)
                if comment and last not in comments:
                    comments[last] = comment.strip()
            elif last and re.match(r"^ +# ", line) and last in comments:
                comments[last] += " " + line.strip().lstrip("# ").strip()
            elif not line.strip().startswith("#"):
                last = None
    return comments


def _flat(prefix: str, value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, dict) and value:
        return [item for key, inner in value.items() for item in _flat(f"{prefix}.{key}", inner)]
    return [(prefix, value)]


def settings_help(config_name: str, nodes: Sequence[str], width: int = 100) -> str:
    """The help block of a command's own settings: each key=default, with its comment from the config file."""
    from omegaconf import OmegaConf

    from augmenter.config import compose

    cfg = OmegaConf.to_container(compose(config_name), resolve=True)
    comments = _comments(config_name)
    lines = ["settings (key=value; the default shown):"]
    for node in nodes:
        for key, value in _flat(node, cfg.get(node)):
            shown = f"  {key}={json.dumps(value) if not isinstance(value, str) else value}"
            wrapped = textwrap.wrap(comments.get(key, ""), width - 38)
            if not wrapped:
                lines.append(shown)
                continue
            lines.append((shown.ljust(38) if len(shown) < 38 else shown + "\n" + " " * 38) + wrapped[0])
            lines += [" " * 38 + more for more in wrapped[1:]]
    return "\n".join(lines)
