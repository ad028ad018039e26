"""Jupyter notebooks (.ipynb): the notebook's JSON read with the standard library; its Markdown cells as Markdown and
its code cells as code blocks, in order, read as one Markdown text (`read_markdown`): spans are in that text.
Outputs are left out (they are results, not documentation)."""

from __future__ import annotations

import json

from augmenter.documents.model import Document, Unreadable
from augmenter.documents.readers.markdown import read_markdown
from augmenter.documents.readers.text import decode


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def read_notebook(data: bytes, name: str) -> Document:
    text, _ = decode(data)
    try:
        notebook = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Unreadable(f"not a notebook: invalid JSON at line {exc.lineno}, column {exc.colno}") from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise Unreadable("not a notebook: no list of cells")
    parts = []
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        source = _source(cell).strip("\n")
        if not source.strip():
            continue
        if cell.get("cell_type") == "markdown":
            parts.append(source)
        elif cell.get("cell_type") == "code":
            fence = "````" if "```" in source else "```"
            parts.append(f"{fence}\n{source}\n{fence}")
    document = read_markdown("\n\n".join(parts).encode("utf-8"), name)
    document.format = "notebook"
    return document
