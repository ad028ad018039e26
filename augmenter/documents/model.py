"""What a reader makes of a file: a `Document` of text `Block`s, each with its headings, page and character span;
or `Unreadable`, with the one-line reason the file was skipped."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional


class Unreadable(Exception):
    """A file that cannot be indexed; the message is the one-line reason (e.g. "encrypted PDF: needs a password")."""


class MissingLibrary(Unreadable):
    """A file that could be read if a library the 'docs' extra brings were installed (e.g. cryptography for an
    AES-encrypted PDF). The file is skipped this time but not remembered as skipped: the next run reads it again."""


@dataclass
class Block:
    """A paragraph, list item, table row or code block: its text, the headings above it (the title not among them),
    its page (PDF, from 1) and its character span in the document's text as read (for a PDF, the page's text)."""

    text: str
    heading: tuple[str, ...] = ()
    page: Optional[int] = None
    start: int = 0
    end: int = 0


@dataclass
class Document:
    """A file as read: its title, its blocks in reading order, its page count (PDF) and notes on how it was read
    (e.g. "not UTF-8: read as Windows-1252"), each shown as a warning."""

    title: str
    blocks: list[Block]
    format: str
    pages: Optional[int] = None
    notes: list[str] = field(default_factory=list)

    @property
    def words(self) -> int:
        return sum(len(b.text.split()) for b in self.blocks)


def title_from_name(name: str) -> str:
    """A title from a file name: `remote-work_policy.md` -> `Remote work policy`."""
    stem = name.rsplit("/", 1)[-1]
    stem = stem.rsplit(".", 1)[0] if "." in stem.lstrip(".") else stem
    words = re.sub(r"[-_.]+", " ", stem).strip()
    return (words[:1].upper() + words[1:]) if words else name


def clean(text: str) -> str:
    """Whitespace runs collapsed to one space, ends stripped."""
    return " ".join(text.split())


class BlockList:
    """Blocks built one after another into one text ("\\n\\n" between blocks), each block's span in that text."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self._length = 0

    def add(self, text: str, heading: tuple[str, ...] = (), page: Optional[int] = None) -> None:
        text = clean(text)
        if not text:
            return
        start = self._length + (2 if self._length else 0)
        self.blocks.append(Block(text, heading, page, start, start + len(text)))
        self._length = start + len(text)


class HeadingPath:
    """The headings above the current point: a heading of level n replaces those of level n and below."""

    def __init__(self) -> None:
        self._levels: list[tuple[int, str]] = []

    def enter(self, level: int, text: str) -> None:
        self._levels = [(n, t) for n, t in self._levels if n < level] + [(level, clean(text))]

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(t for _, t in self._levels if t)
