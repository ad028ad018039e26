"""Resuming a run only with the configuration its records were made with (`<run dir>/config.json`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from augmenter.errors import ConfigError
from augmenter.storage import write_atomic


def check_config(
    directory: Path,
    records: Path,
    fingerprint: dict,
    restart: bool,
    hint: str,
    stored_as_today: Callable[[dict], dict] | None = None,
) -> None:
    """Refuse `records` made with another `fingerprint` than the one in `directory/config.json` (ConfigError naming
    the keys that differ, and `hint`: how to start over); `restart` deletes them instead. Then store `fingerprint`.
    `stored_as_today` reads a fingerprint stored by an earlier version as today's (e.g. `fingerprint.normalized`)."""
    stored = directory / "config.json"
    if restart:
        records.unlink(missing_ok=True)
    elif records.exists() and stored.exists():
        try:
            before = json.loads(stored.read_bytes())
        except (OSError, ValueError, RecursionError):
            before = None
        if not isinstance(before, dict):
            raise ConfigError(
                f"{stored} is unreadable: delete it to resume these records with the current configuration, or {hint}"
            )
        if stored_as_today is not None:
            before = stored_as_today(before)
        if before != fingerprint:
            changed = sorted(k for k in set(before) | set(fingerprint) if before.get(k) != fingerprint.get(k))
            raise ConfigError(
                f"{directory} holds records of a different configuration (differs in: {', '.join(changed)}); {hint}"
            )
    directory.mkdir(parents=True, exist_ok=True)
    write_atomic(stored, json.dumps(fingerprint, indent=1))
