"""The README and the guides: the README stays a newcomer's page that links every guide; the
site builds with `mkdocs build --strict` (a broken link fails it); every Python program in them runs from another
directory (the OpenAI client against `augmenter serve llm=fake`), the knowledge lines and YAML files they show load,
and every command line of their bash blocks runs (on the fake LLM, in a scratch directory) or is exempted with why."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

from augmenter.knowledge.base import load_jsonl
from conftest import DATA, stop

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
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


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
    process = subprocess.Popen(
        [sys.executable, "-m", "augmenter.cli.main", "serve", "llm=fake", "serve.port=0"],
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    announced = process.stdout.readline()
    try:
        url = re.search(r"API at (http://\S+)/v1", announced)
        assert url, announced + (process.stderr.read() if process.poll() is not None else "")
        _answering(url.group(1) + "/")
        yield url.group(1)
    finally:
        stop(process)


PROGRAMS = _blocks("python")


@pytest.mark.parametrize("page, code", PROGRAMS, ids=[f"{p}:{i}" for i, (p, _) in enumerate(PROGRAMS)])
def test_every_python_program_in_the_docs_runs(page, code, tmp_path, request):
    if "127.0.0.1:8000" in code:  # a client of the service: pointed at one that runs
        code = code.replace("http://127.0.0.1:8000", request.getfixturevalue("server"))
    env = {**os.environ, "AUGMENTER_DATA": str(DATA), "AUGMENTER_CACHE": str(tmp_path / "cache")}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, f"{page}: {out.stderr[-3000:]}"
    assert out.stdout.strip() or "print(" not in code


# The YAML blocks: each is the file the page names just before it, and loads as that file.
def _yaml_blocks() -> list[tuple[str, str, str]]:
    """(page, file name, code) of every ```yaml block: the file is the last `name.yaml` the page shows before it."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block in re.finditer(r"^ *```yaml\n(.*?)^ *```", text, re.DOTALL | re.M):
            named = re.findall(r"`([\w.-]+\.ya?ml)`", text[: block.start()])
            found.append((page.name, named[-1] if named else "", textwrap.dedent(block.group(1))))
    return found


def _the_rules_file(page: str, path: Path) -> None:
    """A list of {if, then} rules that RulePolicy takes from `policy.file`: the rules of the page's inline
    `policy.rules=[...]` override, in the same order."""
    from augmenter.policies import RulePolicy

    specs = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(specs, list) and all(
        isinstance(s, dict) and "then" in s and set(s) <= {"if", "then"} for s in specs
    ), specs
    from_file = RulePolicy(file=path)
    assert [(r.condition, r.action.value) for r in from_file.rules] == [(s.get("if", ""), s["then"]) for s in specs]
    inline = [
        arg.split("=", 1)[1]
        for where, line in _commands()
        if where.startswith(page + ":")
        for arg in shlex.split(line)
        if arg.startswith("policy.rules=")
    ]
    assert inline, f"{page}: no `policy.rules=[...]` line to compare the file with"
    assert repr(RulePolicy(rules=yaml.safe_load(inline[0]))) == repr(from_file)


YAML_FILES = {"my_rules.yaml": _the_rules_file}  # the files a guide shows in YAML: how each is checked


def test_every_yaml_block_is_the_file_it_names(tmp_path):
    blocks = _yaml_blocks()
    assert blocks
    for page, name, code in blocks:
        assert name in YAML_FILES, f"{page}: a YAML block ({name or 'no file named before it'}) with no check"
        path = tmp_path / name
        path.write_text(code, encoding="utf-8")
        YAML_FILES[name](page, path)


# The ```bash blocks: every command line is run, on the fake LLM where it would load the embedded model, or it is
# exempted here with why; a line that is neither fails, so the guides cannot grow unchecked commands.
EXEMPT = {  # a regex searched in the command line: why it is not run
    r"^(pip|python3 -m venv|/usr/bin/time|du) ": "installs or measures the wheel (tests/test_install.py installs it)",
    r"^make (demo|test)$": "builds llama.cpp and fetches the embedded model; `make test` is the whole suite",
    r"^augmenter (eval|grid|precompute|train|converse)\b": "minutes to hours of model calls over a benchmark",
    r"^augmenter (report|curve|judge) runs/": "reads the records that a run above writes",
    r"^python bench/": "a benchmark over the full data sets",
    r"^ray start ": "starts a Ray cluster",
    r"llm\.base_url=(?!http://127\.0\.0\.1:8000/v1)": "the reader's own LLM server",
    r"^export \w+=\.\.\.$": "the reader's own secret",
    r"serve\.host=0\.0\.0\.0": "listens on every interface of the machine, on a fixed port",
    r"^augmenter --version; ": "`...` stands for any command (tests/test_cli_habits.py checks --version, -v, -q)",
}
# would load the embedded model (minutes on CI's CPUs): run with `llm=fake` added, which checks flags, overrides, files
EMBEDDED = r"^augmenter (chat|serve)\b(?!.*(\bllm=|--cfg|--help))"
SERVED = "http://127.0.0.1:8000"  # the service's address: pointed at `augmenter serve llm=fake` on a free port
# what a line run must print (a regex searched in its stdout): every entry whose first regex matches the line applies;
# a line with `> FILE` must leave FILE written, one with `--output FILE` one JSON record per scripted turn in FILE
EXPECT = [
    (r"^augmenter chat\b(?!.*(--cfg|--help))", r"^assistant> \S"),
    (r"^augmenter chat\b.*--trace", r"┃ action +┃"),
    (r"--demo docs|knowledge=docs", r"people/leave\.md, (Leave Policy > )?Annual leave"),  # the question's page, cited
    (r"knowledge=jsonl knowledge\.path=my_kb\.jsonl", r"^assistant> .*10 to 6"),  # the FAQ's answer, checked or quoted
    (r"task=dstc11(?!.*policy=trained)", r"\[[A-Z][A-Z0-9 &'-]+\] Q: "),  # a DSTC11 FAQ (entities in capitals)
    (r"policy=rules", r"^user> .*\ndraft \(checking\.\.\.\)> .*\nassistant> "),  # the rules: one draft, no revision
    (r"^augmenter \w+ .*--help", r"^usage: augmenter \w+"),  # (no page shows a --help line yet)
    (r"^augmenter (chat|serve|eval|grid|precompute|train|converse|judge) .*--help", r"^settings \(key=value"),
    (r"--cfg job policy=self_ask", r"^policy:\n  _target_: augmenter\.policies\.SelfAskPolicy$"),
    (r"^augmenter index (?!.*(--status|--help))", r"^\d+ documents, \d+ chunks; \d+ added, 0 changed, 0 deleted"),
    (r"^augmenter index .*--status", r"^\d+ documents, \d+ chunks:\n(?:  .*\n)*  people/leave\.md +markdown "),
    (r"^augmenter serve\b(?!.*--help)", r"^augmenter: web chat at http://127\.0\.0\.1:\d+/, OpenAI-compatible API at "),
    (r"^curl .*/v1/chat/completions", r'^data: \{.*"chat\.completion\.chunk"(?:.*\n)*^data: \[DONE\]$'),
]
# the question typed into an interactive chat (then end of input), by the knowledge it runs on
QUESTIONS = [
    (r"knowledge=docs", "How many days of annual leave do full-time employees get?"),
    (r"knowledge=jsonl", "Is the Blue Lagoon Spa open on Sundays?"),
    (r"", "Does the Grand Meridian Hotel have a pool?"),
]


