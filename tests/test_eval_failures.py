"""An eval never loses or mis-scores a turn. Failed, empty and crashed turns are recorded as failed,
never scored, counted, and retried on resume; `eval.max_failed`; an open circuit breaker or a fatal LLM error
stops the run with its records kept; damaged records files; the run lock; the fault server end to end."""

import json
import logging
import multiprocessing
import os
import queue
import subprocess
import sys
import threading
import time

import pytest

from augmenter.cli.main import main
from augmenter.config import build_evaluator, build_task, compose
from augmenter.errors import CircuitOpenError, ConfigError, LLMError, LLMFatalError
from augmenter.eval.runner import EvalFailed, Evaluator, read_records, run_lock, summarize
from augmenter.llm import Completion, FakeLLM
from conftest import DATA

RUN = "table2_bm25_feedback"  # the default experiment's run name


class ScriptedLLM(FakeLLM):
    """FakeLLM that raises `errors[needle]` or answers `replies[needle]` when the prompt contains `needle`;
    every prompt is kept in `prompts` (class attributes: the config names the class, tests set them)."""

    errors: dict = {}
    replies: dict = {}
    prompts: list = []

    def complete(self, messages, params):
        prompt = "\n".join(m["content"] for m in messages)
        type(self).prompts.append(prompt)
        for needle, error in self.errors.items():
            if needle in prompt:
                raise error
        for needle, reply in self.replies.items():
            if needle in prompt:
                return Completion(text=reply, prompt_tokens=len(prompt.split()))
        return super().complete(messages, params)


@pytest.fixture
def llm(monkeypatch):
    for name in ("errors", "replies"):
        monkeypatch.setattr(ScriptedLLM, name, {})
    monkeypatch.setattr(ScriptedLLM, "prompts", [])
    return ScriptedLLM


def _args(tmp_path, *extra):
    return [
        f"data_root={DATA}",
        "llm=fake",
        f"llm._target_={__name__}.ScriptedLLM",
        "llm_cache.enabled=false",
        f"eval.out_dir={tmp_path}",
        "eval.progress=false",
        "eval.limit=4",
        *extra,
    ]


def _evaluator(tmp_path, *extra) -> Evaluator:
    return _built(compose("eval", _args(tmp_path, *extra)))


def _built(cfg) -> Evaluator:
    """An evaluator of `cfg`, its agent and task built from the same config (as the CLI builds them)."""
    return build_evaluator(cfg)


@pytest.fixture
def sample(tmp_path, dstc11_kb):
    """The 4 turns of the sample, in order."""
    return build_task(compose("eval", _args(tmp_path))).turns(4, 0)


def _asked(llm, items) -> set[str]:
    """The dialogue ids of the sample turns whose question the LLM was asked."""
    return {it.id for it in items if any(it.q in p for p in llm.prompts)}


def _statuses(ev: Evaluator) -> list[str]:
    return [r["status"] for r in read_records(ev.records_path)]


# ---- failed turns: recorded, counted, never scored, retried -------------------------------------------------
def test_failed_turns_are_recorded_counted_and_never_scored(tmp_path, llm, sample):
    llm.errors = {sample[1].q: LLMError("HTTP 500 from the server\n(internal error)")}
    ev = _evaluator(tmp_path, "eval.max_failed=1")
    summary = ev.run()
    records = read_records(ev.records_path)
    assert [r["dialogue_id"] for r in records] == [it.id for it in sample]
    failed = records[1]
    assert failed["status"] == "failed" and failed["outcome"] == "failed" and failed["metrics"] == {}
    assert failed["error"] == "HTTP 500 from the server (internal error)"  # one line
    assert all(r["status"] == "ok" and r["error"] is None and "KF1" in r["metrics"] for r in records if r is not failed)
    assert summary["turns"] == 4 and summary["ok"] == 3 and summary["failed"] == 1 and summary["pending"] == 0
    assert summary["failure_reasons"] == {failed["error"]: 1}
    assert json.loads((ev.dir / "summary.json").read_text()) == summary
    # the metrics and costs are those of the same turns without the failed one
    llm.errors = {}
    clean = _evaluator(tmp_path, "name=clean")
    clean.run()
    kept = [r for r in read_records(clean.records_path) if r["dialogue_id"] != failed["dialogue_id"]]
    expected = summarize(kept)
    assert summary["metrics"] == pytest.approx(expected["metrics"])
    assert summary["cost"]["llm_calls"] == expected["cost"]["llm_calls"]


