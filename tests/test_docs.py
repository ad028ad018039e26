"""The README and the guides (issue 29, point 3): the README stays a newcomer's page that links every guide; the
site builds with `mkdocs build --strict` (a broken link fails it); every Python program in them runs from another
directory (the OpenAI client against `augmenter serve llm=fake`), and the knowledge lines they show load."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from augmenter.knowledge.base import load_jsonl
from conftest import DATA

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _blocks(language: str) -> list[tuple[str, str]]:
    """(page, code) of every fenced block in `language` of the README and the guides (indented ones dedented)."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for code in re.findall(rf"^ *```{language}\n(.*?)^ *```", text, re.DOTALL | re.M):
            found.append((page.name, textwrap.dedent(code)))
    return found


def _mkdocs(config: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(out)],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


def test_the_readme_is_short_and_links_every_guide():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    nav = [next(iter(item.values())) for item in yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]]
    guides = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert set(nav) == guides, "every guide in the site's nav, and nothing else"
    linked = set(re.findall(r"\(docs/([\w.-]+\.md)\)", readme))
    assert guides - {"index.md"} <= linked, sorted(guides - {"index.md"} - linked)
    assert "docs/img/web_chat.png" in readme and (ROOT / "docs" / "img" / "web_chat.png").exists()


def test_the_site_builds_with_no_broken_link(tmp_path):
    out = _mkdocs(ROOT / "mkdocs.yml", tmp_path / "site")
    assert out.returncode == 0, out.stderr[-3000:]
    assert (tmp_path / "site" / "serving" / "index.html").exists()


def test_a_broken_link_fails_the_build(tmp_path):
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    with open(tmp_path / "docs" / "serving.md", "a", encoding="utf-8") as page:
        page.write("\nSee [the missing page](no-such-guide.md).\n")
    out = _mkdocs(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert out.returncode != 0 and "no-such-guide.md" in out.stderr


def test_the_knowledge_lines_shown_load(tmp_path):
    blocks = _blocks("json")
    assert blocks
    for page, code in blocks:
        path = tmp_path / "kb.jsonl"
        path.write_text(code, encoding="utf-8")
        assert len(load_jsonl(path)) == len(code.strip().splitlines()), page


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`augmenter serve llm=fake` on a free port: its URL."""
    work = tmp_path_factory.mktemp("serve")
    process = subprocess.Popen([sys.executable, "-m", "augmenter.cli.main", "serve", "llm=fake", "serve.port=0"],
                               cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    announced = process.stdout.readline()
    try:
        url = re.search(r"API at (http://\S+)/v1", announced)
        assert url, announced + (process.stderr.read() if process.poll() is not None else "")
        yield url.group(1)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


PROGRAMS = _blocks("python")


@pytest.mark.parametrize("page, code", PROGRAMS, ids=[f"{p}:{i}" for i, (p, _) in enumerate(PROGRAMS)])
def test_every_python_program_in_the_docs_runs(page, code, tmp_path, request):
    if "127.0.0.1:8000" in code:  # a client of the service: pointed at one that runs
        code = code.replace("http://127.0.0.1:8000", request.getfixturevalue("server"))
    env = {**os.environ, "AUGMENTER_DATA": str(DATA), "AUGMENTER_CACHE": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, f"{page}: {out.stderr[-3000:]}"
    assert out.stdout.strip() or "print(" not in code
