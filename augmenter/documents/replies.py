"""The replies sent from documents: the direct answer, then the passage it rests on, quoted whole, with the file and
section (or page) it comes from; or, when no draft may be sent, the passage that answers in its own words; or a
plain statement that the documents do not answer, with the closest passage found."""

from __future__ import annotations

import re
from typing import Optional

from augmenter.memory import ClaimCheck, EvidenceRef, Snippet, Verdict

NOT_FOUND = "I could not find the answer to that in the documents."
_MARKDOWN = [(re.compile(r"\*\*(.+?)\*\*|__(.+?)__"), r"\1\2"), (re.compile(r"(?m)^\s{0,3}#{1,6}\s+"), ""),
             (re.compile(r"(?m)^\s*```\w*\s*$\n?"), ""), (re.compile(r"`([^`\n]+)`"), r"\1"),
             (re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]"), ""), (re.compile(r"^\s*(?:Answer|A)\s*:\s*", re.I), "")]
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9`])")


def plain(draft: str) -> str:
    """A draft as chat text: Markdown emphasis, headings, code fences and backticks, and passage numbers such as
    "[1]" dropped."""
    for pattern, replacement in _MARKDOWN:
        draft = pattern.sub(replacement, draft)
    return draft.strip()


def where(snippet: Snippet) -> str:
    """Where a passage is, as a reply names it: the file, then the page (PDF) or the section headings under the
    title."""
    location = snippet.location
    if location is None:
        return snippet.entity_name or snippet.id
    parts = [location.path]
    if location.page is not None:
        parts.append(f"page {location.page}")
    if len(location.heading) > 1:
        parts.append(" > ".join(location.heading[1:]))
    return ", ".join(parts)


def quote(text: str, words: int = 60) -> str:
    """Whole sentences of a passage from its start, at least one, up to `words` words (code lines kept whole)."""
    pieces: list[str] = []
    size = 0
    for line in text.split("\n"):
        for sentence in ([line] if line.startswith((" ", "\t")) else _SENTENCE_END.split(line)):
            n = len(sentence.split())
            if pieces and size + n > words:
                return "\n".join(pieces).replace(" \n", "\n")
            pieces.append(sentence)
            size += n
    return "\n".join(pieces)


def quoted(snippet: Snippet, words: int = 60) -> str:
    return f'"{quote(snippet.text, words)}" ({where(snippet)})'


def cited(claim: str, snippet: Snippet) -> ClaimCheck:
    """The citation of a reply resting on `snippet`."""
    ref = EvidenceRef(id=snippet.id, text=snippet.text, similarity=snippet.score, location=snippet.location)
    return ClaimCheck(claim=claim, verdict=Verdict.SUPPORTED, p_supported=1.0, evidence=[ref])


def answered(draft: str, passage: Snippet, words: int = 60) -> str:
    return f"{plain(draft)}\n\n{quoted(passage, words)}"


def from_passage(passage: Snippet, words: int = 60) -> str:
    return f"The documents say: {quoted(passage, words)}"


def not_found(closest: Optional[Snippet], words: int = 40) -> str:
    return f"{NOT_FOUND} The closest passage I found: {quoted(closest, words)}" if closest else NOT_FOUND
