"""Where augmenter keeps what it writes: assembled models, the LLM cache, the demo knowledge base."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """`$AUGMENTER_CACHE`, else `$XDG_CACHE_HOME/augmenter`, else `~/.cache/augmenter`."""
    if os.environ.get("AUGMENTER_CACHE"):
        return Path(os.environ["AUGMENTER_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "augmenter"
