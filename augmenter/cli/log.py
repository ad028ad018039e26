"""Standard `logging` for the console script: augmenter's loggers at WARNING, DEBUG with -v, ERROR with -q."""

from __future__ import annotations

import logging
import sys

LEVELS = {-1: logging.ERROR, 0: logging.WARNING, 1: logging.DEBUG}


class StderrHandler(logging.StreamHandler):
    """Writes to whatever `sys.stderr` is when a record comes (tests and tools replace it). augmenter's records
    are filtered by their loggers' level; other libraries' below `floor` are dropped, as `logging.lastResort` does."""

    floor = logging.WARNING

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _):
        pass

    def filter(self, record: logging.LogRecord) -> bool:
        ours = record.name == "augmenter" or record.name.startswith("augmenter.")
        return (ours or record.levelno >= self.floor) and bool(super().filter(record))


def setup_logging(verbosity: int = 0) -> None:
    """One stderr handler on the root logger (added once), the level of the `augmenter` loggers from `verbosity`
    (-1: -q, 0, 1: -v; -q silences other libraries' warnings too), and secrets masked in every line."""
    from augmenter.redact import redact_logging

    root = logging.getLogger()
    handler = next((h for h in root.handlers if isinstance(h, StderrHandler)), None)
    if handler is None:
        handler = StderrHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    handler.floor = max(logging.WARNING, LEVELS[verbosity])
    logging.getLogger("augmenter").setLevel(LEVELS[verbosity])
    redact_logging()
