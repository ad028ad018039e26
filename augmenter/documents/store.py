"""The on-disk index of a folder of documents, written aside and swapped in atomically.

    INDEX_DIR/CURRENT          the name of the current generation (replaced atomically, last)
    INDEX_DIR/gen-000007/      manifest.json (settings, every document and skipped file), chunks.jsonl, the
                               chunks' term ids (terms.json, term_*.npy) and bm25/, bm25s's own save of their index
    INDEX_DIR/embeddings/      dense embeddings of chunk texts, by content hash (retriever=dense | hybrid)
    INDEX_DIR/.lock            held by the one process that updates the index

A run killed at any point leaves CURRENT naming a complete generation: everything a generation needs is written
(and synced) before CURRENT names it. The previous generation is kept, for readers that opened it just before the
swap; older ones, unfinished ones and one a killed run renamed into place but never made current are removed by the
next update.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from augmenter.errors import InputError
from augmenter.paths import cache_dir
from augmenter.storage import atomic_open, content_hash, write_atomic

FORMAT = 2
_GENERATION = re.compile(r"^gen-(\d{6})$")


class IndexBusy(InputError):
    """Another process is updating the index."""


def default_index_dir(paths) -> Path:
    """Where the index of these paths lives unless told: <cache>/documents/<first name>-<hash of the paths>."""
    absolute = sorted(os.path.abspath(os.path.expanduser(str(p))) for p in paths)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(absolute[0]).name or "root").strip("-.")[:40] or "docs"
    return cache_dir() / "documents" / f"{name}-{content_hash(absolute, 12)}"


@dataclass
class Generation:
    """One complete, immutable state of the index."""

    directory: Path
    manifest: dict
    chunks: list[dict] = field(default_factory=list)

    @property
    def bm25_dir(self) -> Path | None:
        path = self.directory / "bm25"
        return path if path.is_dir() else None


def _sync_file(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def _sync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class IndexStore:
    def __init__(self, directory: str | Path):
        self.directory = Path(directory).expanduser()

    # ---- reading ---------------------------------------------------------------------------------------------
    def current_name(self) -> str | None:
        try:
            name = (self.directory / "CURRENT").read_text(encoding="utf-8").strip()
        except (FileNotFoundError, NotADirectoryError):
            return None
        return name if _GENERATION.match(name) and (self.directory / name / "manifest.json").exists() else None

    def current(self, with_chunks: bool = True) -> Generation | None:
        """The current generation (its chunks read too, unless told not to), or None when there is no index."""
        name = self.current_name()
        if name is None:
            return None
        directory = self.directory / name
        try:
            manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
            if manifest.get("format") != FORMAT:
                return None  # written by another version of augmenter: rebuilt
            chunks = []
            if with_chunks:
                with open(directory / "chunks.jsonl", encoding="utf-8") as source:
                    chunks = [json.loads(line) for line in source]
        except (OSError, ValueError) as exc:
            raise InputError(
                f"the document index {directory} is damaged ({type(exc).__name__}): run augmenter index --rebuild"
            ) from None
        return Generation(directory, manifest, chunks)

    # ---- writing (under the lock) ------------------------------------------------------------------------------
    @contextmanager
    def lock(self, wait: bool = False) -> Iterator[bool]:
        """Held while updating; yields False (without the lock) when another process holds it and `wait` is off."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / ".lock", "a+") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def write(self, manifest: dict, chunk_lines: Iterable[str], extra: Callable[[Path], None]) -> Generation:
        """A new generation of these chunks (JSON lines), `extra(folder)` writing the rest of it; made current."""
        names = [int(m.group(1)) for p in self.directory.iterdir() if (m := _GENERATION.match(p.name))]
        name = f"gen-{max(names, default=0) + 1:06d}"
        tmp = self.directory / f".{name}.{os.getpid()}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        manifest = {**manifest, "format": FORMAT}
        with atomic_open(tmp / "chunks.jsonl") as sink:
            sink.writelines(chunk_lines)
        extra(tmp)
        write_atomic(tmp / "manifest.json", json.dumps(manifest, ensure_ascii=False))
        for path in tmp.rglob("*"):
            if path.is_file():
                _sync_file(path)
        _sync_dir(tmp)
        previous = self.current_name()
        os.replace(tmp, self.directory / name)
        _sync_dir(self.directory)
        write_atomic(self.directory / "CURRENT", name + "\n")
        _sync_dir(self.directory)
        self.collect({name, previous} - {None})
        return Generation(self.directory / name, manifest)

    def collect(self, keep: set[str] | None = None) -> None:
        """Remove the generations not in `keep` (by default the current one and the one numbered before it) and
        unfinished writes. A write keeps the generation it made current and the one current before it, so that a
        generation a killed run renamed into place but never made current goes, not the previous one."""
        if keep is None:
            current = self.current_name()
            generations = sorted(p.name for p in self.directory.iterdir() if _GENERATION.match(p.name))
            at = generations.index(current) if current in generations else len(generations) - 1
            keep = set(generations[max(0, at - 1) : at + 1])
        for path in self.directory.iterdir():
            stale = (_GENERATION.match(path.name) and path.name not in keep) or path.name.endswith(".tmp")
            if stale:
                shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
