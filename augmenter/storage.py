"""File helpers shared by the whole library: atomic writes, tolerant JSONL reading, content hashing."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from augmenter.errors import InputError


@contextmanager
def atomic_open(path: str | Path, mode: str = "w") -> Iterator[IO]:
    """A file to write `path` through ("w" text in UTF-8, or "wb"): a temp file beside it, synced and renamed over
    `path` when the block ends, removed if it raises, so that a crash or a reader never sees half a file."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, mode.replace("w", "x"), encoding=None if "b" in mode else "utf-8") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def make_dir(path: str | Path, what: str) -> Path:
    """Create folder `path` (and its parents) for `what` (e.g. "eval.out_dir"); InputError naming the file that is
    in the way, or why it cannot be created."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), None)
        why = f"{blocker} is a file, not a folder" if blocker else f"cannot create it ({exc.strerror or exc})"
        raise InputError(f"{what}: {path}: {why}") from None
    return path


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write a whole file atomically (see `atomic_open`): text as UTF-8, or bytes."""
    with atomic_open(path, "wb" if isinstance(data, bytes) else "w") as handle:
        handle.write(data)


def read_jsonl(path: str | Path, on_bad: Callable[[int, str], None]) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each line of `path` that holds a JSON object, blank lines skipped. For any other
    line (not UTF-8, not JSON, nested too deeply, not an object) `on_bad(line number, why)` is called: it raises to
    stop reading, or returns to skip the line. Lines end at "\\n" only, as JSON Lines says."""
    try:
        source = open(path, "rb")
    except IsADirectoryError:
        raise InputError(f"{path} is a folder, not a JSON Lines file") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    with source:
        for n, raw in enumerate(source, 1):
            try:
                text = raw.decode("utf-8")
                if not text.strip():
                    continue
                row = json.loads(text)
            except UnicodeDecodeError as exc:
                why = f"not UTF-8 text ({exc.reason} at byte {exc.start})"
            except json.JSONDecodeError as exc:
                why = f"not valid JSON: {json_error(exc, n)}"
            except RecursionError:
                why = "JSON nested too deeply"
            else:
                if isinstance(row, dict):
                    yield n, row
                    continue
                why = "expected a JSON object"
            on_bad(n, why)


_JSON_HINTS = {
    "Invalid control character": "a raw line break or tab inside a string: write it as \\n or \\t",
    "Unterminated string": "a string runs to the end of the line: a raw line break inside it?",
}


def json_error(exc: json.JSONDecodeError, line: int | None = None) -> str:
    """Where and why a text is not valid JSON, whole: "line L, column C: <message>" (`line`: the text's line in
    its file, for JSON Lines, where each line is parsed alone)."""
    message = exc.msg.removesuffix(" starting at").removesuffix(" at")  # the position is given below
    hint = next((f" ({why})" for start, why in _JSON_HINTS.items() if message.startswith(start)), "")
    return f"line {exc.lineno if line is None else line}, column {exc.colno}: {message}{hint}"


def content_hash(data: str | bytes | Iterable[str], length: int = 16) -> str:
    """The first `length` hex digits of a sha256: of `data` (a text as UTF-8, or bytes), or of a sequence of texts,
    each followed by a NUL byte (so that ["ab"] and ["a", "b"] differ)."""
    digest = hashlib.sha256()
    if isinstance(data, (str, bytes)):
        digest.update(data.encode("utf-8") if isinstance(data, str) else data)
    else:
        for text in data:
            digest.update(text.encode("utf-8") + b"\x00")
    return digest.hexdigest()[:length]
