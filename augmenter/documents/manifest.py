"""The manifest of an index generation (manifest.json), typed: the chunk settings it was built with, every indexed
document and skipped file as it was when read (size, modification time, content hash), what the scan passed over,
and where the files came from. `Manifest.from_json` reads what `to_json` writes (the store adds its format);
missing keys take their defaults, so an older manifest reads too."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

__all__ = ["DocumentEntry", "Manifest", "Settings", "SkippedEntry"]


def _known(cls, data: dict) -> dict:
    """The keys of `data` that are fields of `cls`."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


@dataclass(frozen=True)
class Settings:
    """How the files were cut into chunks, and by which version of the readers; other settings read every file
    again."""

    words: int | None = None
    overlap: int | None = None
    reader_version: int | None = None


@dataclass(frozen=True)
class DocumentEntry:
    """An indexed file: the size, time and hash it was read at, what was read, and its number of chunks."""

    size: int = -1
    mtime_ns: int = -1
    sha: str | None = None
    format: str = "document"
    title: str = ""
    pages: int | None = None
    chunks: int = 0
    words: int = 0
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class SkippedEntry:
    """A file that could not be indexed, and why. `sha` is None when it could not be read at all; `retry`: a library
    was missing when it was read, so it is read again though unchanged."""

    size: int = -1
    mtime_ns: int = -1
    sha: str | None = None
    retry: bool = False
    reason: str = ""

    def to_json(self) -> dict:
        data = {"size": self.size, "mtime_ns": self.mtime_ns}
        if self.sha is not None:
            data["sha"] = self.sha
        if self.retry:
            data["retry"] = True
        return {**data, "reason": self.reason}


Entry = DocumentEntry | SkippedEntry


@dataclass(frozen=True)
class Manifest:
    """One generation of the index: the settings, the documents and skipped files by relative path (sorted), what
    the scan skipped (with why), its count of unsupported files by suffix and of hidden ones, and the BM25
    parameters its saved index was built with."""

    root: str = ""
    sources: list[str] = field(default_factory=list)
    settings: Settings = field(default_factory=Settings)
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    documents: dict[str, DocumentEntry] = field(default_factory=dict)
    skipped: dict[str, SkippedEntry] = field(default_factory=dict)
    scan_skipped: dict[str, str] = field(default_factory=dict)
    unsupported: dict[str, int] = field(default_factory=dict)
    hidden: int = 0
    built_at: str = ""
    bm25: dict[str, float] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Manifest:
        """A manifest as read from manifest.json (keys it does not know, e.g. the store's format, are ignored)."""
        return cls(
            **{
                **_known(cls, data),
                "settings": Settings(**_known(Settings, data.get("settings") or {})),
                "documents": {
                    rel: DocumentEntry(**_known(DocumentEntry, entry))
                    for rel, entry in (data.get("documents") or {}).items()
                },
                "skipped": {
                    rel: SkippedEntry(**_known(SkippedEntry, entry))
                    for rel, entry in (data.get("skipped") or {}).items()
                },
            }
        )

    def to_json(self) -> dict[str, Any]:
        """The manifest as manifest.json holds it."""
        return {
            "root": self.root,
            "sources": list(self.sources),
            "settings": asdict(self.settings),
            "include": list(self.include),
            "exclude": list(self.exclude),
            "documents": {rel: entry.to_json() for rel, entry in self.documents.items()},
            "skipped": {rel: entry.to_json() for rel, entry in self.skipped.items()},
            "scan_skipped": dict(self.scan_skipped),
            "unsupported": dict(self.unsupported),
            "hidden": self.hidden,
            "built_at": self.built_at,
            "bm25": dict(self.bm25),
        }
