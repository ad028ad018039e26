"""Build the documentation folders the documents benchmark asks questions over: public documentation sets as users
have them, Markdown or reStructuredText with some pages turned into PDF, HTML and Word, and a few broken files.

    python bench/docsets.py --mirror /path/to/mirrors [--only typer,httpx]

Each set is read from a git mirror of its public repository at the commit below (`--mirror` holds
`<owner>+<name>/repo`, bare git directories), written to `shared/docsets/<split>/<set>/`, and described in
`shared/docsets/MANIFEST.md`. Pages are turned into other formats with pandoc (HTML, Word) and LibreOffice (PDF from
the Word file), which only this script needs (`apt-get install pandoc libreoffice-writer-nogui`). Every tenth page,
counted in path order from the second, becomes a PDF, from the fifth an HTML page, from the eighth a Word file.

The split says what a set is for: `dev` sets are the ones augmenter's documents path is tuned on, `report` sets are
where its figures come from (never tuned on). FastAPI's documentation is not among them: it is held back for
acceptance.
"""

from __future__ import annotations

import argparse
import fnmatch
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "shared" / "docsets"


@dataclass
class DocSet:
    split: str
    repo: str
    commit: str
    licence: str
    root: str  # the folder of the repository the pages are under
    include: list[str]  # globs relative to root
    exclude: list[str] = field(default_factory=list)
    markup: str = "gfm"  # pandoc's reader for the pages (markdown: with YAML front matter)
    what: str = ""


SETS = {
    "typer": DocSet(
        "dev",
        "fastapi/typer",
        "9a7b2e83f6b62c750d6026b0de9ebf2026a8b8fa",
        "MIT",
        "docs",
        ["**.md"],
        ["release-notes.md", "reference/*", "about/*", "resources/*"],
        what="a CLI library's MkDocs Material documentation (include directives, admonitions, heading ids)",
    ),
    "rich": DocSet(
        "dev",
        "Textualize/rich",
        "42899d8a0a96b121a514516f4be9db44ff7aeaf3",
        "MIT",
        "docs/source",
        ["**.rst"],
        ["reference/*", "reference.rst", "appendix.rst"],
        markup="rst",
        what="a terminal library's Sphinx documentation in reStructuredText",
    ),
    "18f-tools": DocSet(
        "dev",
        "18F/handbook",
        "1e4955634d0369f17e5bbc0ebbf8f62e2a3dfe4b",
        "public domain (US Government)",
        "pages",
        ["tools/**.md", "getting-started/**.md"],
        ["tools/vmware-*", "tools/smartsheet.md", "tools/analytics.md"],
        markup="markdown",
        what="a government agency handbook: the tools and getting-started pages",
    ),
    "httpx": DocSet(
        "report",
        "encode/httpx",
        "ae1b9f66238f75ced3ced5e4485408435de10768",
        "BSD-3-Clause",
        "docs",
        ["**.md"],
        what="an HTTP client's MkDocs documentation",
    ),
    "requests": DocSet(
        "report",
        "psf/requests",
        "1f6589ec3a1ee910f9a65cc3ceac60b26677bc0e",
        "Apache-2.0",
        "docs",
        ["**.rst"],
        ["dev/authors.rst"],
        markup="rst",
        what="an HTTP library's Sphinx documentation in reStructuredText",
    ),
    "18f-leave": DocSet(
        "report",
        "18F/handbook",
        "1e4955634d0369f17e5bbc0ebbf8f62e2a3dfe4b",
        "public domain (US Government)",
        "pages",
        [
            "travel-and-leave/**.md",
            "general-information-and-resources/employee-resources-policies/*.md",
            "general-information-and-resources/tech-policies/*.md",
        ],
        ["general-information-and-resources/tech-policies/open-source.md"],
        markup="markdown",
        what="a government agency handbook: the travel, leave, employee and tech policy pages",
    ),
}
FORMATS = {2: "pdf", 5: "html", 8: "docx"}  # page number in path order modulo 10 -> the format it is turned into


def _git(mirror: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(mirror), *args], check=True, capture_output=True).stdout


def _match(path: str, globs: list[str]) -> bool:
    return any(fnmatch.fnmatch(path, g) or fnmatch.fnmatch(path, g.replace("**", "*")) for g in globs)


def pages(docset: DocSet, mirror: Path) -> list[str]:
    names = _git(mirror, "ls-tree", "-r", "--name-only", docset.commit, docset.root).decode().splitlines()
    rel = [n[len(docset.root) + 1 :] for n in names]
    return sorted(r for r in rel if _match(r, docset.include) and not _match(r, docset.exclude))


