"""Structure-aware chunks: a chunk never crosses a heading or a page; within a section, whole sentences are packed
up to `words` words, and each chunk after the first repeats the last sentences (at most `overlap` words) of the one
before. A sentence longer than `words` is cut into windows of `words` words that overlap by `overlap`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import groupby
from typing import Optional

from augmenter.documents.model import Block, Document

_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
DEFAULT_WORDS = 200
DEFAULT_OVERLAP = 40


@dataclass
class Chunk:
    """A passage to retrieve and cite: its text, the headings above it, its page, and the span it was cut from."""

    text: str
    heading: tuple[str, ...]
    page: Optional[int]
    start: int
    end: int


@dataclass
class _Piece:  # a sentence (or a window of a long one) of a block
    text: str
    words: int
    block: int


def _pieces(blocks: list[Block], first: int, words: int, overlap: int) -> list[_Piece]:
    out = []
    for n, block in enumerate(blocks, first):
        for sentence in _SENTENCE.split(block.text):
            tokens = sentence.split()
            if len(tokens) <= words:
                if tokens:
                    out.append(_Piece(" ".join(tokens), len(tokens), n))
                continue
            step = max(1, words - overlap)
            for i in range(0, len(tokens), step):
                out.append(_Piece(" ".join(tokens[i:i + words]), len(tokens[i:i + words]), n))
                if i + words >= len(tokens):
                    break
    return out


def _join(pieces: list[_Piece]) -> str:
    text = pieces[0].text
    for before, piece in zip(pieces, pieces[1:]):
        text += ("\n" if piece.block != before.block else " ") + piece.text
    return text


def split_document(document: Document, words: int = DEFAULT_WORDS, overlap: int = DEFAULT_OVERLAP) -> list[Chunk]:
    """The document's chunks in reading order."""
    if words < 1 or not 0 <= overlap < words:
        raise ValueError(f"chunks need words >= 1 and 0 <= overlap < words, got {words} and {overlap}")
    chunks: list[Chunk] = []
    index = 0
    for (heading, page), group in groupby(document.blocks, key=lambda b: (b.heading, b.page)):
        blocks = list(group)
        pieces = _pieces(blocks, index, words, overlap)
        offset, index = index, index + len(blocks)
        i = 0
        while i < len(pieces):
            j, size = i, 0
            while j < len(pieces) and (j == i or size + pieces[j].words <= words):
                size += pieces[j].words
                j += 1
            part = pieces[i:j]
            used = [blocks[p.block - offset] for p in part]
            chunks.append(Chunk(_join(part), heading, page, min(b.start for b in used), max(b.end for b in used)))
            if j >= len(pieces):
                break
            back, kept = j, 0  # the next chunk repeats the last whole sentences that fit in `overlap` words
            while back - 1 > i and kept + pieces[back - 1].words <= overlap:
                back -= 1
                kept += pieces[back].words
            i = back
    return chunks
