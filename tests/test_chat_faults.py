"""`augmenter chat` never dies from the LLM and never shows raw markup or escape codes: one scripted session per
fault-server mode; markup and escapes in user, model and knowledge text; shown text and `read_script` fuzzed."""

import io
import json
import re

import pytest
from fault_server import ESCAPES, HUGE, MARKUP, MODES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from augmenter.cli.chat import read_script
from augmenter.cli.main import main
from augmenter.cli.safe_text import clean, safe
from augmenter.errors import InputError

KEY = "augmenter-fault-test-key-7f3e9c21"  # matches no key pattern: only its registration can mask it
LINES = ["Does the Grand Meridian Hotel have a pool? [/red]", "And parking?"]
# "assistant>" with nothing after it (a reply too long for the line starts on the next one)
BLANK_REPLY = re.compile(r"^assistant> *\n(?:[ \t]*$|user> |\d+ turns written|  LLM failure)", re.M)
# the turns each mode leads to: "ok", "failed", or None (flaky: either)
STATUS = {**{m: "failed" for m in MODES}, "ok": "ok", "huge": "ok", "markup": "ok", "escapes": "ok", "flaky": None}


@pytest.fixture(autouse=True)
def plain_terminal(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("COLUMNS", "250")
    for var in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "OPENAI_BASE_URL", "AUGMENTER_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)


def chat(tmp_path, capsys, lines, *overrides):
    """Run a scripted chat in-process: (exit code, stdout, stderr, the --output records, the raw output file)."""
    script, out = tmp_path / "script.txt", tmp_path / "turns.jsonl"
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = main(["chat", "--trace", "--script", str(script), "--output", str(out), *overrides])
    captured = capsys.readouterr()
    raw = out.read_text(encoding="utf-8") if out.exists() else ""
    return code, captured.out, captured.err, [json.loads(line) for line in raw.splitlines()], raw


def openai_at(srv, *extra):
    return [
        "llm=openai",
        f"llm.base_url={srv.base_url}",
        f"llm.model={srv.model}",
        "llm.timeout=1",
        "llm.deadline=5",
        "llm.max_retries=1",
        "llm.backoff=0",
        "policy=no_knowledge",
        "utility=kf1",
        *extra,
    ]


def assert_safe(code, out, err, raw, expected_code=0):
    assert code == expected_code, err
    assert "Traceback" not in out + err
    assert "\x1b" not in out and "\x07" not in out
    assert KEY not in out + err + raw
    assert not BLANK_REPLY.search(out), "an empty reply shown as a blank line"


@pytest.mark.parametrize("mode", MODES)
def test_chat_survives_every_fault(mode, fault_server, tmp_path, capsys):
    fault_server.mode, fault_server.hang_seconds = mode, 3
    code, out, err, rows, raw = chat(tmp_path, capsys, LINES, *openai_at(fault_server))
    if mode == "auth":  # a wrong key: one line, exit 2, the turn taken is recorded as failed
        assert_safe(code, out, err, raw, expected_code=2)
        assert err.count("\n") == 1 and err.startswith("augmenter: error:") and "401" in err
        assert [r["status"] for r in rows] == ["failed"] and rows[0]["reason"]
        return
    assert_safe(code, out, err, raw)
    assert [r["turn"] for r in rows] == [0, 1]
    for row in rows:
        assert row["status"] == (STATUS[mode] or row["status"])
        assert (row["status"] == "failed") == (row["outcome"] == "failed") == ("reason" in row)
        assert row["memory"]["q"] in LINES
    assert "[/red]" in out  # the user's line, shown literally
    if STATUS[mode] == "failed":
        assert out.count("LLM failure: ") == 2 and "the language model is unavailable" in out
    if mode == "markup":
        assert f"assistant> {MARKUP}" in out
    if mode == "huge":
        assert HUGE in out.replace("\n", "")
    if mode == "escapes":
        assert "assistant> red" in out
        assert rows[0]["memory"]["response"] == ESCAPES  # the record keeps the raw text


def test_open_breaker_is_reported_and_the_session_goes_on(fault_server, tmp_path, capsys):
    fault_server.mode = "500"
    lines = [*LINES, "Is breakfast included?"]
    code, out, err, rows, raw = chat(
        tmp_path,
        capsys,
        lines,
        *openai_at(fault_server),
        "llm_guard.max_consecutive_failures=1",
        "llm_guard.cooldown=60",
    )
    assert_safe(code, out, err, raw)
    assert [r["status"] for r in rows] == ["failed"] * 3
    assert out.count("the LLM backend looks down") == 2 and "retrying at" in out
    assert "no calls are sent" in rows[2]["reason"] and rows[2]["memory"]["q"] == lines[2]
    assert f"{len(lines)} turns written" in out


def test_markup_and_escapes_in_user_model_and_knowledge_text(tmp_path, capsys, monkeypatch):
    kb = tmp_path / "kb.jsonl"
    kb.write_text(
        json.dumps(
            {
                "entity": "Blue [bold]Lagoon[/bold] Spa",
                "question": "Open on Sundays? [/red]",
                "answer": "Yes, \x1b[31mfrom 10 to 6\x1b[0m [/b] on Sundays.\x1b]0;pwned\x07",
            }
        )
        + "\n"
    )
    reply = "[/b] The Blue Lagoon Spa is open \x1b[2Jfrom 10 to 6 on Sundays. [link=file:///etc]x[/link]"
    monkeypatch.setenv("FAKE_REPLY", reply)
    code, out, err, rows, raw = chat(
        tmp_path,
        capsys,
        ["Is the Blue [bold]Lagoon[/bold] Spa open on Sundays? [/red]"],
        "llm=fake",
        "llm.default=${oc.env:FAKE_REPLY}",
        "knowledge=jsonl",
        f"knowledge.path={kb}",
    )
    assert_safe(code, out, err, raw)
    assert "user> Is the Blue [bold]Lagoon[/bold] Spa open on Sundays? [/red]" in out
    assert "candidate 1: [/b] The Blue Lagoon Spa is open from 10 to 6 on Sundays. [link=file:///etc]x[/link]" in out
    assert "Yes, from 10 to 6 [/b] on Sundays." in out and "pwned" not in out  # the evidence, cleaned
    memory = rows[0]["memory"]
    assert rows[0]["status"] == "ok" and memory["o"][0] == reply and "\x1b[31m" in memory["e"][0]["text"]


def test_a_reply_of_control_codes_alone_is_not_a_blank_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_REPLY", "\x1b[2J\x1b[H\x07")
    code, out, err, rows, raw = chat(
        tmp_path,
        capsys,
        ["Hello?"],
        "llm=fake",
        "llm.default=${oc.env:FAKE_REPLY}",
        "policy=no_knowledge",
        "utility=kf1",
    )
    assert_safe(code, out, err, raw)
    assert "assistant> (empty reply)" in out and rows[0]["memory"]["response"] == "\x1b[2J\x1b[H\x07"


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
    | st.lists(st.sampled_from(["\x1b[31m", "\x1b]0;t\x07", "\x1b", "[/b]", "[red]", "\x9b2J", "\r", "a b"])).map(
        "".join
    )
)
def test_shown_text_has_no_control_characters_and_never_breaks_the_console(text):
    console = Console(file=io.StringIO(), width=40, color_system=None)
    console.print(safe(("assistant> ", "bold"), text))
    shown = console.file.getvalue()
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", shown)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", clean(text))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300))
def test_read_script_raises_only_input_error(data, tmp_path):
    path = tmp_path / "script.txt"
    path.write_bytes(data)
    try:
        lines = read_script(path)
    except InputError as exc:
        assert "\n" not in str(exc)
        return
    for line in lines:
        assert line == line.strip() and line and not line.startswith("#") and not set(line) & {"\n", "\r"}


LINE = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\ufeff"), max_size=20)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(st.one_of(LINE, LINE.map(lambda s: "#" + s), st.just(""), st.just("  ")), max_size=8),
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
    bom=st.booleans(),
)
def test_read_script_returns_the_utterances(lines, newline, bom, tmp_path):
    path = tmp_path / "script.txt"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + newline.join(lines).encode("utf-8"))
    expected = [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")]
    assert read_script(path) == expected
