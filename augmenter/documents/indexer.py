"""`update_index`: bring the index of a folder up to date. Only files added or changed (by content hash, looked at
when the size or modification time differs) are read again; chunks of unchanged files are kept; deleted files
drop out. The new state is written aside and swapped in (see `store`); a file that cannot be read is skipped
with one warning line, and the rest are indexed. A reader's library that is not installed stops the update before
any file is read (one line naming the 'docs' extra); a file skipped because a library was found missing only while
reading it (MissingLibrary) is not remembered as skipped: the next run reads it again.

An update is three steps over the typed manifest (`manifest`): `plan` (scan the files and tell, before reading any,
which are kept, which are read and which are gone, and whether new settings read them all), `read` (the files the
plan names) and `write` (the new generation, only when anything changed)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from augmenter.documents.bm25 import Terms, TermsBuilder, save_bm25
from augmenter.documents.manifest import DocumentEntry, Entry, Manifest, Settings, SkippedEntry
from augmenter.documents.model import MissingLibrary, Unreadable
from augmenter.documents.readers import read_document, require_readers
from augmenter.documents.readers.text import decode
from augmenter.documents.scan import Candidate, Scan, scan
from augmenter.documents.splitter import DEFAULT_OVERLAP, DEFAULT_WORDS, split_document
from augmenter.documents.store import Generation, IndexBusy, IndexStore, default_index_dir
from augmenter.errors import InputError
from augmenter.storage import content_hash

READER_VERSION = 3  # raise when a reader or the splitter changes what it makes: every file is read again
DEFAULT_MAX_FILE_MB = 50.0
Warn = Callable[[str], None]


def warn_to_stderr(line: str) -> None:
    from tqdm import tqdm

    tqdm.write(f"augmenter: warning: {line}", file=sys.stderr)


@dataclass
class Report:
    """What an update found and did."""

    index_dir: Path
    generation: str | None = None
    documents: int = 0
    chunks: int = 0
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: dict[str, str] = field(default_factory=dict)
    noted: dict[str, list[str]] = field(default_factory=dict)  # indexed, with a warning each (e.g. not UTF-8)
    unsupported: dict[str, int] = field(default_factory=dict)
    hidden: int = 0
    written: bool = False
    seconds: float = 0.0

    def summary(self) -> str:
        parts = [f"{self.documents} documents, {self.chunks} chunks"]
        done = [
            f"{len(self.added)} added",
            f"{len(self.changed)} changed",
            f"{len(self.deleted)} deleted",
            f"{self.unchanged} unchanged",
        ]
        parts.append(", ".join(done))
        if self.noted:
            decoded = [n for notes in self.noted.values() for n in notes if n.startswith("not UTF-8")]
            encodings = ", ".join(sorted({n.rpartition("read as ")[2] for n in decoded}))
            what = f"{len(decoded)} not UTF-8, read as {encodings}; " if decoded else ""
            parts.append(f"{len(self.noted)} read with a warning ({what}see the warnings)")
        if self.skipped:
            parts.append(f"{len(self.skipped)} skipped (see the warnings)")
        if self.unsupported:
            kinds = ", ".join(f"{n} {k}" for k, n in sorted(self.unsupported.items(), key=lambda kv: -kv[1])[:5])
            parts.append(f"{sum(self.unsupported.values())} of unsupported types ({kinds})")
        state = "updated" if self.written else "up to date"
        return f"{'; '.join(parts)}; index {state} in {self.seconds:.1f} s: {self.index_dir}"


def _chunk_records(rel: str, document, words: int, overlap: int, text: str | None = None) -> list[dict]:
    return [
        {
            "id": f"{rel}#{n}",
            "file": rel,
            "text": c.text,
            "heading": list(c.heading),
            "page": c.page,
            "start": c.start,
            "end": c.end,
        }
        for n, c in enumerate(split_document(document, words, overlap, text), 1)
    ]


def search_text(chunk: dict, title: str) -> str:
    """What retrieval indexes for a chunk: the title and headings above it, then its text."""
    return " ".join([title, *chunk["heading"], chunk["text"]])


def update_index(
    paths: Sequence[str | Path],
    index_dir: str | Path | None = None,
    words: int | None = None,
    overlap: int | None = None,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    max_file_mb: float = DEFAULT_MAX_FILE_MB,
    rebuild: bool = False,
    progress: bool = True,
    warn: Warn = warn_to_stderr,
    k1: float = 1.5,
    b: float = 0.75,
    wait: bool = True,
) -> Report:
    """Bring the index of `paths` (folders, files, globs) up to date; see the module docstring. Settings left
    None (words, overlap, include, exclude) are the index's, or the defaults for a new one."""
    start = time.perf_counter()
    store = IndexStore(index_dir or default_index_dir(paths))
    with store.lock(wait) as locked:
        if not locked:
            raise IndexBusy(f"another augmenter is updating the index {store.directory}; try again when it is done")
        request = Request(paths, words, overlap, include, exclude, max_file_mb, rebuild)
        planned = plan(store.current(with_chunks=False), request)
        contents = read(planned, progress)
        report = _report(store.directory, planned, contents, warn)
        if needs_writing(planned, contents):
            report.generation = write(store, planned, contents, k1, b)
            report.written = True
        else:
            report.generation = planned.previous.directory.name
    report.seconds = time.perf_counter() - start
    return report


