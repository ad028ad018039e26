"""`augmenter index`: build or update the index of a folder of documents, or show what it holds (`--status`).

augmenter index PATH... [--include GLOB] [--exclude GLOB] [--words N] [--overlap N] [--index-dir DIR]
augmenter index PATH... --status       documents, chunks, skipped files and why
"""

from __future__ import annotations

import argparse
import sys

from augmenter.errors import InputError


def index(args: argparse.Namespace) -> int:
    from augmenter.documents import IndexStore, default_index_dir, update_index

    if not args.paths and not args.index_dir:
        raise InputError("name the folders, files or globs to index (or --index-dir with --status)")
    if args.words is not None and args.words < 1:
        raise InputError(f"--words must be at least 1, got {args.words}")
    directory = args.index_dir or default_index_dir(args.paths)
    if args.status:
        return show_status(IndexStore(directory))
    quiet = args.verbosity < 0
    report = update_index(
        args.paths,
        directory,
        args.words,
        args.overlap,
        args.include,
        args.exclude,
        args.max_file_mb,
        rebuild=args.rebuild,
        progress=not quiet,
    )
    print(report.summary())
    if not report.documents:
        raise InputError("no document could be indexed (the warnings above say why)")
    return 0


def show_status(store) -> int:
    from augmenter.documents.manifest import Manifest

    generation = store.current()
    if generation is None:
        raise InputError(f"no document index at {store.directory}: run augmenter index PATH first")
    m = Manifest.from_json(generation.manifest)
    skipped = {rel: entry.reason for rel, entry in m.skipped.items()} | m.scan_skipped
    out = sys.stdout
    print(f"index {store.directory} ({generation.directory.name}, built {m.built_at or '?'})", file=out)
    globs = "".join(
        f"; {name} {' '.join(globs)}" for name, globs in (("include", m.include), ("exclude", m.exclude)) if globs
    )
    print(
        f"from {', '.join(m.sources)} (root {m.root}); chunks of at most {m.settings.words} words, "
        f"{m.settings.overlap} repeated{globs}",
        file=out,
    )
    print(f"{len(m.documents)} documents, {len(generation.chunks)} chunks:", file=out)
    width = min(60, max((len(rel) for rel in m.documents), default=0))
    for rel, entry in sorted(m.documents.items()):
        pages = f", {entry.pages} pages" if entry.pages else ""
        notes = f"  ({'; '.join(entry.notes)})" if entry.notes else ""
        print(
            f"  {rel:<{width}}  {entry.format or '?':<8} {entry.chunks:>4} chunk{'s' * (entry.chunks != 1)}{pages}  "
            f"{entry.title}{notes}",
            file=out,
        )
    if skipped:
        print(f"{len(skipped)} skipped:", file=out)
        for rel, reason in sorted(skipped.items()):
            print(f"  {rel}: {reason}", file=out)
    if m.unsupported or m.hidden:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(m.unsupported.items(), key=lambda kv: -kv[1]))
        print(
            f"not indexed: {sum(m.unsupported.values())} of unsupported types{f' ({kinds})' if kinds else ''}, "
            f"{m.hidden} hidden or junk",
            file=out,
        )
    return 0
