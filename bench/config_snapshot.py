"""Every composed config as one JSON file, so that a refactor can show it changed no experiment's settings.

    python bench/config_snapshot.py /tmp/before.json     # on the old commit
    python bench/config_snapshot.py /tmp/after.json      # on the new one
    python bench/config_snapshot.py --compare /tmp/before.json /tmp/after.json

Composes each primary config (chat, eval, serve, converse, judge, train) as it is, `eval` with every experiment of
configs/experiment/ and `chat` with every task, resolved (what `augmenter ... --cfg job` prints, interpolations
filled in). `--compare` prints each key whose value differs (or that one side lacks) and exits 1 if any does.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from omegaconf import OmegaConf

from augmenter.config import compose, config_dir, group_options
from augmenter.errors import AugmenterError

PRIMARY = ("chat", "eval", "serve", "converse", "judge", "train")


def cases() -> dict[str, tuple[str, list[str]]]:
    """name -> (primary config, overrides)."""
    out = {name: (name, []) for name in PRIMARY if (config_dir() / f"{name}.yaml").is_file()}
    out.update({f"eval experiment={e}": ("eval", [f"experiment={e}"]) for e in group_options("experiment")})
    out.update({f"chat task={t}": ("chat", [f"task={t}"]) for t in group_options("task")})
    return out


def snapshot() -> dict[str, object]:
    found: dict[str, object] = {}
    for name, (config, overrides) in cases().items():
        try:
            found[name] = OmegaConf.to_container(compose(config, overrides), resolve=True)
        except AugmenterError as exc:  # recorded: a config that stops composing is a difference too
            found[name] = {"error": str(exc)}
    return found


def differences(before, after, path: str = "") -> list[str]:
    if isinstance(before, dict) and isinstance(after, dict):
        return [
            d
            for key in sorted(set(before) | set(after), key=str)
            for d in (
                differences(
                    before.get(key, "<absent>"), after.get(key, "<absent>"), f"{path}.{key}" if path else str(key)
                )
            )
        ]
    return [] if before == after else [f"{path}: {before!r} -> {after!r}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", help="the JSON file to write; with --compare, the two to compare")
    parser.add_argument("--compare", action="store_true")
    args = parser.parse_args()
    if not args.compare:
        Path(args.paths[0]).write_text(json.dumps(snapshot(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return 0
    before, after = (json.loads(Path(p).read_text(encoding="utf-8")) for p in args.paths[:2])
    found = differences(before, after)
    print("\n".join(found) if found else f"{len(before)} and {len(after)} configs: identical")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
