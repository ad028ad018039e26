"""HTML (.html, .htm) with selectolax (the Lexbor parser): read as it is on disk, nothing fetched (no scripts run,
no remote resources). The title is `<title>` (else the first `<h1>`); headings give the heading path; each
paragraph, list item, table row and other block element is a block (a `<pre>` one with its line breaks).
Scripts, styles, navigation, forms and hidden elements are dropped. Spans are in the text as extracted (blocks
joined by blank lines)."""

from __future__ import annotations

import re

from augmenter.documents.model import BlockList, Document, HeadingPath, clean, title_from_name
from augmenter.documents.readers.text import decode

DROP = {
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "math",
    "iframe",
    "object",
    "embed",
    "canvas",
    "nav",
    "form",
    "select",
    "button",
    "head",
    "-comment",
    "video",
    "audio",
    "map",
}
BLOCK = {
    "p",
    "div",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "aside",
    "li",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "pre",
    "blockquote",
    "figure",
    "figcaption",
    "table",
    "thead",
    "tbody",
    "tfoot",
    "tr",
    "caption",
    "address",
    "details",
    "summary",
    "hr",
    "body",
    "html",
    "fieldset",
    "legend",
    "center",
}
CELL = {"td", "th"}
HEADING = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9_-]+)", re.IGNORECASE)


def _hidden(node) -> bool:
    attrs = node.attributes
    style = (attrs.get("style") or "").replace(" ", "").lower()
    return "hidden" in attrs or attrs.get("aria-hidden") == "true" or "display:none" in style


def read_html(data: bytes, name: str) -> Document:
    from selectolax.lexbor import LexborHTMLParser

    declared = _CHARSET.search(data[:4096])
    text, note = decode(data, declared.group(1).decode("ascii").lower() if declared else None)
    tree = LexborHTMLParser(text)
    title_node = tree.css_first("title")
    title = clean(title_node.text()) if title_node is not None else ""
    out, headings = BlockList(), HeadingPath()
    buffer: list[str] = []
    root = tree.body or tree.root
    if root is None:
        return Document(title or title_from_name(name), [], "html", notes=[note] if note else [])

    def flush() -> None:
        if buffer:
            out.add(clean("".join(buffer)).strip(" |"), headings.path)
            buffer.clear()

    # an explicit stack instead of recursion: deeply nested pages do not hit Python's recursion limit
    stack: list = [("enter", root)]
    while stack:
        action, node = stack.pop()
        if action == "exit":
            if node.tag in CELL:
                buffer.append(" | ")
            elif node.tag in BLOCK:
                flush()
            continue
        tag = node.tag
        if tag == "-text":
            buffer.append(node.text(deep=False) or "")
            continue
        if tag in DROP or _hidden(node):
            continue
        if tag in HEADING:
            flush()
            words = clean(node.text(separator=" "))
            if words and not title and HEADING[tag] == 1:
                title = words
            elif words and words != title:
                headings.enter(HEADING[tag], words)
            continue
        if tag == "pre":  # code: its line breaks kept
            flush()
            out.add(node.text(deep=True, separator=""), headings.path, code=True)
            continue
        if tag == "br":
            buffer.append(" ")
            continue
        if tag == "img":
            buffer.append(" " + (node.attributes.get("alt") or "") + " ")
            continue
        if tag in BLOCK:
            flush()
        stack.append(("exit", node))
        stack.extend(("enter", child) for child in reversed(list(node.iter(include_text=True))))
    flush()
    return Document(title or title_from_name(name), out.blocks, "html", notes=[note] if note else [])
