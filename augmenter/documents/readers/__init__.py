"""One reader per format, chosen by the file's extension: `read_document(name, data)` -> Document, or Unreadable
with the reason. Each reader is a well-kept library's (see the modules); none touches the network. A reader's
library that is not installed is not a fault of the file: `require_readers` says which extra brings it before any
file is read, and a library found missing while reading is MissingLibrary (skipped this time, read again next)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from augmenter.documents.model import Document, MissingLibrary, Unreadable, clean
from augmenter.documents.readers.docx import read_docx
from augmenter.documents.readers.html import read_html
from augmenter.documents.readers.markdown import read_markdown
from augmenter.documents.readers.notebook import read_notebook
from augmenter.documents.readers.pdf import read_pdf
from augmenter.documents.readers.rst import read_rst
from augmenter.documents.readers.text import read_text

READERS: dict[str, Callable[[bytes, str], Document]] = {
    ".md": read_markdown,
    ".markdown": read_markdown,
    ".txt": read_text,
    ".text": read_text,
    ".pdf": read_pdf,
    ".html": read_html,
    ".htm": read_html,
    ".docx": read_docx,
    ".rst": read_rst,
    ".rest": read_rst,
    ".ipynb": read_notebook,
}
_MAGIC = {".pdf": (b"%PDF",), ".docx": (b"PK\x03\x04",)}
# the modules each reader needs (all brought by the 'docs' extra; markdown-it-py by rich, a core dependency, too);
# cryptography is pypdf's for AES-encrypted PDFs, which only reading a PDF tells apart: required for every PDF
MODULES = {
    ".md": ("markdown_it",),
    ".markdown": ("markdown_it",),
    ".pdf": ("pypdf", "cryptography"),
    ".html": ("selectolax",),
    ".htm": ("selectolax",),
    ".docx": ("docx",),
    ".rst": ("docutils",),
    ".rest": ("docutils",),
    ".ipynb": ("markdown_it",),
}


def supported(name: str) -> bool:
    return _suffix(name) in READERS


def _suffix(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:].lower() if dot > name.rfind("/") else ""


def require_readers(names: Iterable[str]) -> None:
    """Raise MissingExtra (one line naming the 'docs' extra) when a library that reading these files needs is not
    installed; nothing is read."""
    from augmenter.extras import missing, require

    names = list(names)
    modules = dict.fromkeys(m for name in names for m in MODULES.get(_suffix(name), ()))
    absent = missing(list(modules))
    if absent:
        needing = [n for n in names if set(MODULES.get(_suffix(n), ())) & set(absent)]
        more = f" and {len(needing) - 1} other file{'s' * (len(needing) > 2)}" if len(needing) > 1 else ""
        require("docs", f"reading {needing[0]}{more}", absent)


def read_document(name: str, data: bytes) -> Document:
    """The document in `data` (the file `name`), or Unreadable: empty, not what its extension says, no text."""
    suffix = _suffix(name)
    if not data.strip():
        raise Unreadable("empty file")
    magic = _MAGIC.get(suffix)
    if magic and not data.lstrip()[:8].startswith(magic):
        kind = {".pdf": "PDF", ".docx": "Word (.docx) file"}[suffix]
        raise Unreadable(f"not a {kind}: its content does not start like one")
    try:
        document = READERS[suffix](data, name)
    except Unreadable:
        raise
    except RecursionError:
        raise Unreadable("nested too deeply to read") from None
    except ImportError as exc:  # a library found missing (or broken) only now: not this file's fault
        module = (getattr(exc, "name", None) or "").partition(".")[0] or "a library that is not installed"
        if module in {m for modules in MODULES.values() for m in modules}:
            raise MissingLibrary(
                f"reading it needs {module}, which the 'docs' extra brings: pip install 'augmenter[docs]'"
            ) from None
        raise MissingLibrary(f"reading it needs {module}, which is not installed") from None
    except Exception as exc:  # a reader's bug or a library's surprise: this file only is skipped
        raise Unreadable(f"could not be read ({type(exc).__name__}: {clean(str(exc))[:120]})") from None
    if not document.blocks:
        raise Unreadable("no text in it")
    return document
