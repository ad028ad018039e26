"""Structure-aware chunks: a chunk never crosses a heading or a page; within a section, whole sentences are packed
up to `words` words, and each chunk after the first repeats the last sentences (at most `overlap` words) of the one
before, as long as the chunk still brings a sentence of its own. A sentence longer than `words` is cut into windows
of `words` words that overlap by `overlap`.

Each chunk's (start, end) are its own span in the text the blocks' spans refer to (the file's text for .txt and
.md, the page's extracted text for a PDF, the blocks' texts joined by blank lines for HTML and Word): from the first
character of its first word to the last character of its last word, so that a window cut from a long paragraph has
its own offsets, not the paragraph's. Where the chunk's first (last) word is its block's first (last) word, the
span starts (ends) where the block's does. Chunk texts have their whitespace collapsed (as the blocks' texts do), so
the span reproduces the chunk's text up to whitespace: `" ".join(text[start:end].split()) == " ".join(chunk.text
.split())`, for a block whose text is its span with the whitespace collapsed (plain text, PDF, HTML and Word
paragraphs; a Markdown paragraph without inline markup). Offsets inside a block are placed exactly when
`split_document` is given the text (`text=`); without it they are the block's start plus the word's offset in the
block's text, which is exact when the block's span holds its text verbatim (HTML, Word, a PDF paragraph whose
words are one space apart). In a Markdown block whose markup was dropped (links, emphasis, table rows, whose cells
are labelled with their column's name) each word is looked up in the block's lines in order, a best effort."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import groupby

from augmenter.documents.model import Block, Document

_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\Z")  # a word that ends a sentence ...
_SENTENCE_START = re.compile(r"[\"'(\[]?[A-Z0-9]")  # ... when the next one starts one
_WORD = re.compile(r"\S+")
_CORE = re.compile(r"\w+")
DEFAULT_WORDS = 200
DEFAULT_OVERLAP = 40
Source = str | Mapping[int, str] | None


@dataclass
class Chunk:
    """A passage to retrieve and cite: its text, the headings above it, its page, and its own span (see the module
    docstring) in the text the document's block spans refer to."""

    text: str
    heading: tuple[str, ...]
    page: int | None
    start: int
    end: int


@dataclass
class _Piece:  # a sentence (or a window of a long one, or lines of code) of a block: its words first..last
    text: str
    words: int
    block: int
    first: int
    last: int
    code: bool = False


def _pieces(
    numbered: list[tuple[int, Block]], words: int, overlap: int, spans: dict[int, list[tuple[int, int]]]
) -> list[_Piece]:
    out = []
    step = max(1, words - overlap)
    for n, block in numbered:
        spans[n] = [m.span() for m in _WORD.finditer(block.text)]
        tokens = [block.text[a:b] for a, b in spans[n]]
        if block.code:
            out += _code_pieces(n, block.text, words)
            continue
        ends = [
            k + 1
            for k in range(len(tokens) - 1)
            if _SENTENCE_END.search(tokens[k]) and _SENTENCE_START.match(tokens[k + 1])
        ]
        for a, b in zip([0, *ends], [*ends, len(tokens)]):
            if b - a <= words:
                if b > a:
                    out.append(_Piece(" ".join(tokens[a:b]), b - a, n, a, b - 1))
                continue
            for i in range(a, b, step):
                last = min(i + words, b)
                out.append(_Piece(" ".join(tokens[i:last]), last - i, n, i, last - 1))
                if last >= b:
                    break
    return out


def _code_pieces(n: int, text: str, words: int) -> list[_Piece]:
    """A code block as pieces of whole lines (line breaks kept), each at most `words` words unless one line is
    longer: the whole block when it fits."""
    out: list[_Piece] = []
    lines: list[str] = []
    first = count = 0
    for line in text.split("\n"):
        size = len(_WORD.findall(line))
        if lines and count + size > words:
            out.append(_Piece("\n".join(lines), count, n, first, first + count - 1, True))
            first, lines, count = first + count, [], 0
        lines.append(line)
        count += size
    if count:
        out.append(_Piece("\n".join(lines).strip("\n"), count, n, first, first + count - 1, True))
    return out