def _command_lines(code: str) -> list[str]:
    """The commands of a bash block: a line ending with `\\` continues, `# ...` (outside quotes) is cut off."""
    lines, joined = [], ""
    for raw in code.splitlines():
        joined += raw.strip()
        if joined.endswith("\\"):
            joined = joined[:-1].rstrip() + " "
            continue
        quote, cut = "", len(joined)
        for i, char in enumerate(joined):
            if quote:
                quote = "" if char == quote else quote
            elif char in "'\"":
                quote = char
            elif char == "#" and (i == 0 or joined[i - 1].isspace()):
                cut = i
                break
        if joined[:cut].strip():
            lines.append(joined[:cut].strip())
        joined = ""
    return lines


def _bash_blocks() -> list[tuple[str, list[str]]]:
    """(page:line, its command lines) of every ```bash block."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block in re.finditer(r"^ *```bash\n(.*?)^ *```", text, re.DOTALL | re.M):
            where = f"{page.name}:{text.count(chr(10), 0, block.start()) + 1}"
            found.append((where, _command_lines(textwrap.dedent(block.group(1)))))
    return found


def _commands() -> list[tuple[str, str]]:
    return [(where, line) for where, lines in _bash_blocks() for line in lines]


def _exempt(line: str) -> str:
    return next((why for pattern, why in EXEMPT.items() if re.search(pattern, line)), "")


def _expected(line: str) -> list[str]:
    return [prints for pattern, prints in EXPECT if re.search(pattern, line)]


def _writes(line: str) -> list[str]:
    return re.findall(r"(?:\s>\s*|--output\s+)(\S+)", line)


def test_every_bash_line_is_run_or_exempted():
    commands = _commands()
    assert len(commands) > 40
    unchecked = [
        f"{where}: {line}"
        for where, line in commands
        if not _exempt(line) and not _expected(line) and not _writes(line)
    ]
    assert not unchecked, "run each (with what it must print in EXPECT) or exempt it in EXEMPT with why:\n" + "\n".join(
        unchecked
    )
    stale = [pattern for pattern in EXEMPT if not any(re.search(pattern, line) for _, line in commands)]
    assert not stale, f"exemptions that match no line of the docs: {stale}"
    assert _command_lines("a 'b # c' \\\n  d # e\n# f\n") == ["a 'b # c' d"]


@pytest.fixture
def workdir(tmp_path, untrained_policy_file):
    """A fresh working directory with what the pages ask the reader for: `my_turns.txt`, `my_kb.jsonl` (the README's
    knowledge lines), the YAML files the guides show, `~/handbook` (a copy of the sample handbook; HOME is in tmp),
    `../shared/data` (the data sets, beside it as beside a checkout), and `runs/train/t5/seed0/policy.pt` (a small
    untrained policy where `augmenter train` writes one). `augmenter` on PATH is this interpreter's."""
    if not (DATA / "dstc11-track5" / "knowledge.json").exists():
        pytest.fail(f"the data sets are not under {DATA}: set AUGMENTER_DATA")
    work, home, bin_ = tmp_path / "checkout", tmp_path / "home", tmp_path / "bin"
    for folder in (work, home, bin_, tmp_path / "shared", work / "runs" / "train" / "t5" / "seed0"):
        folder.mkdir(parents=True, exist_ok=True)
    (tmp_path / "shared" / "data").symlink_to(DATA.resolve(), target_is_directory=True)
    shutil.copytree(ROOT / "augmenter" / "documents" / "handbook", home / "handbook")
    shutil.copy(untrained_policy_file, work / "runs" / "train" / "t5" / "seed0" / "policy.pt")
    (work / "my_turns.txt").write_text(QUESTIONS[-1][1] + "\n", encoding="utf-8")
    (work / "my_kb.jsonl").write_text(next(code for page, code in _blocks("json") if page == "README.md"))
    for _, name, code in _yaml_blocks():
        (work / name).write_text(code, encoding="utf-8")
    (bin_ / "augmenter").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m augmenter.cli.main "$@"\n')
    (bin_ / "augmenter").chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(home),
        "COLUMNS": "200",
        "AUGMENTER_DATA": str(DATA),
        "AUGMENTER_CACHE": str(tmp_path / "cache"),
    }
    return work, env