# ---- plan ------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Request:
    """What an update is asked for: the paths, and settings that, left None, are the index's (or the defaults)."""

    paths: Sequence[str | Path]
    words: int | None = None
    overlap: int | None = None
    include: Sequence[str] | None = None
    exclude: Sequence[str] | None = None
    max_file_mb: float = DEFAULT_MAX_FILE_MB
    rebuild: bool = False


@dataclass
class Plan:
    """What an update does, decided from the scan and the previous manifest (`old`, empty without an index) before
    any file is read. `rebuild`: the chunk settings or the readers changed (or a rebuild was asked), so every file
    is read again; otherwise the files whose size and time are as indexed are `kept` (entries by relative path),
    and the others (new, touched or changed, or to retry) are `to_read`. `removed`: indexed documents no longer
    found."""

    request: Request
    previous: Generation | None
    old: Manifest
    found: Scan
    settings: Settings
    include: list[str]
    exclude: list[str]
    rebuild: bool
    kept: dict[str, Entry]
    to_read: list[Candidate]
    removed: list[str]

    def before(self, rel: str) -> Entry | None:
        """The file's entry in the previous generation, when its chunks can be reused (no rebuild)."""
        return None if self.rebuild else self.old.documents.get(rel) or self.old.skipped.get(rel)

    def is_new(self, rel: str) -> bool:
        """Whether the previous generation knew nothing of the file (neither indexed nor skipped)."""
        return rel not in self.old.documents and rel not in self.old.skipped


def plan(previous: Generation | None, request: Request) -> Plan:
    """Scan the files (with the index's include and exclude globs unless asked for others) and sort them into kept
    and to read; InputError for chunk settings that cannot work."""
    old = Manifest.from_json(previous.manifest) if previous else Manifest()
    include = list(old.include if request.include is None else request.include)
    exclude = list(old.exclude if request.exclude is None else request.exclude)
    limit = int(request.max_file_mb * 2**20) if request.max_file_mb else None
    found = scan(request.paths, include, exclude, limit)
    settings = _settings(old.settings, request.words, request.overlap)
    rebuild = request.rebuild or settings != old.settings
    indexed = {} if rebuild else {**old.documents, **old.skipped}
    kept = {c.rel: indexed[c.rel] for c in found.files if c.rel in indexed and _unchanged(indexed[c.rel], c)}
    return Plan(
        request,
        previous,
        old,
        found,
        settings,
        include,
        exclude,
        rebuild,
        kept,
        to_read=[c for c in found.files if c.rel not in kept],
        removed=sorted(set(old.documents) - {c.rel for c in found.files}),
    )


def _settings(old: Settings, words: int | None, overlap: int | None) -> Settings:
    """The chunk settings asked for, else the index's, else the defaults."""
    words = words or old.words or DEFAULT_WORDS
    overlap = overlap if overlap is not None else (old.overlap if old.overlap is not None else DEFAULT_OVERLAP)
    if not 0 <= overlap < words:
        raise InputError(f"chunks need 0 <= overlap < words, got overlap {overlap} and words {words}")
    return Settings(words, overlap, READER_VERSION)