def _join(pieces: list[_Piece]) -> str:
    text = pieces[0].text
    for before, piece in zip(pieces, pieces[1:]):
        apart = piece.block != before.block or piece.code or before.code
        text += ("\n" if apart else " ") + piece.text
    return text


def _align(words: list[str], source: str, offset: int) -> list[tuple[int, int]]:
    """Each word's (start, end) in `source` (a block's span, which starts at `offset`): the source's own words when
    they are the same words, else each word (or its first and last runs of letters and digits) looked up in order;
    a word not found is placed, empty, where the one before ends."""
    found = list(_WORD.finditer(source))
    if [m.group() for m in found] == words:
        return [(offset + m.start(), offset + m.end()) for m in found]
    out, position = [], 0
    for word in words:
        hit = re.compile(rf"(?<!\w){re.escape(word)}(?!\w)").search(source, position)
        if hit:
            span = hit.span()
        else:
            cores = _CORE.findall(word)
            first = re.compile(rf"(?<!\w){re.escape(cores[0])}(?!\w)").search(source, position) if cores else None
            if first is None:
                span = (position, position)
            else:
                last = (
                    re.compile(rf"(?<!\w){re.escape(cores[-1])}(?!\w)").search(source, first.end())
                    if len(cores) > 1
                    else None
                )
                span = (first.start(), (last or first).end())
        out.append((offset + span[0], offset + span[1]))
        position = span[1]
    return out


class _Spans:
    """Where a block's words are in the text its span refers to (computed for a block when first needed)."""

    def __init__(self, blocks: list[Block], text: Source) -> None:
        self.blocks, self.text = blocks, text
        self.words: dict[int, list[tuple[int, int]]] = {}  # each block's words' spans in its own text
        self._placed: dict[int, list[tuple[int, int]]] = {}

    def _place(self, n: int) -> list[tuple[int, int]]:
        if n not in self._placed:
            block = self.blocks[n]
            source = self.text.get(block.page) if isinstance(self.text, Mapping) else self.text
            if source is not None and 0 <= block.start <= block.end <= len(source):
                placed = _align(
                    [block.text[a:b] for a, b in self.words[n]], source[block.start : block.end], block.start
                )
            else:
                placed = [(block.start + a, block.start + b) for a, b in self.words[n]]
            self._placed[n] = [
                (min(max(a, block.start), block.end), min(max(b, block.start), block.end)) for a, b in placed
            ]
        return self._placed[n]

    def start(self, n: int, word: int) -> int:
        return self.blocks[n].start if word == 0 else self._place(n)[word][0]

    def end(self, n: int, word: int) -> int:
        return self.blocks[n].end if word == len(self.words[n]) - 1 else self._place(n)[word][1]


def split_document(
    document: Document, words: int = DEFAULT_WORDS, overlap: int = DEFAULT_OVERLAP, text: Source = None
) -> list[Chunk]:
    """The document's chunks in reading order. `text`, when given, is what the blocks' spans refer to: the file's
    text (a str) for a document without pages, or each page's text by page number; it places each chunk's span
    exactly (see the module docstring)."""
    if words < 1 or not 0 <= overlap < words:
        raise ValueError(f"chunks need words >= 1 and 0 <= overlap < words, got {words} and {overlap}")
    chunks: list[Chunk] = []
    spans = _Spans(document.blocks, text)
    for (heading, page), group in groupby(enumerate(document.blocks), key=lambda nb: (nb[1].heading, nb[1].page)):
        pieces = _pieces(list(group), words, overlap, spans.words)
        i = 0
        while i < len(pieces):
            j, size = i, 0
            while j < len(pieces) and (j == i or size + pieces[j].words <= words):
                size += pieces[j].words
                j += 1
            first, last = pieces[i], pieces[j - 1]
            chunks.append(
                Chunk(
                    _join(pieces[i:j]),
                    heading,
                    page,
                    spans.start(first.block, first.first),
                    spans.end(last.block, last.last),
                )
            )
            if j >= len(pieces):
                break
            back, kept = j, 0  # the next chunk repeats the last whole sentences that fit in `overlap` words,
            while (
                back - 1 > i
                and kept + pieces[back - 1].words <= overlap  # and still brings one of its own
                and kept + pieces[back - 1].words + pieces[j].words <= words
            ):
                back -= 1
                kept += pieces[back].words
            i = back
    return chunks