def _answering(url: str) -> bytes:
    """The page at url, asked at once: the server listens before it announces its address (a client that
    connected on the announcement was refused when it listened only once uvicorn had started)."""
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200
        return response.read()


def _serve(line: str, work: Path, env: dict) -> str:
    """Start a `augmenter serve` line on a free port, load its web chat page, stop it with Ctrl-C: its stdout."""
    process = subprocess.Popen(
        ["bash", "-c", f"exec {line} serve.port=0"],
        cwd=work,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        announced = process.stdout.readline()
        url = re.search(r"web chat at (http://\S+/),", announced)
        assert url, announced + (process.stderr.read() if process.poll() is not None else "")
        assert b"<html" in _answering(url.group(1)).lower()
    finally:
        stop(process)
    errors = process.stderr.read()
    assert process.returncode in (0, 130) and "Traceback" not in errors, errors[-3000:]  # 130: stopped by Ctrl-C
    return announced


BASH = [(where, lines) for where, lines in _bash_blocks() if any(not _exempt(line) for line in lines)]


@pytest.mark.parametrize("where, lines", BASH, ids=[where for where, _ in BASH])
def test_every_bash_block_runs(where, lines, workdir, request):
    """The block's lines in order, in one working directory, each with bash: exit code 0 and what it must show."""
    work, env = workdir
    for line in [line for line in lines if not _exempt(line)]:
        if re.search(EMBEDDED, line):
            line += " llm=fake"
        if SERVED in line:
            line = line.replace(SERVED, request.getfixturevalue("server"))
        if re.search(r"^augmenter serve\b(?!.*--help)", line):
            stdout = _serve(line, work, env)
        else:
            question = next(q for pattern, q in QUESTIONS if re.search(pattern, line))
            out = subprocess.run(
                ["bash", "-c", line],
                cwd=work,
                env=env,
                input=question + "\n",
                text=True,
                capture_output=True,
                timeout=300,
            )
            assert out.returncode == 0, f"{where}: {line}\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
            stdout = out.stdout
        for prints in _expected(line):
            assert re.search(prints, stdout, re.M), f"{where}: {line}\nmust print {prints!r}; it printed:\n{stdout}"
        for name in _writes(line):
            written = (work / name).read_text(encoding="utf-8")
            assert written.strip(), f"{where}: {line} wrote nothing to {name}"
            if name.endswith(".jsonl"):
                script = re.search(r"--script (\S+)", line)
                turns = [json.loads(record) for record in written.splitlines()]
                assert (
                    script
                    and [t["memory"]["q"] for t in turns]
                    == (work / script.group(1)).read_text(encoding="utf-8").splitlines()
                ), f"{where}: {line}"