def _unchanged(entry: Entry, candidate: Candidate) -> bool:
    """Whether a file is kept as indexed: the same size and time, and not a file a missing library kept from being
    read (read again each time)."""
    retry = isinstance(entry, SkippedEntry) and entry.retry
    return (entry.size, entry.mtime_ns) == (candidate.size, candidate.mtime_ns) and not retry


# ---- read ------------------------------------------------------------------------------------------------------------
@dataclass
class Contents:
    """The files of the new generation: the documents and the skipped files, each document's chunks (None: kept
    from the previous generation as they are), and which files were added or changed."""

    documents: dict[str, DocumentEntry] = field(default_factory=dict)
    skipped: dict[str, SkippedEntry] = field(default_factory=dict)
    chunks: dict[str, list[dict] | None] = field(default_factory=dict)
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)

    def put(self, rel: str, entry: Entry, chunks: list[dict] | None = None) -> None:
        if isinstance(entry, SkippedEntry):
            self.skipped[rel] = entry
        else:
            self.documents[rel] = entry
            self.chunks[rel] = chunks


def read(plan: Plan, progress: bool = True) -> Contents:
    """The kept files as they were and the files to read, read. A file whose content hash is the indexed one's was
    only touched (its chunks are kept); one skipped again for the same reason is no change either."""
    contents = Contents()
    for rel, entry in plan.kept.items():
        contents.put(rel, entry)
    require_readers(c.rel for c in plan.to_read)  # a missing library: one line naming the extra, before any reading
    for candidate in _progress(plan.to_read, progress):
        before = plan.before(candidate.rel)
        entry, chunks = _process(candidate, plan.settings, before)
        contents.put(candidate.rel, entry, chunks)
        if chunks is not None and not _skipped_again(before, entry):
            (contents.added if plan.is_new(candidate.rel) else contents.changed).append(candidate.rel)
    return contents


def _process(candidate: Candidate, settings: Settings, before: Entry | None) -> tuple[Entry, list[dict] | None]:
    """The file's new entry and its chunks; never raises. The chunks are None when the content hash is that of the
    indexed document `before` (the file was touched, not changed: its chunks are kept); a SkippedEntry says why
    the file is not indexed."""
    size, mtime_ns = candidate.size, candidate.mtime_ns
    try:
        with open(candidate.path, "rb") as source:
            data = source.read()
    except OSError as exc:
        return SkippedEntry(size, mtime_ns, reason=f"cannot be read ({exc.strerror or exc})"), []
    sha = content_hash(data, 32)
    if isinstance(before, DocumentEntry) and before.sha == sha:
        return replace(before, size=size, mtime_ns=mtime_ns), None
    try:
        document = read_document(candidate.rel, data)
        text = decode(data)[0] if document.format in ("text", "markdown") else None  # what the spans are in
        chunks = _chunk_records(candidate.rel, document, settings.words, settings.overlap, text)
    except MissingLibrary as exc:  # not the file's fault: read again next time
        return SkippedEntry(size, mtime_ns, sha, retry=True, reason=str(exc)), []
    except Unreadable as exc:
        return SkippedEntry(size, mtime_ns, sha, reason=str(exc)), []
    except MemoryError:
        return SkippedEntry(size, mtime_ns, sha, reason="too large to read in memory"), []
    return DocumentEntry(
        size,
        mtime_ns,
        sha,
        document.format,
        document.title,
        document.pages,
        len(chunks),
        document.words,
        list(document.notes),
    ), chunks


def _skipped_again(before: Entry | None, entry: Entry) -> bool:
    """Whether a file is skipped for the reason it was skipped before, its content unchanged: not a change."""
    return (
        isinstance(before, SkippedEntry)
        and isinstance(entry, SkippedEntry)
        and (before.sha, before.reason) == (entry.sha, entry.reason)
    )