def test_resume_retries_exactly_the_failed_turns(tmp_path, llm, sample):
    llm.errors = {sample[1].q: LLMError("HTTP 500"), sample[3].q: LLMError("no answer within 1 s")}
    ev = _evaluator(tmp_path, "eval.max_failed=2")
    assert ev.run()["failed"] == 2
    before = ev.records_path.read_text().splitlines()
    llm.errors, llm.prompts = {}, []
    summary = _evaluator(tmp_path, "eval.max_failed=2").run()
    assert _asked(llm, sample) == {sample[1].id, sample[3].id}
    assert summary["ok"] == 4 and summary["failed"] == 0 and summary["failure_reasons"] == {}
    after = ev.records_path.read_text().splitlines()  # one record per turn, in sample order, the ok ones untouched
    assert len(after) == 4 and after[0] == before[0] and after[2] == before[2]
    assert _statuses(ev) == ["ok"] * 4
    llm.prompts = []
    _evaluator(tmp_path).run()
    assert llm.prompts == []  # nothing left to do


def test_max_failed_as_a_count_and_as_a_share(tmp_path, llm, sample):
    llm.errors = {sample[1].q: LLMError("HTTP 500: internal error")}
    for value, passes in ((1, True), (0.25, True), (0.5, True), (0, False), (0.2, False)):
        ev = _evaluator(tmp_path, f"eval.max_failed={value}")  # a changed allowance still resumes
        if passes:
            assert ev.run()["failed"] == 1
            continue
        with pytest.raises(
            EvalFailed,
            match=r"1 of 4 turns failed .*most common reason \(1 of them\): HTTP 500: "
            r"internal error.*run the same command again to retry them",
        ) as info:
            ev.run()
        assert info.value.summary["failed"] == 1
        assert json.loads((ev.dir / "summary.json").read_text())["failed"] == 1
    cfg = compose("eval", _args(tmp_path))
    for bad in (1.5, -1, "some"):  # also when the config did not go through the schema
        cfg.eval.max_failed = bad
        with pytest.raises(ConfigError, match="eval.max_failed"):
            _built(cfg).run()


def test_cli_exits_2_with_one_line_and_keeps_the_records(tmp_path, llm, sample, capsys):
    llm.errors = {sample[0].q: LLMError("HTTP 500")}
    assert main(["eval", *_args(tmp_path)]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]  # (above it: the encoder's loading bar)
    assert last.startswith("augmenter: error: ") and "1 of 4 turns failed" in last and "retry" in last
    ev = _evaluator(tmp_path)
    assert _statuses(ev) == ["failed", "ok", "ok", "ok"]
    assert json.loads((ev.dir / "summary.json").read_text())["failed"] == 1


def test_an_empty_response_is_a_failed_turn(tmp_path, llm, sample):
    llm.replies = {sample[2].q: "  "}
    ev = _evaluator(tmp_path, "eval.max_failed=1")
    assert ev.run()["failed"] == 1
    record = read_records(ev.records_path)[2]
    assert record["status"] == "failed" and record["error"] == "empty response" and record["metrics"] == {}


def test_a_crashing_turn_is_recorded_as_failed_and_the_run_goes_on(tmp_path, llm, sample, monkeypatch, caplog):
    from augmenter.agent import Agent

    respond = Agent.respond

    def crashing(self, q, *args, **kwargs):
        if q == sample[2].q:
            raise KeyError("boom")
        return respond(self, q, *args, **kwargs)

    monkeypatch.setattr(Agent, "respond", crashing)
    caplog.set_level(logging.DEBUG, logger="augmenter.eval.runner")
    ev = _evaluator(tmp_path, "eval.max_failed=1")
    summary = ev.run()
    record = read_records(ev.records_path)[2]
    assert record["status"] == "failed" and record["error"] == "crash: KeyError: 'boom'" and record["memory"] is None
    assert summary["ok"] == 3 and summary["failure_reasons"] == {"crash: KeyError: 'boom'": 1}
    assert "Traceback" in caplog.text and "crashing" in caplog.text  # the traceback, at debug level


