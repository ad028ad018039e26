"""Plain text (.txt): decoded as UTF-8 (UTF-16 with a byte-order mark; Windows-1252 as the fallback, noted), split
into paragraphs at blank lines. Also the decoding every text format (Markdown, HTML) uses."""

from __future__ import annotations

import codecs
import re

from augmenter.documents.model import Block, Document, Unreadable, clean, title_from_name

_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_PARAGRAPH = re.compile(r"(?:[^\n]|\n(?![ \t\r]*(?:\n|\Z)))+")  # a run of lines without a blank one (CRLF too)


def decode(data: bytes, declared: str | None = None) -> tuple[str, str | None]:
    """(text, a note when it was not UTF-8). Binary content (NUL or many control bytes) is Unreadable."""
    for bom, codec in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            try:
                return data.decode(codec), None
            except UnicodeDecodeError:
                raise Unreadable(f"not valid {codec.upper()} text despite its byte-order mark") from None
    head = data[:65536]
    if b"\x00" in head or len(_CONTROL.findall(head.decode("latin-1"))) > max(8, len(head) // 20):
        raise Unreadable("binary content, not text")
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        bad, at = data[exc.start], exc.start
    for codec in ([declared] if declared else []) + ["cp1252", "latin-1"]:
        try:
            text = data.decode(codec)
        except (UnicodeDecodeError, LookupError):
            continue
        name = {"cp1252": "Windows-1252", "latin-1": "Latin-1"}.get(codec, codec)
        return text, f"not UTF-8 (byte 0x{bad:02x} at offset {at}): read as {name}"
    raise Unreadable("not text in any encoding augmenter reads")  # latin-1 decodes anything: never reached


def paragraphs(text: str, offset: int = 0) -> list[tuple[int, int]]:
    """The (start, end) of each paragraph of `text` (separated by blank lines), shifted by `offset`."""
    spans = []
    for m in _PARAGRAPH.finditer(text):
        chunk = m.group()
        if chunk.strip():
            start = m.start() + len(chunk) - len(chunk.lstrip())
            spans.append((start + offset, m.start() + len(chunk.rstrip()) + offset))
    return spans


def read_text(data: bytes, name: str) -> Document:
    text, note = decode(data)
    blocks = [Block(clean(text[a:b]), (), None, a, b) for a, b in paragraphs(text)]
    return Document(title_from_name(name), [b for b in blocks if b.text], "text", notes=[note] if note else [])
