"""The config groups a command's overrides choose from, read from `configs/` (for `--help`)."""

from __future__ import annotations

import textwrap

from augmenter.config import config_dir, group_options


def group_defaults(config_name: str) -> dict[str, str]:
    """Each config group of a primary config with the option it picks when not overridden, as Hydra resolves
    its defaults lists (an experiment's or a task's overrides included), in the primary config's order."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(config_dir()), version_base="1.3"):
        choices = compose(config_name=config_name, return_hydra_config=True).hydra.runtime.choices
    return {group: option for group, option in reversed(choices.items()) if not group.startswith("hydra/")}


def groups_help(config_name: str, width: int = 100) -> str:
    """The help epilog: every group with its options (the default starred) and how to override."""
    lines = ["config groups (choose one with group=option; * marks the default):"]
    for group, default in group_defaults(config_name).items():
        options = ", ".join(o + ("*" if o == default else "") for o in group_options(group))
        lines.append(textwrap.fill(options, width, initial_indent=f"  {group:<12} ", subsequent_indent=" " * 15))
    lines += ["", "overrides: group=option swaps a group, key=value sets any setting (e.g. agent.max_llm_calls=5,",
              "llm.model=my-model); flags and overrides go in any order."]
    return "\n".join(lines)