def test_records_written_before_turn_status(tmp_path, llm, sample):
    ev = _evaluator(tmp_path)
    ev.run()
    records = read_records(ev.records_path)
    for r in records:
        del r["status"], r["error"]
    records[1]["outcome"] = "failed"  # the LLM failed
    records[2]["response"] = ""
    ev.records_path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert summarize(records, with_bertscore=False)["failed"] == 2
    llm.prompts = []
    assert _evaluator(tmp_path).run()["ok"] == 4
    assert _asked(llm, sample) == {sample[1].id, sample[2].id}


def test_run_options_do_not_block_resuming(tmp_path, llm):
    _evaluator(tmp_path, "eval.limit=1", "eval.restart=true").run()
    _evaluator(tmp_path, "eval.limit=1", "eval.max_failed=0.5", "llm_guard.cooldown=1").run()  # resumes
    with pytest.raises(ConfigError, match="different configuration"):
        _evaluator(tmp_path, "eval.limit=1", "utility.threshold=0.5").run()
    stored = _evaluator(tmp_path, "eval.limit=1").dir / "config.json"
    stored.write_bytes(b'{"name": "cut sh')  # left by an older version that wrote it in place
    with pytest.raises(ConfigError, match="config.json is unreadable: delete it"):
        _evaluator(tmp_path, "eval.limit=1").run()
    stored.unlink()
    assert _evaluator(tmp_path, "eval.limit=1").run()["ok"] == 1


# ---- the LLM is down: stop at once, keep the records, resume ----------------------------------------------------
def test_an_open_circuit_stops_the_run_keeps_the_records_and_resumes(tmp_path, llm, sample):
    llm.errors = {sample[2].q: CircuitOpenError("the LLM failed 5 calls in a row")}
    ev = _evaluator(tmp_path)
    with pytest.raises(
        CircuitOpenError,
        match=r"eval stopped after 5 consecutive LLM failures .*2 of 4 turns "
        r"recorded .*run the same command again to resume",
    ):
        ev.run()
    assert _asked(llm, sample) == {it.id for it in sample[:3]}  # nothing after the stop
    assert _statuses(ev) == ["ok", "ok"]
    summary = json.loads((ev.dir / "summary.json").read_text())
    assert summary["ok"] == 2 and summary["pending"] == 2 and summary["failed"] == 0
    llm.errors, llm.prompts = {}, []
    assert _evaluator(tmp_path).run()["ok"] == 4
    assert _asked(llm, sample) == {sample[2].id, sample[3].id}


def test_a_fatal_llm_error_stops_the_eval_at_once(tmp_path, llm, sample, capsys):
    llm.errors = {sample[1].q: LLMFatalError("401: Incorrect API key provided")}
    assert main(["eval", *_args(tmp_path)]) == 2
    assert "401: Incorrect API key provided" in capsys.readouterr().err
    assert _asked(llm, sample) == {sample[0].id, sample[1].id}
    assert _statuses(_evaluator(tmp_path)) == ["ok"]


def test_grid_goes_on_after_failed_turns_and_stops_when_the_llm_is_down(tmp_path, monkeypatch, capsys):
    ran = []

    def run(self):
        ran.append(self.cfg.name)
        summary = {
            "name": self.cfg.name,
            "run_dir": str(self.dir),
            "turns": 3,
            "ok": 2,
            "failed": 1,
            "pending": 0,
            "failure_reasons": {"HTTP 500": 1},
            "metrics": {"KF1": 17.256, "length": 12.0},
            "cost": {"llm_calls": 1.5, "turn_seconds": 0.25},
        }
        if self.cfg.name == "table2_llm_only":
            raise EvalFailed("table2_llm_only: 1 of 3 turns failed", summary)
        return summary

    monkeypatch.setattr(Evaluator, "run", run)
    args = ["grid", "--only", "table2_llm_only,table2_gold_feedback", *_args(tmp_path)]
    assert main(args) == 2
    assert ran == ["table2_llm_only", "table2_gold_feedback"]
    out, err = capsys.readouterr()
    assert "2 of 3 turns scored, 1 failed (most common: HTTP 500)" in out
    assert "KF1 17.26 (%)" in out and "length 12.00 (words)" in out
    assert "LLM calls 1.50 (per turn)" in out and "wall time 0.25 (s per turn)" in out
    assert "1 of 2 experiments" in err.splitlines()[-1] and "table2_llm_only" in err.splitlines()[-1]

    def down(self):
        ran.append(self.cfg.name)
        raise CircuitOpenError("eval stopped after 5 consecutive LLM failures")

    ran.clear()
    monkeypatch.setattr(Evaluator, "run", down)
    assert main(args) == 2 and ran == ["table2_llm_only"]


