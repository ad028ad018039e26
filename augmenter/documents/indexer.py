"""`update_index`: bring the index of a folder up to date. Only files added or changed (by content hash, looked at
when the size or modification time differs) are read again; chunks of unchanged files are kept; deleted files
drop out. The new state is written aside and swapped in (see `store`); a file that cannot be read is skipped
with one warning line, and the rest are indexed. A reader's library that is not installed stops the update before
any file is read (one line naming the 'docs' extra); a file skipped because a library was found missing only while
reading it (MissingLibrary) is not remembered as skipped: the next run reads it again."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

from augmenter.documents.bm25 import Terms, TermsBuilder, save_bm25
from augmenter.documents.model import MissingLibrary, Unreadable
from augmenter.documents.readers import read_document, require_readers
from augmenter.documents.readers.text import decode
from augmenter.documents.scan import Candidate, scan
from augmenter.documents.splitter import DEFAULT_OVERLAP, DEFAULT_WORDS, split_document
from augmenter.documents.store import IndexBusy, IndexStore, default_index_dir
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
    generation: Optional[str] = None
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
        done = [f"{len(self.added)} added", f"{len(self.changed)} changed", f"{len(self.deleted)} deleted",
                f"{self.unchanged} unchanged"]
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


def _chunk_records(rel: str, document, words: int, overlap: int, text: Optional[str] = None) -> list[dict]:
    return [{"id": f"{rel}#{n}", "file": rel, "text": c.text, "heading": list(c.heading), "page": c.page,
             "start": c.start, "end": c.end}
            for n, c in enumerate(split_document(document, words, overlap, text), 1)]


def _process(candidate: Candidate, words: int, overlap: int, known_sha: Optional[str] = None
             ) -> tuple[dict, Optional[list[dict]], Optional[str]]:
    """(the document's manifest entry, its chunks, the reason it was skipped or None); never raises. The chunks are
    None when the content hash is `known_sha` (the file was touched, not changed: its chunks are kept)."""
    entry = {"size": candidate.size, "mtime_ns": candidate.mtime_ns}
    try:
        with open(candidate.path, "rb") as source:
            data = source.read()
    except OSError as exc:
        return entry, [], f"cannot be read ({exc.strerror or exc})"
    entry["sha"] = content_hash(data, 32)
    if entry["sha"] == known_sha:
        return entry, None, None
    try:
        document = read_document(candidate.rel, data)
        text = decode(data)[0] if document.format in ("text", "markdown") else None  # what the spans are in
        chunks = _chunk_records(candidate.rel, document, words, overlap, text)
    except MissingLibrary as exc:
        entry["retry"] = True  # not the file's fault: read again next time
        return entry, [], str(exc)
    except Unreadable as exc:
        return entry, [], str(exc)
    except MemoryError:
        return entry, [], "too large to read in memory"
    entry.update(format=document.format, title=document.title, pages=document.pages, chunks=len(chunks),
                 words=document.words, notes=document.notes)
    return entry, chunks, None


def search_text(chunk: dict, title: str) -> str:
    """What retrieval indexes for a chunk: the title and headings above it, then its text."""
    return " ".join([title, *chunk["heading"], chunk["text"]])


def update_index(paths: Sequence[str | Path], index_dir: Optional[str | Path] = None, words: Optional[int] = None,
                 overlap: Optional[int] = None, include: Optional[Sequence[str]] = None,
                 exclude: Optional[Sequence[str]] = None,
                 max_file_mb: float = DEFAULT_MAX_FILE_MB, rebuild: bool = False, progress: bool = True,
                 warn: Warn = warn_to_stderr, k1: float = 1.5, b: float = 0.75, wait: bool = True) -> Report:
    """Bring the index of `paths` (folders, files, globs) up to date; see the module docstring. Settings left
    None (words, overlap, include, exclude) are the index's, or the defaults for a new one."""
    start = time.perf_counter()
    store = IndexStore(index_dir or default_index_dir(paths))
    with store.lock(wait) as locked:
        if not locked:
            raise IndexBusy(f"another augmenter is updating the index {store.directory}; try again when it is done")
        previous = store.current(with_chunks=False)
        old = previous.manifest if previous else {}
        include = list(old.get("include", []) if include is None else include)
        exclude = list(old.get("exclude", []) if exclude is None else exclude)
        found = scan(paths, include, exclude, int(max_file_mb * 2**20) if max_file_mb else None)
        report = Report(store.directory, skipped=dict(found.skipped), unsupported=found.unsupported,
                        hidden=found.hidden)
        settings = old.get("settings") or {}
        words = words or settings.get("words") or DEFAULT_WORDS
        overlap = overlap if overlap is not None else settings.get("overlap", DEFAULT_OVERLAP)
        if not 0 <= overlap < words:
            raise InputError(f"chunks need 0 <= overlap < words, got overlap {overlap} and words {words}")
        settings_now = {"words": words, "overlap": overlap, "reader_version": READER_VERSION}
        same = settings == settings_now and not rebuild
        old_docs = old.get("documents", {}) if same else {}
        old_skips = old.get("skipped", {}) if same else {}
        known = set(old.get("documents", {})) | set(old.get("skipped", {}))  # new settings: all read again
        documents, skipped_entries, chunks_by_file = {}, {}, {}  # chunks_by_file[rel] None: kept as they were
        todo = []
        for candidate in found.files:
            before = old_docs.get(candidate.rel) or old_skips.get(candidate.rel)
            if before and (before["size"], before["mtime_ns"]) == (candidate.size, candidate.mtime_ns) \
                    and not _retry(before):
                _keep(candidate.rel, before, documents, skipped_entries, chunks_by_file)
            else:
                todo.append(candidate)
        require_readers(c.rel for c in todo)  # a missing library: one line naming the extra, before any reading
        bar = _progress(todo, progress)
        for candidate in bar:
            before = old_docs.get(candidate.rel)
            entry, chunks, reason = _process(candidate, words, overlap, (before or {}).get("sha"))
            if chunks is None:  # touched, not changed
                _keep(candidate.rel, {**before, **entry}, documents, skipped_entries, chunks_by_file)
                continue
            skipped_before = old_skips.get(candidate.rel)
            if reason and skipped_before and skipped_before.get("sha") == entry.get("sha") \
                    and skipped_before["reason"] == reason:  # skipped again for the same reason: not a change
                skipped_entries[candidate.rel] = {**entry, "reason": reason}
                continue
            if reason:
                skipped_entries[candidate.rel] = {**entry, "reason": reason}
            else:
                documents[candidate.rel] = entry
                chunks_by_file[candidate.rel] = chunks
            (report.changed if candidate.rel in known else report.added).append(candidate.rel)
        report.deleted = sorted(set(old.get("documents", {})) - set(documents) - set(skipped_entries))
        report.unchanged = len(documents) + len(skipped_entries) - len(report.added) - len(report.changed)
        for rel, entry in skipped_entries.items():
            report.skipped[rel] = entry["reason"]
        for rel in sorted(report.skipped):
            warn(f"{found.root / rel}: {report.skipped[rel]}; skipped")
        for rel, entry in sorted(documents.items()):
            for note in entry.get("notes") or []:
                warn(f"{found.root / rel}: {note}")
            if entry.get("notes"):
                report.noted[rel] = list(entry["notes"])
        report.documents = len(documents)
        report.chunks = sum(entry["chunks"] for entry in documents.values())
        changed = (previous is None or not same or report.added or report.changed or report.deleted
                   or documents != old_docs or set(found.skipped) != set(old.get("scan_skipped", {}))
                   or str(found.root) != old.get("root") or (include, exclude) != (old.get("include", []),
                                                                                     old.get("exclude", [])))
        if changed:
            lines, terms = _assemble(previous if same else None, old_docs, documents, chunks_by_file)
            manifest = {"root": str(found.root), "sources": [str(p) for p in paths], "settings": settings_now,
                        "include": include, "exclude": exclude,
                        "documents": documents, "skipped": skipped_entries, "scan_skipped": found.skipped,
                        "unsupported": found.unsupported, "hidden": found.hidden,
                        "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "bm25": {"k1": k1, "b": b}}

            def extra(directory: Path) -> None:  # the terms of every chunk, and bm25s's index built from them
                terms.save(directory)
                if terms.chunks:
                    save_bm25(directory / "bm25", terms, k1, b)

            report.generation = store.write(manifest, lines, extra).directory.name
            report.written = True
        else:
            report.generation = previous.directory.name
    report.seconds = time.perf_counter() - start
    return report


def _retry(entry: dict) -> bool:
    """Whether a file skipped before is read again though unchanged: a library was missing when it was read."""
    return bool(entry.get("retry"))


def _keep(rel: str, entry: dict, documents: dict, skipped: dict, chunks_by_file: dict) -> None:
    if "reason" in entry:
        skipped[rel] = entry
    else:
        documents[rel] = entry
        chunks_by_file[rel] = None


def _assemble(previous, old_docs: dict, documents: dict, chunks_by_file: dict) -> tuple[list[str], Terms]:
    """The new state's chunk lines (JSON) and terms, in file order: a kept file's lines and term ids are copied
    from the previous generation as they are; only new chunks are encoded and tokenised."""
    old_lines: list[str] = []
    old_terms, ranges = None, {}
    if previous is not None and any(chunks is None for chunks in chunks_by_file.values()):
        with open(previous.directory / "chunks.jsonl", encoding="utf-8") as source:
            old_lines = source.readlines()
        old_terms = Terms.load(previous.directory)
        position = 0
        for rel in sorted(old_docs):
            ranges[rel] = (position, position + old_docs[rel]["chunks"])
            position += old_docs[rel]["chunks"]
    builder, lines = TermsBuilder(old_terms), []
    for rel in sorted(documents):
        chunks = chunks_by_file[rel]
        if chunks is None:
            first, last = ranges[rel]
            lines.extend(old_lines[first:last])
            builder.keep(first, last)
        else:
            lines.extend(json.dumps(c, ensure_ascii=False) + "\n" for c in chunks)
            builder.add([search_text(c, documents[rel]["title"]) for c in chunks])
    return lines, builder.build()


def _progress(items: list, enabled: bool):
    if not enabled or len(items) < 20:
        return items
    from tqdm import tqdm

    return tqdm(items, desc="reading documents", unit="file", file=sys.stderr, leave=False, dynamic_ncols=True)