def _report(directory: Path, plan: Plan, contents: Contents, warn: Warn) -> Report:
    """What the update found and did, with one warning line per skipped file and per note on a document."""
    found = plan.found
    skipped = {**found.skipped, **{rel: entry.reason for rel, entry in contents.skipped.items()}}
    report = Report(
        directory,
        documents=len(contents.documents),
        chunks=sum(entry.chunks for entry in contents.documents.values()),
        added=contents.added,
        changed=contents.changed,
        deleted=plan.removed,
        skipped=skipped,
        unsupported=found.unsupported,
        hidden=found.hidden,
    )
    report.unchanged = len(contents.documents) + len(contents.skipped) - len(report.added) - len(report.changed)
    for rel in sorted(report.skipped):
        warn(f"{found.root / rel}: {report.skipped[rel]}; skipped")
    for rel, entry in sorted(contents.documents.items()):
        for note in entry.notes:
            warn(f"{found.root / rel}: {note}")
        if entry.notes:
            report.noted[rel] = list(entry.notes)
    return report


# ---- write -----------------------------------------------------------------------------------------------------------
def needs_writing(plan: Plan, contents: Contents) -> bool:
    """Whether the index must be written: there is none yet, every file was read again, files were added, changed,
    touched or removed, the scan skipped other files, or the files come from another root or through other globs."""
    old = plan.old
    if plan.previous is None or plan.rebuild:
        return True
    files_changed = bool(contents.added or contents.changed or plan.removed) or contents.documents != old.documents
    scan_changed = set(plan.found.skipped) != set(old.scan_skipped)
    source_changed = str(plan.found.root) != old.root or (plan.include, plan.exclude) != (old.include, old.exclude)
    return files_changed or scan_changed or source_changed


def write(store: IndexStore, plan: Plan, contents: Contents, k1: float = 1.5, b: float = 0.75) -> str:
    """The new generation (chunks, their terms, the BM25 index and the manifest), written aside and made current;
    its name."""
    found = plan.found
    manifest = Manifest(
        root=str(found.root),
        sources=[str(p) for p in plan.request.paths],
        settings=plan.settings,
        include=plan.include,
        exclude=plan.exclude,
        documents=dict(sorted(contents.documents.items())),
        skipped=dict(sorted(contents.skipped.items())),
        scan_skipped=found.skipped,
        unsupported=found.unsupported,
        hidden=found.hidden,
        built_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        bm25={"k1": k1, "b": b},
    )
    lines, terms = _assemble(None if plan.rebuild else plan.previous, plan.old.documents, contents)

    def extra(directory: Path) -> None:  # the terms of every chunk, and bm25s's index built from them
        terms.save(directory)
        if terms.chunks:
            save_bm25(directory / "bm25", terms, k1, b)

    return store.write(manifest.to_json(), lines, extra).directory.name


def _assemble(
    previous: Generation | None, old_docs: dict[str, DocumentEntry], contents: Contents
) -> tuple[list[str], Terms]:
    """The new state's chunk lines (JSON) and terms, in file order: a kept file's lines and term ids are copied
    from the previous generation as they are; only new chunks are encoded and tokenised."""
    old_lines: list[str] = []
    old_terms, ranges = None, {}
    if previous is not None and any(chunks is None for chunks in contents.chunks.values()):
        with open(previous.directory / "chunks.jsonl", encoding="utf-8") as source:
            old_lines = source.readlines()
        old_terms = Terms.load(previous.directory)
        position = 0
        for rel in sorted(old_docs):
            ranges[rel] = (position, position + old_docs[rel].chunks)
            position += old_docs[rel].chunks
    builder, lines = TermsBuilder(old_terms), []
    for rel in sorted(contents.documents):
        chunks = contents.chunks[rel]
        if chunks is None:
            first, last = ranges[rel]
            lines.extend(old_lines[first:last])
            builder.keep(first, last)
        else:
            lines.extend(json.dumps(c, ensure_ascii=False) + "\n" for c in chunks)
            builder.add([search_text(c, contents.documents[rel].title) for c in chunks])
    return lines, builder.build()


def _progress(items: list, enabled: bool):
    if not enabled or len(items) < 20:
        return items
    from tqdm import tqdm

    return tqdm(items, desc="reading documents", unit="file", file=sys.stderr, leave=False, dynamic_ncols=True)