# ---- damaged records files ----------------------------------------------------------------------------------------
def test_damaged_records_are_skipped_rerun_and_reported(tmp_path, llm, sample, caplog):
    ev = _evaluator(tmp_path)
    ev.run()
    lines = ev.records_path.read_bytes().split(b"\n")
    cut_in_a_character = lines[2][:-10] + "é".encode()[:1]
    ev.records_path.write_bytes(
        b"\n".join(
            [
                lines[0],
                b"",
                b"[1, 2]",
                lines[1],
                b"  ",
                cut_in_a_character,
                b'"a string"',
                b"\xff\xfe garbage",
                lines[3][:50],
            ]
        )
    )
    caplog.set_level(logging.WARNING, logger="augmenter.eval.runner")
    assert [r["dialogue_id"] for r in read_records(ev.records_path)] == [it.id for it in sample[:2]]
    assert "skipped 5 unreadable line(s)" in caplog.text
    assert main(["report", str(ev.dir.parent), "--out", str(tmp_path / "rep"), "--no-bertscore"]) == 0
    llm.prompts = []
    assert _evaluator(tmp_path).run()["ok"] == 4
    assert _asked(llm, sample) == {sample[2].id, sample[3].id}
    assert len(ev.records_path.read_text().splitlines()) == 4


def test_report_counts_failed_turns_and_flags_incomplete_runs(tmp_path, llm, sample):
    llm.errors = {sample[1].q: LLMError("HTTP 500")}
    _evaluator(tmp_path, "eval.max_failed=1").run()
    llm.errors = {it.q: LLMError("HTTP 503") for it in sample}
    _evaluator(tmp_path, "name=all_failed", "eval.max_failed=4").run()
    out = tmp_path / "rep"
    assert main(["report", str(tmp_path / "dstc11-dev-n4-seed0"), "--out", str(out), "--no-bertscore"]) == 0
    text = (out / "report.md").read_text()
    assert "| turns | failed turns |" in text and f"(`{RUN}`) | 3 | 1 |" in text
    assert "**Incomplete runs**" in text and "`all_failed`: turns: 0 scored, 4 failed (most common: HTTP 503)" in text
    assert f"`{RUN}`: turns: 3 scored, 1 failed (most common: HTTP 500)" in text
    assert "(`all_failed`) |" not in text  # nothing scored: in no table


