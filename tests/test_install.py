"""Installed as users install it: the wheel built from this checkout holds every file of the source tree;
installed into a fresh virtualenv outside the repository, a plain install names the extra a command needs (one
line, exit code 2, before anything runs), and with the extras the README names for the tour the README's examples
run from another directory: the Python API, `augmenter chat llm=fake --script`, `augmenter serve llm=fake` with one
request through the `openai` client, the gymnasium environment, and your own documents (`augmenter chat --demo docs`,
`augmenter index` of a copy of the sample handbook in every format, then `--status`). No network is needed: pip
installs from the wheelhouse `make test` builds (`make wheelhouse`), with no index, no cache and no configuration, and
any HTTP request it tried would go to a closed port."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
import zipfile
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

import pytest

from augmenter.extras import MODULES
from conftest import DATA, stop

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {
    "augmenter": ROOT / "augmenter",
    "augmenter/policies": ROOT / "policies",
    "augmenter/envs": ROOT / "envs",
    "augmenter/configs": ROOT / "configs",
}
TOUR_EXTRAS = "chat,serve,train,docs"  # what the README's tour installs ("Install", "Your own documents"), no model
WHEELHOUSE = Path(os.environ.get("AUGMENTER_WHEELHOUSE", ROOT / ".wheelhouse"))  # the Makefile's WHEELHOUSE
HANDBOOK = ROOT / "augmenter" / "documents" / "handbook"
HANDBOOK_FILES = ["welcome.md", "people/leave.md", "office-guide.html", "travel-and-expenses.pdf", "onboarding.docx"]
QUESTION = "Does the Grand Meridian Hotel have a pool?"


def _source_files() -> set[str]:
    """Every file of the package's source folders, by its path in the wheel."""
    files = set()
    for prefix, folder in SOURCES.items():
        for path in folder.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                files.add(f"{prefix}/{path.relative_to(folder).as_posix()}")
    return files - {"augmenter/configs/__pycache__"}


