"""Text from users, knowledge and the model, made safe for the terminal.

Shown text goes into rich `Text` objects (never parsed as markup, so `[/red]` shows literally), after
`clean` has stripped terminal control sequences (ANSI CSI/OSC escapes and other C0/C1 control characters
but newline and tab). Only the display is cleaned: Working Memory, trace and records keep the raw text.
"""

from __future__ import annotations

from rich.text import Text

from augmenter.text import one_line
from augmenter.text import strip_controls as clean  # the display's name for it

__all__ = ["clean", "one_line", "safe"]

Part = str | tuple[str, str]


def safe(*parts: Part) -> Text:
    """One rich Text from plain strings and (string, style) pairs, each cleaned and never read as markup."""
    return Text.assemble(*((clean(p[0]), p[1]) if isinstance(p, tuple) else clean(p) for p in parts))
