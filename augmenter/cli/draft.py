"""`augmenter chat` shows the draft as the model writes it, marked as being checked, then the checked answer."""

from __future__ import annotations

from typing import Any

from augmenter.cli.safe_text import safe
from augmenter.memory import Action, WorkingMemory


class DraftPrinter:
    """An agent callback (see `Agent`): `on_text` prints each response call's reply as it streams in, after a
    "draft (checking...)>" label (a revision gets its own line); the spinner comes back while the draft is checked."""

    def __init__(self, console: Any):
        self.console = console
        self.status: Any | None = None  # the turn's rich Status (its spinner), while it spins
        self.held: Any | None = None  # the same Status, stopped while a draft prints
        self.candidate: int | None = None
        self.open = False  # a draft line is being printed

    def begin(self, status: Any = None) -> None:
        """A new turn; `status` is its spinner, stopped while a draft prints."""
        self.status, self.held, self.candidate, self.open = status, None, None, False

    def on_text(self, mem: WorkingMemory, text: str) -> None:
        if self.status is not None:
            self.status.stop()
            self.held, self.status = self.status, None
        if self.candidate != len(mem.o):
            self._close()
            self.candidate = len(mem.o)
            label = "draft (checking...)> " if not mem.o else f"revision {len(mem.o)} (checking...)> "
            self.console.print(safe((label, "dim yellow")), end="")
            self.open = True
        self.console.print(safe((text, "dim")), end="", soft_wrap=True)

    def __call__(self, mem: WorkingMemory, record: Any) -> None:
        if record.action == Action.CALL_LLM and self.open:
            self._close()
            if self.held is not None:  # the spinner again while the draft is checked
                self.held.update("checking...")
                self.held.start()
                self.status, self.held = self.held, None

    def end(self) -> None:
        """The turn is over: close an unfinished draft line."""
        self._close()
        self.status = self.held = None

    def _close(self) -> None:
        if self.open:
            self.console.print()
            self.open = False
