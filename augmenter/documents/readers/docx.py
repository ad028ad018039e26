"""Word (.docx) with python-docx: paragraphs and tables in document order; `Heading N` styles give the heading
path, the `Title` style (else the core properties' title, else the first level-1 heading) the title; a table row is
one block ("column: value; ..."). Spans are in the text as extracted (blocks joined by blank lines)."""

from __future__ import annotations

import io
import re
import zipfile

from augmenter.documents.model import BlockList, Document, HeadingPath, Unreadable, clean, title_from_name

_LEVEL = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)


def _style(paragraph) -> str:
    try:
        return paragraph.style.name or "" if paragraph.style is not None else ""
    except (KeyError, AttributeError, ValueError):
        return ""


def read_docx(data: bytes, name: str) -> Document:
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(data))
        items = list(document.iter_inner_content())
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, AttributeError) as exc:
        raise Unreadable(f"not a readable Word file ({type(exc).__name__}: {clean(str(exc))[:120]})") from None
    except Exception as exc:  # lxml's XML errors and the like
        raise Unreadable(f"not a readable Word file ({type(exc).__name__}: {clean(str(exc))[:120]})") from None
    title = ""
    try:
        title = clean(document.core_properties.title or "")
    except Exception:  # broken core properties: the title comes from the text
        pass
    out, headings = BlockList(), HeadingPath()
    for item in items:
        if isinstance(item, Table):
            header: list[str] = []
            for r, row in enumerate(item.rows):
                try:
                    cells = [clean(cell.text) for cell in row.cells]
                except (IndexError, ValueError, AttributeError):  # a malformed table: its rows are skipped
                    continue
                cells = list(dict.fromkeys(cells)) if len(set(cells)) < len(cells) else cells  # merged cells
                if r == 0:
                    header = cells
                    out.add(" | ".join(c for c in cells if c), headings.path)
                else:
                    pairs = (
                        zip(header + [""] * len(cells), cells)
                        if len(header) == len(cells)
                        else (("", c) for c in cells)
                    )
                    out.add("; ".join(f"{h}: {c}" if h else c for h, c in pairs if c), headings.path)
            continue
        text, style = clean(item.text), _style(item)
        if not text:
            continue
        level = _LEVEL.match(style)
        if style.lower() == "title" or (level and level.group(1) == "1" and not title and not out.blocks):
            title = title or text
            if text == title:
                continue
        if level:
            headings.enter(int(level.group(1)), text)
        else:
            out.add(text, headings.path)
    return Document(title or title_from_name(name), out.blocks, "word")
