"""PDF with pypdf: a page at a time, paragraphs at blank lines (lines hyphenated at their end joined again).
Headings come from the PDF's outline (bookmarks): a bookmark's title found as a line of its page starts a new
section there. The title is the PDF's Title metadata, else its first bookmark, else the file name. An encrypted
PDF is read when it opens with an empty password; a PDF without a text layer (scanned) is Unreadable: augmenter
does no OCR. Spans are in the page's extracted text."""

from __future__ import annotations

import io
import logging
import re

from augmenter.documents.model import Block, Document, MissingLibrary, Unreadable, clean, title_from_name

_HYPHEN = re.compile(r"(\w)-\n(\w)")
_PAGE_NUMBER = re.compile(r"^(page )?\d+( (of|/) \d+)?$", re.IGNORECASE)  # page furniture, left out
_NEEDS_CRYPTOGRAPHY = (
    "encrypted PDF (AES): reading it needs cryptography, which the 'docs' extra brings: pip install 'augmenter[docs]'"
)


def _outline(reader) -> list[tuple[int, tuple[str, ...]]]:
    """(page index, heading path) of each bookmark, in order; [] when the PDF has none or they cannot be read."""
    found: list[tuple[int, tuple[str, ...]]] = []

    def walk(items, path: tuple[str, ...]) -> None:
        last = path
        for item in items:
            if isinstance(item, list):
                walk(item, last)
                continue
            try:
                title, page = clean(str(item.title)), reader.get_destination_page_number(item)
            except Exception:  # a broken bookmark: skipped
                continue
            last = (*path, title)
            if page is not None and page >= 0:
                found.append((page, last))

    try:
        walk(reader.outline, ())
    except Exception:  # a broken outline: no headings
        return []
    return sorted(found, key=lambda item: item[0])


def read_pdf(data: bytes, name: str) -> Document:
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError, PdfReadError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings about odd but readable files are not ours
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unreadable("encrypted PDF: it needs a password")
        pages = list(reader.pages)
    except Unreadable:
        raise
    except DependencyError:  # pypdf decrypts AES (when it opens the file) with the cryptography package
        raise MissingLibrary(_NEEDS_CRYPTOGRAPHY) from None
    except FileNotDecryptedError:
        raise Unreadable("encrypted PDF: it needs a password") from None
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError) as exc:
        raise Unreadable(f"not a readable PDF ({type(exc).__name__}: {clean(str(exc))[:120]})") from None
    outline = _outline(reader)
    title = ""
    try:
        title = clean(str((reader.metadata or {}).get("/Title") or ""))
    except Exception:  # unreadable metadata: the title comes from elsewhere
        pass
    title = title or (outline[0][1][0] if outline else "") or title_from_name(name)
    blocks: list[Block] = []
    notes: list[str] = []
    bad_pages = []
    heading: tuple[str, ...] = ()
    for index, page in enumerate(pages):
        try:
            text = page.extract_text() or ""
        except DependencyError:
            if reader.is_encrypted:  # decrypting a page's streams needs cryptography (AES)
                raise MissingLibrary(_NEEDS_CRYPTOGRAPHY) from None
            bad_pages.append(index + 1)  # e.g. a Brotli-compressed stream: this page only
            continue
        except Exception:  # one broken page does not lose the others
            bad_pages.append(index + 1)
            continue
        text = _HYPHEN.sub(r"\1\2", text.replace("\r\n", "\n"))
        raw_lines = text.split("\n")
        paths = [path[1:] if path[:1] == (title,) else path for p, path in outline if p == index]
        starts = {path[-1]: path for path in paths if path}
        present = {clean(line) for line in raw_lines}
        unseen = [path for path in paths if path and path[-1] not in present]
        if unseen:  # a bookmark whose title is not a line of its page: its section starts with the page
            heading = unseen[-1]
        para_start, lines, position = 0, [], 0
        for line in raw_lines + [""]:
            words = clean(line)
            if _PAGE_NUMBER.match(words) or (words == title and index == 0 and not blocks):
                words = ""  # a page number, or the title atop the first page: not a paragraph of its own
            if not words or words in starts:  # a blank line, or a bookmark's title: the paragraph ends
                if lines:
                    blocks.append(Block(clean(" ".join(lines)), heading, index + 1, para_start, position - 1))
                lines = []
                if words:
                    heading = starts[words]
            else:
                if not lines:
                    para_start = position + len(line) - len(line.lstrip())
                lines.append(line)
            position += len(line) + 1
    if bad_pages:
        notes.append(f"page{'s' * (len(bad_pages) > 1)} {', '.join(map(str, bad_pages[:10]))} could not be read")
    if not blocks and pages:
        raise Unreadable(
            f"no text layer ({len(pages)} page{'s' * (len(pages) > 1)}; a scanned PDF?): "
            "it needs OCR, which augmenter does not do"
        )
    return Document(title, blocks, "pdf", pages=len(pages), notes=notes)
