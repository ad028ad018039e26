"""Text from users, knowledge and the model, made safe for the terminal.

Shown text goes into rich `Text` objects (never parsed as markup, so `[/red]` shows literally), after
`clean` has stripped terminal control sequences (ANSI CSI/OSC escapes and other C0/C1 control characters
but newline and tab). Only the display is cleaned: Working Memory, trace and records keep the raw text.
"""

from __future__ import annotations

import re
from typing import Any, Union

from rich.text import Text

from augmenter.redact import redact

_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"                 # CSI: colours, cursor moves, erases
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC (titles, hyperlinks), DCS, SOS, PM, APC strings
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"            # other escape sequences (and a lone ESC)
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"           # any other C0 or C1 control character but \t and \n
)

Part = Union[str, tuple[str, str]]


def clean(text: Any) -> str:
    """`text` as a string without terminal control sequences."""
    return _CONTROL.sub("", "" if text is None else str(text))


def safe(*parts: Part) -> Text:
    """One rich Text from plain strings and (string, style) pairs, each cleaned and never read as markup."""
    return Text.assemble(*((clean(p[0]), p[1]) if isinstance(p, tuple) else clean(p) for p in parts))


def one_line(message: Any) -> str:
    """An error message fit for one terminal line: secrets masked, control sequences and line breaks removed."""
    return " ".join(clean(redact(str(message))).split())
