"""`eval.concurrency=N`: N turns at once for server backends, with records identical in content
to a sequential run, in sample order, resumable, written by one thread; the embedded backend stays at one."""

import json
import sys
import threading
import time
from pathlib import Path

import pytest

from augmenter.config import build_evaluator, compose
from augmenter.eval.runner import read_records
from augmenter.llm import Completion, FakeLLM
from conftest import DATA

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from compare_records import without_timings


class SlowLLM(FakeLLM):
    """A server-like fake: each call waits `delay` seconds, and the reply depends on the prompt (so that turns
    mixed up between threads would show); records the most calls in flight at once. `fail` makes calls whose
    prompt contains it fail."""

    delay = 0.05
    fail: str = ""
    in_flight = 0
    most = 0
    lock = threading.Lock()

    def complete(self, messages, params):
        prompt = "\n".join(m["content"] for m in messages)
        cls = type(self)
        with cls.lock:
            cls.in_flight += 1
            cls.most = max(cls.most, cls.in_flight)
        try:
            time.sleep(cls.delay)
            if cls.fail and cls.fail in prompt:
                raise ConnectionError("server went away")
            words = prompt.split()
            return Completion(
                text=f"The answer has {len(words)} words; it ends with {words[-1]}.",
                prompt_tokens=len(words),
                completion_tokens=9,
            )
        finally:
            with cls.lock:
                cls.in_flight -= 1


def _args(tmp_path, name, *extra):
    return [
        f"data_root={DATA}",
        "llm=fake",
        f"llm._target_={__name__}.SlowLLM",
        "llm_cache.enabled=false",
        f"eval.out_dir={tmp_path}",
        "eval.progress=false",
        "eval.limit=12",
        f"name={name}",
        *extra,
    ]


@pytest.fixture(autouse=True)
def _reset(monkeypatch):
    monkeypatch.setattr(SlowLLM, "most", 0)
    monkeypatch.setattr(SlowLLM, "fail", "")


def _records(ev):
    return [without_timings(r) for r in read_records(ev.records_path)]


def test_concurrent_turns_give_the_sequential_records_in_sample_order(tmp_path):
    one = build_evaluator(compose("eval", _args(tmp_path, "one")))
    one.run()
    assert SlowLLM.most == 1
    many = build_evaluator(compose("eval", _args(tmp_path, "many", "eval.concurrency=6")))
    summary = many.run()
    assert SlowLLM.most > 1 and summary["ok"] == 12  # turns overlapped (the speed-up: bench/concurrency.py)
    assert _records(many) == _records(one)  # the same turns, answers, scores and per-turn LLM costs, in order
    assert all(r["cost"]["llm_calls"] >= 1 for r in read_records(many.records_path))
    summaries = [json.loads((ev.dir / "summary.json").read_text()) for ev in (one, many)]
    assert summaries[0]["metrics"] == summaries[1]["metrics"]


def test_a_failed_turn_of_a_concurrent_run_is_recorded_and_retried_on_resume(tmp_path):
    args = _args(tmp_path, "resume", "eval.concurrency=4", "eval.max_failed=12")
    first = build_evaluator(compose("eval", args))
    question = first.task.turns(12, 0)[5].q
    SlowLLM.fail = question
    summary = first.run()
    assert summary["failed"] >= 1 and summary["ok"] + summary["failed"] == 12
    SlowLLM.fail = ""
    again = build_evaluator(compose("eval", args)).run()
    assert again["ok"] == 12 and again["failed"] == 0
    reference = build_evaluator(compose("eval", _args(tmp_path, "reference")))
    reference.run()
    assert _records(build_evaluator(compose("eval", args))) == _records(reference)


def test_the_embedded_backend_answers_one_turn_at_a_time(tmp_path, caplog):
    ev = build_evaluator(compose("eval", _args(tmp_path, "local", "eval.concurrency=8")))

    class Embedded:
        class executor:
            class llm:
                backend = "local"

    assert ev._workers(Embedded()) == 1 and "one call at a time" in caplog.text
    assert ev._workers(type("Served", (), {"executor": type("E", (), {"llm": SlowLLM()})})()) == 8
