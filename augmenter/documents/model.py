"""What a reader makes of a file: a `Document` of text `Block`s, each with its headings, page and character span;
or `Unreadable`, with the one-line reason the file was skipped."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field


class Unreadable(Exception):
    """A file that cannot be indexed; the message is the one-line reason (e.g. "encrypted PDF: needs a password")."""


class MissingLibrary(Unreadable):
    """A file that could be read if a library the 'docs' extra brings were installed (e.g. cryptography for an
    AES-encrypted PDF). The file is skipped this time but not remembered as skipped: the next run reads it again."""


@dataclass
class Block:
    """A paragraph, list item, table row or code block: its text, the headings above it (the title not among them),
    its page (PDF, from 1) and its character span in the document's text as read (for a PDF, the page's text). A
    code block (`code`) keeps its line breaks and indentation; other text has its whitespace collapsed."""

    text: str
    heading: tuple[str, ...] = ()
    page: int | None = None
    start: int = 0
    end: int = 0
    code: bool = False


@dataclass
class Document:
    """A file as read: its title, its blocks in reading order, its page count (PDF) and notes on how it was read
    (e.g. "not UTF-8: read as Windows-1252"), each shown as a warning."""

    title: str
    blocks: list[Block]
    format: str
    pages: int | None = None
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


_MARKUP = re.compile(
    "|".join(
        [
            r"\{\s*[#.:][^{}\n]*\}",  # attribute lists and heading ids: { #anchor }, {: .class }
            r"\{\*.*?\*\}",
            r"\{!.*?!\}",  # include directives: {* docs_src/x.py hl[3] *}, {!> file !}
            r"\{%.*?%\}",
            r"\{\{.*?\}\}",  # template tags: {% alert %}, {{ site.url }}
            r"^[ \t]*/{3,}[ \t]*(?:[\w-]+)?(?:[ \t]*\|[^\n]*)?$",  # block markers: /// tip | Title, ///
            # admonitions: !!! note "Title" (also mid-line: a PDF's text)
            r"!!![ \t]*[\w-]+(?:[ \t]+\"[^\"\n]*\")?[ \t]*",
            r"^[ \t]*\?\?\?\+?[ \t]*[\w-]+(?:[ \t]+\"[^\"\n]*\")?[ \t]*",  # collapsible ones: ??? tip
            r"^[ \t]*-{2}8<-{2}.*$",  # snippets: --8<-- "file.md"
            r"(?<!\S):[a-z][a-z0-9_+-]*:(?![\w:])",  # emoji shortcodes: :rocket:
            # inline HTML (a terminal's colours)
            r"</?(?:b|i|u|em|strong|font|span|div|kbd|sup|sub|br)(?:\s[^<>\n]*)?/?>",
        ]
    ),
    re.MULTILINE,
)


_ENTITY = re.compile(r"&(?:[a-zA-Z]{2,8}|#\d{2,5}|#x[0-9a-fA-F]{2,4});")


_DEAD_LINK = re.compile(r"\[([^\[\]\n]+)\]\(\s*\)")  # [text]() once a template tag was its target


def strip_markup(text: str) -> str:
    """Text with the documentation tools' markup that is no content removed: heading ids and attribute lists,
    include and snippet directives, template tags, admonition and block markers, emoji shortcodes and inline HTML
    tags; HTML entities (`&apos;`) decoded; a link left without its target (`[text]({% page ... %})`) is its text. Line
    breaks are kept; the spaces a removal leaves are collapsed."""
    out = _DEAD_LINK.sub(r"\1", _MARKUP.sub("", text))
    if _ENTITY.search(out):
        out = html.unescape(out)
    if out == text:
        return text
    lines = [
        line[: len(line) - len(line.lstrip())] + " ".join(line.split()) if line.strip() else ""
        for line in out.split("\n")
    ]
    return "\n".join(lines).strip("\n ")


def code_lines(text: str) -> str:
    """A code block's text: its lines with trailing whitespace stripped, the indentation all lines share removed,
    and blank lines at either end dropped (line breaks and inner indentation kept)."""
    lines = [line.rstrip() for line in text.expandtabs(4).splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    indent = min((len(line) - len(line.lstrip()) for line in lines if line), default=0)
    return "\n".join(line[indent:] for line in lines)


class BlockList:
    """Blocks built one after another into one text ("\\n\\n" between blocks), each block's span in that text."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self._length = 0

    def add(self, text: str, heading: tuple[str, ...] = (), page: int | None = None, code: bool = False) -> None:
        text = code_lines(text) if code else clean(text)
        if not text:
            return
        start = self._length + (2 if self._length else 0)
        self.blocks.append(Block(text, heading, page, start, start + len(text), code))
        self._length = start + len(text)


class HeadingPath:
    """The headings above the current point: a heading of level n replaces those of level n and below."""

    def __init__(self) -> None:
        self._levels: list[tuple[int, str]] = []

    def enter(self, level: int, text: str) -> None:
        self._levels = [(n, t) for n, t in self._levels if n < level] + [(level, clean(text))]

    def leave(self, level: int) -> None:
        """The section of `level` has ended: its heading (and those below it) no longer apply."""
        self._levels = [(n, t) for n, t in self._levels if n < level]

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(t for _, t in self._levels if t)
