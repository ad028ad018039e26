"""Which files to index: the folders (walked recursively), files and globs given, as paths relative to their
common root. Hidden files and folders and obvious junk (editor backups, Office lock files, partial downloads,
dependency folders, the recycle bin) are passed over silently; files of an unsupported type are counted; a file
larger than the limit, one that cannot be read, or a symlink that leads outside the folder is skipped with its
reason."""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG

from augmenter.documents.readers import supported
from augmenter.errors import InputError

# matched whatever their case (Windows' recycle bin is "$Recycle.Bin", its thumbnails "Thumbs.db" or "THUMBS.DB")
JUNK_DIRS = {
    "node_modules",
    "__pycache__",
    "venv",
    "site-packages",
    "__macosx",
    "$recycle.bin",
    "recycler",
    "system volume information",
}
JUNK_FILES = (
    "~$*",
    "*~",
    "*.bak",
    "*.tmp",
    "*.swp",
    "*.orig",
    "*.part",
    "*.crdownload",
    "thumbs.db",
    "desktop.ini",
    "#*#",
)


@dataclass
class Candidate:
    """A file to index: its path relative to the root (with "/"), where it is, its size and modification time."""

    rel: str
    path: str | Path
    size: int
    mtime_ns: int


@dataclass
class Scan:
    root: Path
    files: list[Candidate] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # rel -> reason
    unsupported: dict[str, int] = field(default_factory=dict)  # extension -> count
    hidden: int = 0  # hidden files and junk passed over


def _matches(rel: str, patterns: Sequence[str]) -> bool:
    """A glob matches the relative path ("*" crosses folders: `drafts/*` is everything under drafts) or, without a
    "/", the file's name."""
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(rel, p) or ("/" not in p and fnmatch.fnmatchcase(name, p)) for p in patterns)


_JUNK = re.compile("|".join(fnmatch.translate(p) for p in JUNK_FILES), re.IGNORECASE)


def _junk(name: str) -> bool:
    return name.startswith(".") or _JUNK.match(name) is not None


def expand(paths: Sequence[str | Path]) -> list[tuple[Path, bool]]:
    """Each argument as (an existing path, whether it was named directly); globs expanded. A path that does not
    exist and matches nothing is an InputError."""
    out: list[tuple[Path, bool]] = []
    for raw in paths:
        raw = str(raw)
        path = Path(raw).expanduser()
        if path.exists():
            out.append((path, True))
        elif glob.has_magic(raw):
            matches = sorted(glob.glob(os.path.expanduser(raw), recursive=True))
            if not matches:
                raise InputError(f"no file matches {raw}")
            out.extend((Path(m), False) for m in matches if Path(m).is_file())
        else:
            raise InputError(f"no such file or folder: {raw}")
    if not out:
        raise InputError("no documents given: name a folder, files or a glob")
    return out


def common_root(paths: Sequence[Path]) -> Path:
    """The folder the relative paths start from: the folder itself for one folder, else the common parent."""
    absolute = [Path(os.path.abspath(p)) for p in paths]
    if len(absolute) == 1 and absolute[0].is_dir():
        return absolute[0]
    return Path(os.path.commonpath([p if p.is_dir() else p.parent for p in absolute]))


def scan(
    paths: Sequence[str | Path], include: Sequence[str] = (), exclude: Sequence[str] = (), max_bytes: int | None = None
) -> Scan:
    """The files to index under `paths`, sorted by relative path."""
    given = expand(paths)
    root = common_root([p for p, _ in given])
    out = Scan(root)
    seen: set[str] = set()
    root_text = str(root)

    def consider(path: str, rel: str, named: bool, inside: Path | None, entry=None) -> None:
        if rel in seen:
            return
        seen.add(rel)
        name = rel.rsplit("/", 1)[-1]
        if not named and _junk(name):
            out.hidden += 1
            return
        if (include and not _matches(rel, include)) or (exclude and _matches(rel, exclude)):
            return
        link = entry.is_symlink() if entry is not None else os.path.islink(path)
        if link and os.path.isdir(path):
            out.skipped[rel] = "a symlink to a folder: not followed"
            return
        if not supported(name):
            suffix = os.path.splitext(name)[1].lower() or "(none)"
            out.unsupported[suffix] = out.unsupported.get(suffix, 0) + 1
            return
        target = path
        if link or entry is None:  # where a symlink (or a path named directly) leads
            try:
                target = Path(path).resolve(strict=True)
            except (OSError, RuntimeError):
                out.skipped[rel] = "a broken symlink" if link else "cannot be opened"
                return
            if inside is not None and not target.is_relative_to(inside):
                out.skipped[rel] = f"a symlink to {target}, outside {inside}: not followed"
                return
        try:
            stat = entry.stat() if entry is not None and not link else os.stat(target)
        except OSError as exc:
            out.skipped[rel] = f"cannot be read ({exc.strerror or exc})"
            return
        if not S_ISREG(stat.st_mode):
            out.skipped[rel] = "not a regular file"
            return
        if max_bytes is not None and stat.st_size > max_bytes:
            out.skipped[rel] = f"too large ({stat.st_size / 2**20:.0f} MB; the limit is {max_bytes / 2**20:.0f} MB)"
            return
        out.files.append(Candidate(rel, target, stat.st_size, stat.st_mtime_ns))

    def walk(folder: str, prefix: str, inside: Path) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            out.skipped[prefix.rstrip("/") or "."] = f"cannot be listed ({exc.strerror or exc})"
            return
        for entry in entries:
            rel = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                if entry.name.startswith(".") or entry.name.lower() in JUNK_DIRS:
                    out.hidden += 1
                else:
                    walk(entry.path, rel + "/", inside)
            else:
                consider(entry.path, rel, False, inside, entry)

    for path, named in given:
        absolute = os.path.abspath(path)
        rel = Path(os.path.relpath(absolute, root_text)).as_posix()
        if path.is_dir():
            walk(absolute, "" if rel == "." else rel + "/", path.resolve())
        else:
            consider(absolute, rel, named, None if named else root.resolve())  # a file named directly is followed
    out.files.sort(key=lambda c: c.rel)
    return out