# ---- the run lock --------------------------------------------------------------------------------------------------
def _contend(directory, start, done, results) -> None:
    start.wait(timeout=60)
    try:
        with run_lock(directory):
            results.put("won")
            done.wait(timeout=60)  # held until every contender has tried
    except ConfigError:
        results.put("refused")
        done.wait(timeout=60)


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.parametrize("kind", ["process", "thread"])
@pytest.mark.parametrize("existing", [None, "dead pid", "reused pid"])
def test_exactly_one_of_simultaneous_evals_gets_the_lock(tmp_path, kind, existing, monkeypatch):
    def slowed(call):
        def slow(*args, **kwargs):
            time.sleep(0.01)
            return call(*args, **kwargs)

        return slow

    # widen every window between a check (does the lock exist? is its pid alive?) and the write that follows:
    # a check-then-write lock lets several contenders through every time
    monkeypatch.setattr(os, "stat", slowed(os.stat))
    monkeypatch.setattr(os, "kill", slowed(os.kill))
    n = 8
    if kind == "process":
        ctx = multiprocessing.get_context("fork")
        make, barrier, results = ctx.Process, ctx.Barrier, ctx.Queue()
    else:
        make, barrier, results = threading.Thread, threading.Barrier, queue.Queue()
    for round_ in range(3):
        directory = tmp_path / f"run{round_}"
        directory.mkdir()
        if existing:  # a stale lock: a killed old-style eval's bare pid, or a killed eval's pid now reused
            text = str(_dead_pid()) if existing == "dead pid" else f"{os.getpid()} flock"
            (directory / "run.lock").write_text(text)
        start, done = barrier(n), barrier(n)
        workers = [make(target=_contend, args=(directory, start, done, results)) for _ in range(n)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(timeout=60)
        outcomes = sorted(results.get(timeout=5) for _ in range(n))
        assert outcomes == ["refused"] * (n - 1) + ["won"]
        assert not (directory / "run.lock").exists()  # released


def test_a_live_holder_is_named_and_a_killed_one_frees_the_lock_at_once(tmp_path):
    code = (
        "import sys, time; from pathlib import Path; from augmenter.eval.runner import run_lock\n"
        "with run_lock(Path(sys.argv[1])):\n    print('locked', flush=True); time.sleep(60)"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(ConfigError, match=f"another eval \\(pid {holder.pid}\\) is writing"):
            with run_lock(tmp_path):
                pass
    finally:
        holder.kill()
        holder.wait()
    assert (tmp_path / "run.lock").read_text() == f"{holder.pid} flock"  # left behind by the killed holder
    with run_lock(tmp_path) as path:
        assert path.read_text().split()[0] == str(os.getpid())


# ---- the fault server, end to end ---------------------------------------------------------------------------------
KEY = "fault-key-Zq7xW3kP9mV2"  # no known key pattern: only its registration as a secret can mask it
FAILING = ("500", "429", "hang", "reset", "invalid_json", "html", "no_choices", "empty_choices", "empty_content")


@pytest.mark.parametrize("mode", [*FAILING, "flaky", "huge", "markup", "escapes", "auth"])
def test_every_fault_mode_is_recorded_never_scored_and_never_leaks_the_key(
    mode, tmp_path, fault_server, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setattr("augmenter.eval.metrics.bertscore", lambda *a, **k: None)  # speed: not what is tested here
    fault_server.mode = mode
    fault_server.hang_seconds = 5
    args = [
        f"data_root={DATA}",
        "llm=openai",
        f"llm.base_url={fault_server.base_url}",
        "llm.model=m",
        "llm.max_retries=0",
        "llm.timeout=0.5",
        "llm.deadline=1",
        "llm_cache.enabled=false",
        f"eval.out_dir={tmp_path}",
        "eval.progress=false",
        "eval.limit=3",
        "eval.max_failed=3",
    ]
    start = time.monotonic()
    code = main(["eval", *args])
    err = capsys.readouterr().err
    assert KEY not in err
    for path in tmp_path.rglob("*"):
        assert not path.is_file() or KEY.encode() not in path.read_bytes(), path
    records = read_records(tmp_path / "dstc11-dev-n3-seed0" / RUN / "records.jsonl")
    if mode == "auth":  # a wrong key: stop at once, nothing recorded
        assert code == 2 and "401" in err and fault_server.requests == 1 and records == []
        return
    assert code == 0 and len(records) == 3 and time.monotonic() - start < 60
    summary = json.loads((tmp_path / "dstc11-dev-n3-seed0" / RUN / "summary.json").read_text())
    for r in records:
        assert (r["status"] == "ok") == ("KF1" in r["metrics"])  # a failed turn is never scored
        assert r["status"] == "ok" or r["error"]
    ok = [r for r in records if r["status"] == "ok"]
    assert summary["ok"] == len(ok) and summary["failed"] == 3 - len(ok)
    if mode in FAILING:
        assert not ok and "metrics" not in summary
    elif mode != "flaky":
        assert len(ok) == 3
    if ok:
        assert summary["metrics"]["KF1"] == pytest.approx(sum(r["metrics"]["KF1"] for r in ok) / len(ok))
