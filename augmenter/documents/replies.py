"""The replies sent from documents: the direct answer, then the passage it rests on, quoted whole, with the file and
section (or page) it comes from; or, when no draft may be sent, the passage that answers in its own words; or a
plain statement that the documents do not answer, with the closest passage found."""

from __future__ import annotations

import re

from augmenter.documents.passages import is_code
from augmenter.knowledge.retrievers import tokenize
from augmenter.memory import ClaimCheck, EvidenceRef, Snippet, Verdict

NOT_FOUND = "I could not find the answer to that in the documents."
_MARKDOWN = [
    (re.compile(r"\*\*(.+?)\*\*|__(.+?)__"), r"\1\2"),
    (re.compile(r"(?m)^\s{0,3}#{1,6}\s+"), ""),
    (re.compile(r"(?m)^\s*```\w*\s*$\n?"), ""),
    (re.compile(r"`([^`\n]+)`"), r"\1"),
    (re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]"), ""),
    (re.compile(r"^\s*(?:Answer|A)\s*:\s*", re.I), ""),
]
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


def _pieces(text: str) -> list[str]:
    """A passage's sentences, and its lines of code, in order."""
    return [s for line in text.split("\n") for s in ([line] if is_code(line) else _SENTENCE_END.split(line)) if s]


def quote(text: str, words: int = 60, about: str = "") -> str:
    """Whole sentences (and lines of code) of a passage, at least one, up to `words` words: from the sentence that
    shares most words with `about` (the question, or the answer the quote backs; a line of code starts with the
    sentence before it), else from the passage's start."""
    pieces = _pieces(text)
    start = 0
    if about and pieces:
        want = set(tokenize(about))
        start = max(range(len(pieces)), key=lambda i: (len(want & set(tokenize(pieces[i]))), -i))
        if is_code(pieces[start]) and start > 0 and not is_code(pieces[start - 1]):
            start -= 1
    out: list[str] = []
    size = 0
    for piece in pieces[start:]:
        n = len(piece.split())
        if out and size + n > words:
            break
        out.append(piece)
        size += n
    joined = ""
    for piece in out:  # sentences of one line joined by a space, code on lines of its own
        joined += (
            "\n"
            if joined and (is_code(piece) or joined.endswith(":") or "\n" + piece in text)
            else " "
            if joined
            else ""
        ) + piece
    return joined


def quoted(snippet: Snippet, words: int = 60, about: str = "") -> str:
    return f'"{quote(snippet.text, words, about)}" ({where(snippet)})'


def cited(claim: str, snippet: Snippet, words: int = 60, about: str = "") -> ClaimCheck:
    """The citation of a reply resting on `snippet`: what the reply quotes of it, the whole passage, where it is."""
    ref = EvidenceRef(
        id=snippet.id,
        text=quote(snippet.text, words, about),
        similarity=snippet.score,
        location=snippet.location,
        passage=snippet.text,
    )
    return ClaimCheck(claim=claim, verdict=Verdict.SUPPORTED, p_supported=1.0, evidence=[ref])


def answered(draft: str, passage: Snippet, words: int = 60) -> str:
    """The answer, then the sentences of the passage it rests on."""
    return f"{plain(draft)}\n\n{quoted(passage, words, draft)}"


def from_passage(passage: Snippet, question: str, words: int = 60) -> str:
    """The passage's own words, from the sentence closest to the question."""
    return f"The documents say: {quoted(passage, words, question)}"


def not_found(closest: Snippet | None, question: str = "", words: int = 40) -> str:
    return f"{NOT_FOUND} The closest passage I found: {quoted(closest, words, question)}" if closest else NOT_FOUND
