"""Markdown (.md) with markdown-it-py (CommonMark plus tables): headings give the heading path (the first level-1
heading, or a front-matter `title:`, is the title), and each paragraph, list item, table row and code block is a
block whose span is its lines in the file. Inline markup is dropped (a link keeps its text); raw HTML keeps its
text only; code keeps its line breaks. MkDocs' extensions are read as what they hold: an admonition's or a content
tab's indented body is prose (not code), and heading ids (`{ #anchor }`), `///` block markers, include directives
and emoji shortcodes are dropped."""

from __future__ import annotations

import re
from functools import lru_cache

from augmenter.documents.model import Block, Document, HeadingPath, clean, code_lines, strip_markup, title_from_name
from augmenter.documents.readers.text import decode

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_TITLE = re.compile(r"^title:[ \t]*[\"']?(.+?)[\"']?[ \t]*$", re.MULTILINE)
_TAG = re.compile(r"<[^>]*>")


@lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def _inline(token) -> str:
    """The text of an inline token: text, code and image descriptions; markup and raw HTML tags dropped."""
    parts = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(_inline(child))
    return "".join(parts)


_CONTAINER = re.compile(r"^(?:!!!|\?\?\?\+?|===)[ \t]")  # an admonition or a content tab, its body indented below
_DIRECTIVE = re.compile(r"^[ \t]*(?:/{3,}.*|\{\*.*\*\}|\{!.*!\}|-{2}8<-{2}.*)[ \t]*$")  # block markers, includes


def unwrap(body: str) -> str:
    """MkDocs' extensions to Markdown as plain Markdown, line for line (each line stays on its line number):
    admonitions' and content tabs' marker lines blanked and their indented bodies dedented (CommonMark would read
    them as code), `///` block markers and include directives blanked."""
    lines = body.split("\n")
    inside = False
    for i, line in enumerate(lines):
        if _CONTAINER.match(line) or _DIRECTIVE.match(line):
            lines[i], inside = "", bool(_CONTAINER.match(line))
        elif inside and (line.startswith("    ") or line.startswith("\t") or not line.strip()):
            lines[i] = line[4:] if line.startswith("    ") else line[1:] if line.startswith("\t") else line
        else:
            inside = False
    return "\n".join(lines)


def read_markdown(data: bytes, name: str) -> Document:
    text, note = decode(data)
    title = None
    front = _FRONT_MATTER.match(text)
    body = text
    if front:  # blanked out (same line count), so that line numbers stay those of the file
        found = _TITLE.search(front.group(1))
        title = strip_markup(clean(found.group(1))) if found else None
        body = "\n" * front.group(0).count("\n") + text[front.end() :]
    body = unwrap(body)
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)] + [len(text)]

    def span(lines) -> tuple[int, int]:
        start = line_starts[min(lines[0], len(line_starts) - 1)]
        end = line_starts[min(lines[1], len(line_starts) - 1)]
        while end > start and text[end - 1].isspace():
            end -= 1
        return start, end

    blocks: list[Block] = []
    headings = HeadingPath()
    tokens = _parser().parse(body)
    header: list[str] = []  # the current table's column names
    row: list[str] = []
    row_lines = None
    in_head = False
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            words = strip_markup(clean(_inline(tokens[i + 1])))
            level = int(tok.tag[1])
            if level == 1 and title is None and not blocks:
                title = words
                continue
            headings.enter(level, words)
        elif tok.type == "inline" and tokens[i - 1].type in ("paragraph_open",):
            start, end = span(tokens[i - 1].map or tok.map or (0, 0))
            _add(blocks, _inline(tok), headings.path, start, end)
        elif tok.type in ("fence", "code_block"):
            start, end = span(tok.map or (0, 0))
            _add(blocks, tok.content, headings.path, start, end, code=True)
        elif tok.type == "html_block":
            start, end = span(tok.map or (0, 0))
            _add(blocks, _TAG.sub(" ", tok.content), headings.path, start, end)
        elif tok.type == "thead_open":
            in_head, header = True, []
        elif tok.type == "thead_close":
            in_head = False
        elif tok.type == "tr_open":
            row, row_lines = [], tok.map
        elif tok.type == "inline" and tokens[i - 1].type in ("th_open", "td_open"):
            (header if in_head else row).append(clean(_inline(tok)))
        elif tok.type == "tr_close" and not in_head:
            cells = [f"{h}: {c}" if h else c for h, c in zip(header + [""] * len(row), row) if c]
            start, end = span(row_lines or (0, 0))
            _add(blocks, "; ".join(cells), headings.path, start, end)
    notes = [note] if note else []
    return Document(title or title_from_name(name), blocks, "markdown", notes=notes)


def _add(blocks: list[Block], text: str, heading: tuple[str, ...], start: int, end: int, code: bool = False) -> None:
    text = code_lines(text) if code else clean(text)
    if text:
        blocks.append(Block(text, heading, None, start, max(start, end), code))