def convert(source: Path, target: Path, markup: str, title: str) -> None:
    """`source` (a page) as `target` (.html, .docx or .pdf, by its suffix)."""
    kind = target.suffix[1:]
    if kind == "html":
        subprocess.run(
            [
                "pandoc",
                "-f",
                markup,
                "-t",
                "html5",
                "-s",
                "--metadata",
                f"title={title}",
                "-o",
                str(target),
                str(source),
            ],
            check=True,
            capture_output=True,
        )
        return
    with tempfile.TemporaryDirectory() as tmp:
        docx = target if kind == "docx" else Path(tmp) / (target.stem + ".docx")
        subprocess.run(["pandoc", "-f", markup, "-o", str(docx), str(source)], check=True, capture_output=True)
        if kind == "pdf":
            subprocess.run(
                ["soffice", "--headless", "--convert-to", "pdf", "--outdir", tmp, str(docx)],
                check=True,
                capture_output=True,
                timeout=300,
            )
            shutil.move(Path(tmp) / (target.stem + ".pdf"), target)


def broken(folder: Path, converted: dict[str, str]) -> list[str]:
    """Files users' folders have that cannot be read: an empty page, a PDF cut short, a 'Word file' that is not."""
    made = []
    (folder / "notes-draft.md").write_bytes(b"")
    made.append("notes-draft.md (empty)")
    pdf = next((p for p, k in converted.items() if k == "pdf"), None)
    if pdf:
        data = (folder / pdf).read_bytes()
        (folder / "old-export.pdf").write_bytes(data[: len(data) // 3])
        made.append("old-export.pdf (a PDF cut to its first third)")
    (folder / "meeting-notes.docx").write_text("These notes were saved as plain text with a .docx name.\n")
    made.append("meeting-notes.docx (plain text, not a Word file)")
    return made


def build(name: str, docset: DocSet, mirrors: Path) -> dict:
    mirror = mirrors / docset.repo.replace("/", "+") / "repo"
    folder = OUT / docset.split / name
    shutil.rmtree(folder, ignore_errors=True)
    converted: dict[str, str] = {}
    listed = pages(docset, mirror)
    for n, rel in enumerate(listed, start=1):
        data = _git(mirror, "show", f"{docset.commit}:{docset.root}/{rel}")
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        kind = FORMATS.get(n % 10)
        if kind is None:
            target.write_bytes(data)
            continue
        with tempfile.TemporaryDirectory() as tmp:
            source = Path(tmp) / Path(rel).name
            source.write_bytes(data)
            out = target.with_suffix(f".{kind}")
            title = Path(rel).stem.replace("-", " ").replace("_", " ").capitalize()
            convert(source, out, docset.markup, title)
        converted[str(out.relative_to(folder))] = kind
    made = broken(folder, converted)
    print(f"{name}: {len(listed)} pages, {len(converted)} converted, {len(made)} broken files", file=sys.stderr)
    return {"name": name, "pages": len(listed), "converted": converted, "broken": made}


def manifest(built: list[dict]) -> str:
    lines = [
        "# Documentation sets for the documents benchmark",
        "",
        "Written by `python bench/docsets.py --mirror DIR` (see its docstring). Each folder is one set: a user's",
        "folder of documentation, pages from the public repository at the commit named, some turned into PDF,",
        "HTML and Word, and three broken files. `dev` sets are tuned on; `report` sets are only reported on.",
        "",
        "| set | split | repository @ commit | licence | what | pages | as PDF / HTML / Word |",
        "|---|---|---|---|---|---|---|",
    ]
    for b in built:
        d = SETS[b["name"]]
        kinds = [sum(k == f for k in b["converted"].values()) for f in ("pdf", "html", "docx")]
        lines.append(
            f"| {b['name']} | {d.split} | {d.repo} @ {d.commit[:12]} | {d.licence} | {d.what} | "
            f"{b['pages']} | {' / '.join(map(str, kinds))} |"
        )
    lines += [
        "",
        "Broken files in every set: `notes-draft.md` (empty), `old-export.pdf` (a PDF cut to its first "
        "third), `meeting-notes.docx` (plain text). Licences: each set keeps its project's licence; the 18F "
        "handbook is a work of the US Government.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, required=True, help="folder of <owner>+<name>/repo git mirrors")
    parser.add_argument("--only", default="", help="comma-separated set names (default: all)")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or list(SETS)
    built = [build(n, SETS[n], args.mirror) for n in names]
    if not args.only:
        (OUT / "MANIFEST.md").write_text(manifest(built))


if __name__ == "__main__":
    main()