def _readme_block(marker: str, language: str = "python") -> str:
    """The README's code block in `language` that contains `marker`."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(rf"```{language}\n(.*?)```", readme, re.DOTALL) if marker in b]
    assert blocks, f"the README has no {language} block with {marker!r}"
    return textwrap.dedent(blocks[0])


def _run(args, cwd, timeout=600, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, **kwargs)


def _offline() -> dict:
    """pip's environment without the network: the wheelhouse alone (no index, cache or pip.conf), proxies that
    refuse."""
    built = WHEELHOUSE / ".built"
    if not built.exists():
        pytest.fail(f"no wheelhouse at {WHEELHOUSE}: `make wheelhouse` builds it (`make test` does)")
    assert set(TOUR_EXTRAS.split(",")) <= set(built.read_text().strip().split(",")), "the wheelhouse lacks extras"
    closed = "http://127.0.0.1:9"
    return {
        **os.environ,
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(WHEELHOUSE),
        "PIP_NO_CACHE_DIR": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        **{name: closed for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")},
    }


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = _run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(ROOT)], out, env=_offline()
    )  # setuptools and wheel, the build requirements, from the wheelhouse
    assert built.returncode == 0, built.stderr[-3000:]
    return next(out.glob("augmenter-*.whl"))


@pytest.fixture(scope="module")
def user(wheel, tmp_path_factory) -> dict:
    """A fresh virtualenv: the plain wheel first (the outputs of commands that need an extra are kept), then the
    tour's extras. The commands run in a directory of their own, away from the repository."""
    home = tmp_path_factory.mktemp("user")
    venv, work = home / "venv", home / "work"
    work.mkdir()
    assert _run([sys.executable, "-m", "venv", str(venv)], home).returncode == 0
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    plain = _run([*pip, str(wheel)], home, env=_offline())
    assert plain.returncode == 0, plain.stderr[-3000:]
    (work / "turns.txt").write_text(f"{QUESTION}\n", encoding="utf-8")
    for rel in HANDBOOK_FILES:  # a folder of one's own: a copy of some of the sample handbook, every format
        (work / "handbook" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(HANDBOOK / rel, work / "handbook" / rel)
    augmenter = str(venv / "bin" / "augmenter")
    without = {
        "chat": _run([augmenter, "chat", "llm=fake", "--script", "turns.txt"], work, 300),
        "serve": _run([augmenter, "serve", "llm=fake", "serve.port=0"], work, 300),
        "train": _run([augmenter, "train", "llm=fake"], work, 300),
        "index": _run([augmenter, "index", "handbook", "--index-dir", "index"], work, 300),
    }
    started = time.monotonic()
    extras = _run([*pip, f"{wheel}[{TOUR_EXTRAS}]"], home, 1200, env=_offline())
    assert extras.returncode == 0, extras.stderr[-3000:]
    return {
        "venv": venv,
        "work": work,
        "bin": venv / "bin",
        "without": without,
        "install_seconds": time.monotonic() - started,
    }


def test_the_wheel_holds_every_file_of_the_source_tree(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert _source_files() <= names, sorted(_source_files() - names)
    assert {
        "augmenter/api/__init__.py",
        "augmenter/prompts/files/assistant.yaml",
        "augmenter/serve/static/index.html",
        "augmenter/verification/models/fast.json",
        "augmenter/configs/llm/local.yaml",
    } <= names
    assert {n.split("/")[0] for n in names if not n.startswith("augmenter-")} == {"augmenter"}  # one top-level


def _requirements(extra: str, extras: dict) -> set[str]:
    """The distribution names an extra brings, its own extras' included (lower case, '-' for '_')."""
    names = set()
    for req in extras[extra]:
        name = re.match(r"[A-Za-z0-9_.-]+", req).group(0).lower().replace("_", "-")
        if name == "augmenter":
            for inner in re.search(r"\[(.*)\]", req).group(1).split(","):
                names |= _requirements(inner.strip(), extras)
        else:
            names.add(name)
    return names


def _closure(names: set[str]) -> set[str]:
    """The distributions named and those they require (one level: what installing them brings for certain)."""
    out = set(names)
    for name in names:
        try:
            reqs = requires(name) or []
        except PackageNotFoundError:
            continue
        out |= {re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower().replace("_", "-") for r in reqs if "extra ==" not in r}
    return out


def _imported_modules() -> set[str]:
    """The top-level modules the package's source imports (at module level or inside functions)."""
    found = set()
    for folder in SOURCES.values():
        for path in folder.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    found |= {a.name.split(".")[0] for a in node.names}
                elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"augmenter"}


def test_every_import_comes_from_the_core_or_the_extra_that_names_it(pyproject):
    project = pyproject["project"]
    extras = project["optional-dependencies"]
    core = _closure(
        {re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower().replace("_", "-") for r in project["dependencies"]}
    )
    providers = {m: {d.lower().replace("_", "-") for d in ds} for m, ds in packages_distributions().items()}
    declared = {m for names in MODULES.values() for m in names}
    for module in sorted(_imported_modules()):
        dists = providers.get(module, set())
        assert dists, f"{module} is imported but not installed here"
        if dists & core:
            continue
        assert module in declared, f"{module} ({', '.join(dists)}) is in no extra of augmenter/extras.py"
    for extra, modules in MODULES.items():
        brought = _closure(_requirements(extra, extras))
        for module in modules:
            assert providers.get(module, set()) & brought, f"the '{extra}' extra does not bring {module}"


def _one_line_naming(result: subprocess.CompletedProcess, extra: str) -> None:
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("augmenter: error: "), result.stderr
    assert f"pip install 'augmenter[{extra}]'" in result.stderr and "Traceback" not in result.stderr


def test_a_plain_install_names_the_extra_before_anything_runs(user):
    _one_line_naming(user["without"]["chat"], "chat")  # before the first turn, not "this turn failed: crash"
    _one_line_naming(user["without"]["serve"], "serve")  # before anything listens or says ready
    _one_line_naming(user["without"]["train"], "train")
    _one_line_naming(user["without"]["index"], "docs")
    assert "user>" not in user["without"]["chat"].stdout and "web chat at" not in user["without"]["serve"].stdout


def test_the_readme_python_api_example(user):
    out = _run([str(user["bin"] / "python"), "-c", _readme_block("from augmenter.api import Assistant")], user["work"])
    assert out.returncode == 0, out.stderr[-3000:]
    assert "No, parking costs 15 pounds per day in the underground garage. answered" in out.stdout.splitlines()
    assert "hotel:1:faq:2" in out.stdout


def test_a_scripted_chat_on_the_fake_llm(user):
    out = _run(
        [str(user["bin"] / "augmenter"), "chat", "llm=fake", "--script", "turns.txt", "--output", "out.jsonl"],
        user["work"],
    )
    assert out.returncode == 0, out.stderr[-3000:]
    records = [json.loads(line) for line in (user["work"] / "out.jsonl").read_text().splitlines()]
    assert [r["memory"]["q"] for r in records] == [QUESTION] and records[0]["status"] == "ok"
    assert "assistant>" in out.stdout and "failed" not in out.stdout


def test_serve_answers_the_openai_client(user):
    server = subprocess.Popen(
        [str(user["bin"] / "augmenter"), "serve", "llm=fake", "serve.port=0"],
        cwd=user["work"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        announced = server.stdout.readline()  # printed once the agents are built and the socket listens (sock.listen)
        url = re.search(r"API at (http://\S+)/v1", announced)
        assert url, announced + server.stderr.read() if server.poll() is not None else announced
        client = _readme_block("from openai import OpenAI").replace("http://127.0.0.1:8000", url.group(1))
        out = _run([str(user["bin"] / "python"), "-c", client], user["work"], 300)
        assert out.returncode == 0, out.stderr[-3000:]
        answer, usage, citations = out.stdout.splitlines()
        assert answer.strip() and re.fullmatch(r"\d+ \d+", usage) and citations.startswith("[")
    finally:
        stop(server)


def test_the_gymnasium_environment(user):
    code = _readme_block('gymnasium.make("augmenter/Turn-v0"')
    env = {**os.environ, "AUGMENTER_DATA": str(DATA)}
    out = _run([str(user["bin"] / "python"), "-c", code + "\nprint(sorted(obs), reward)"], user["work"], env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.splitlines()[-1].startswith("['features', 'text']")


def test_your_own_documents(user):
    """The docs extra's readers, installed: the sample handbook's demo, then a folder of one's own indexed (a
    Markdown, an HTML, a PDF and a Word file) and listed; the index goes to the cache, kept away from $HOME."""
    env = {**os.environ, "AUGMENTER_CACHE": str(user["work"] / "cache")}
    augmenter = str(user["bin"] / "augmenter")
    demo = _run([augmenter, "chat", "--demo", "docs", "llm=fake", "--output", "docs.jsonl"], user["work"], env=env)
    assert demo.returncode == 0, demo.stderr[-3000:]
    records = [json.loads(line) for line in (user["work"] / "docs.jsonl").read_text().splitlines()]
    assert len(records) == 4 and {r["status"] for r in records} == {"ok"} and "failed" not in demo.stdout
    assert records[0]["memory"]["e"][0]["id"].startswith("people/leave.md#")  # the annual-leave question's page
    indexed = _run([augmenter, "index", "handbook"], user["work"], env=env)
    assert indexed.returncode == 0, indexed.stderr[-3000:]
    assert indexed.stdout.startswith(f"{len(HANDBOOK_FILES)} documents, ") and "skipped" not in indexed.stdout
    assert "warning" not in indexed.stderr, indexed.stderr
    assert str(user["work"] / "cache" / "documents") in indexed.stdout
    status = _run([augmenter, "index", "handbook", "--status"], user["work"], env=env)
    assert status.returncode == 0, status.stderr[-3000:]
    listed = {line.split()[0]: line.split()[1] for line in status.stdout.splitlines() if line.startswith("  ")}
    assert listed == {
        "welcome.md": "markdown",
        "people/leave.md": "markdown",
        "office-guide.html": "html",
        "travel-and-expenses.pdf": "pdf",
        "onboarding.docx": "word",
    }, status.stdout
