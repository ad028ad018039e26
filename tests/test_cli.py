import json
import subprocess
import sys
from pathlib import Path

import augmenter.config
from augmenter.cli.main import main
from conftest import DATA


def run_cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "augmenter.cli.main", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def test_script_session_writes_every_working_memory(tmp_path, capsys):
    script = tmp_path / "script.txt"
    script.write_text("# a comment\nDoes the Grand Meridian Hotel have a pool?\n\nIs there free parking there?\n")
    out = tmp_path / "session.jsonl"
    assert main(["chat", "--script", str(script), "--output", str(out), "--trace", "llm=fake"]) == 0
    shown = capsys.readouterr().out
    assert "consolidate_knowledge" in shown and "evidence e:" in shown and "candidate 1" in shown
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["turn"], r["status"]) for r in rows] == [(0, "ok"), (1, "ok")]
    second = rows[1]["memory"]
    assert second["q"] == "Is there free parking there?" and len(second["h_q"]) == 2
    assert second["entities"][0]["name"] == "Grand Meridian Hotel"
    assert second["response"] and second["u"] and second["trace"]


def test_errors_are_one_line_not_tracebacks(tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"Is the caf\xe9 open?\n")
    cases = [
        (["chat", "--script", str(bad), "llm=fake"], "not UTF-8"),
        (["chat", "--script", str(tmp_path / "none.txt"), "llm=fake"], "script file not found"),
        (["chat", "policy=nonexistent", "llm=fake"], "Could not find 'policy/nonexistent'"),
        (
            ["chat", "task=dstc11", f"data_root={tmp_path}", "llm=fake", "--script", str(bad.with_name("x"))],
            "not found",
        ),
    ]
    malformed = tmp_path / "kb.jsonl"
    malformed.write_text("{broken\n")
    cases.append((["chat", "knowledge=jsonl", f"knowledge.path={malformed}", "llm=fake", "--demo"], "not valid JSON"))
    for args, message in cases:
        proc = run_cli(*args)
        assert proc.returncode == 2, proc.stderr
        assert message in proc.stderr and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1


def test_dstc11_task_runs_on_published_knowledge(tmp_path):
    script = tmp_path / "s.txt"
    script.write_text("Does the Gonville Hotel have free wifi?\n")
    out = tmp_path / "o.jsonl"
    assert (
        main(["chat", "--script", str(script), "--output", str(out), "llm=fake", "task=dstc11", f"data_root={DATA}"])
        == 0
    )
    mem = json.loads(out.read_text())["memory"]
    assert all(s["entity_name"] == "GONVILLE HOTEL" for s in mem["e"]) and mem["e"]


def _no_model(*args, **kwargs):
    raise AssertionError("the model was loaded before the arguments were checked")


def test_bad_script_and_output_paths_are_one_line_before_the_model_loads(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(augmenter.config, "build_agent", _no_model)
    script = tmp_path / "script.txt"
    script.write_text("Hello\n")
    a_file = tmp_path / "file"
    a_file.write_text("")
    cases = [
        (["--script", str(tmp_path)], f"script file is a directory: {tmp_path}"),
        (["--script", str(tmp_path / "none.txt")], "script file not found"),
        (["--script", str(script), "--output", str(tmp_path)], f"output file is a directory: {tmp_path}"),
        (["--script", str(script), "--output", str(a_file / "turns.jsonl")], "cannot write the output file"),
    ]
    for flags, message in cases:
        assert main(["chat", *flags, "llm=fake"]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_unreadable_script_is_one_line(tmp_path, capsys, monkeypatch):
    def denied(self):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)  # root reads any file: simulate a mode-000 one
    assert main(["chat", "--script", str(tmp_path / "s.txt"), "llm=fake"]) == 2
    err = capsys.readouterr().err
    assert err == f"augmenter: error: cannot read the script file {tmp_path / 's.txt'}: Permission denied\n"


def test_a_turn_that_crashes_is_recorded_and_the_session_goes_on(tmp_path, capsys):
    script = tmp_path / "script.txt"
    script.write_text("Hello\nAnd again\n")
    out = tmp_path / "session.jsonl"
    # a bug, not an LLM failure: the fake runs out of replies on every turn
    assert main(["chat", "--script", str(script), "--output", str(out), "llm=fake", "llm.default=null"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["memory"]["q"] for r in rows] == ["Hello", "And again"]
    assert all(r["status"] == "failed" and r["reason"].startswith("crash: RuntimeError: FakeLLM ran out") for r in rows)
    assert "this turn failed: crash: RuntimeError" in capsys.readouterr().out
