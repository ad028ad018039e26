"""Run by tests/test_ray_grid.py in a pytest process of its own (see there).

`augmenter grid --ray`: a small grid on a local Ray cluster with the fake LLM writes the
records a sequential grid writes (apart from timings), resumes without answering anything again, answers a failed
turn again, sends a crashed task again and stops cleanly on a fatal error."""

import json
import os
import sys
from pathlib import Path

import pytest

from augmenter.cli.main import main, parse_args
from augmenter.errors import ConfigError
from conftest import DATA

ray = pytest.importorskip("ray")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from compare_records import without_timings  # noqa: E402

ONLY = "table2_llm_only,linker_bm25"  # two experiments (names that are no other's prefix)
TIMED = {"turn_seconds", "wall_seconds", "non_llm_seconds"}


@pytest.fixture(scope="module", autouse=True)
def cluster():
    """One local Ray cluster for the module; its workers can import this module (the crashing builders)."""
    tests = str(Path(__file__).resolve().parent)
    path = os.pathsep.join(p for p in (tests, os.environ.get("PYTHONPATH")) if p)
    ray.init(num_cpus=2, include_dashboard=False, runtime_env={"env_vars": {"PYTHONPATH": path}})
    yield
    ray.shutdown()


def _args(out: Path, limit: int = 6) -> list[str]:
    return [
        f"data_root={DATA}",
        "llm=fake",
        f"llm_cache.dir={out / 'cache'}",
        f"eval.out_dir={out}",
        "eval.progress=false",
        f"eval.limit={limit}",
    ]


@pytest.fixture(scope="module")
def sequential(tmp_path_factory):
    out = tmp_path_factory.mktemp("sequential")
    assert main(["grid", "--only", ONLY, *_args(out)]) == 0
    return out / "dstc11-dev-n6-seed0"


def _records(run: Path) -> list[dict]:
    return [without_timings(json.loads(line)) for line in (run / "records.jsonl").read_text().splitlines()]


def _uncached(value):
    """`value` without the counts of cached LLM calls."""
    if isinstance(value, dict):
        return {k: _uncached(v) for k, v in value.items() if "cached" not in k}
    return [_uncached(v) for v in value] if isinstance(value, list) else value


def _summary(run: Path) -> dict:
    summary = json.loads((run / "summary.json").read_text())
    summary.pop("run_dir")
    summary["cost"] = {k: v for k, v in summary["cost"].items() if k not in TIMED}
    return summary


def test_ray_grid_writes_what_a_sequential_grid_writes_and_resumes(sequential, tmp_path, capsys):
    grid = ["grid", "--ray", "--shard-size", "2", "--only", ONLY, *_args(tmp_path)]
    assert main(grid) == 0
    assert "ray: 12 turns answered" in capsys.readouterr().err
    sample = tmp_path / "dstc11-dev-n6-seed0"
    for name in ONLY.split(","):
        assert sorted(p.name for p in (sample / name).iterdir()) == ["config.json", "records.jsonl", "summary.json"]
        assert _records(sample / name) == _records(sequential / name)  # same turns, same order, same content
        assert (sample / name / "config.json").read_text() == (sequential / name / "config.json").read_text()
        assert _summary(sample / name) == _summary(sequential / name)
    # resumed: nothing answered again, nothing changed
    before = {name: (sample / name / "records.jsonl").read_bytes() for name in ONLY.split(",")}
    assert main(grid) == 0
    assert "ray: 0 turns answered" in capsys.readouterr().err
    assert before == {name: (sample / name / "records.jsonl").read_bytes() for name in ONLY.split(",")}
    # a failed turn is answered again, and only that one
    path = sample / "linker_bm25" / "records.jsonl"
    lines = path.read_text().splitlines()
    failed = {**json.loads(lines[3]), "status": "failed", "error": "LLM error: the server went away", "metrics": {}}
    path.write_text("\n".join(lines[:3] + [json.dumps(failed)] + lines[4:]) + "\n")
    assert main(grid) == 0
    assert "ray: 1 turns answered" in capsys.readouterr().err
    # the same records, but that turn's LLM call now came from the run's cache
    assert _uncached(_records(sample / "linker_bm25")) == _uncached(_records(sequential / "linker_bm25"))
    assert _records(sample / "linker_bm25")[3]["cost"]["cached_llm_calls"] == 1


def crash_once(config: dict):
    """A worker's builder whose first call (over all workers) crashes, as a lost worker disk would."""
    from augmenter.api.distributed import worker_evaluator

    try:
        os.close(os.open(Path(config["eval"]["out_dir"]) / "crashed", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return worker_evaluator(config)
    raise RuntimeError("the worker lost its disk")


def always_crash(config: dict):
    raise RuntimeError("the worker lost its disk")


def bad_config(config: dict):
    raise ConfigError("llm.model: no such model")


def _jobs(out: Path):
    from augmenter.api.distributed import grid_jobs

    return grid_jobs(["table2_llm_only"], _args(out, limit=4))


def test_a_crashed_task_is_sent_again(tmp_path):
    from augmenter.eval.distributed import run_grid

    [outcome] = run_grid(_jobs(tmp_path), crash_once, shard_size=2, progress=False)
    assert (tmp_path / "crashed").exists()
    assert outcome.answered == 4 and outcome.error is None and outcome.summary["ok"] == 4


def test_a_task_that_keeps_crashing_leaves_its_turns_pending(tmp_path):
    from augmenter.eval.distributed import run_grid

    [outcome] = run_grid(_jobs(tmp_path), always_crash, shard_size=2, retries=1, progress=False)
    assert outcome.answered == 0 and outcome.summary["pending"] == 4
    assert "2 shard(s) not answered after 1 retries (RuntimeError: the worker lost its disk)" in outcome.error


def test_a_configuration_error_in_a_task_stops_the_grid(tmp_path):
    from augmenter.eval.distributed import run_grid

    with pytest.raises(ConfigError, match="table2_llm_only: llm.model: no such model; the grid stopped with 0 of 4"):
        run_grid(_jobs(tmp_path), bad_config, shard_size=2, progress=False)
    summary = json.loads((tmp_path / "dstc11-dev-n4-seed0" / "table2_llm_only" / "summary.json").read_text())
    assert summary["pending"] == 4  # written all the same; the lock is released for the next run
    assert not (tmp_path / "dstc11-dev-n4-seed0" / "table2_llm_only" / "run.lock").exists()


def test_ray_flag_takes_an_address_but_not_an_override():
    assert parse_args(["grid", "--ray", "llm=fake"]).ray == "local"
    assert parse_args(["grid", "--ray", "llm=fake"]).overrides == ["llm=fake"]
    assert parse_args(["grid", "a=1", "--ray", "auto", "b=2"]).ray == "auto"
    assert parse_args(["grid", "--ray", "ray://head:10001", "--shard-size", "5"]).shard_size == 5
    assert parse_args(["grid"]).ray is None


def test_bad_shard_size_and_missing_ray_are_one_line(tmp_path, capsys, monkeypatch):
    with pytest.raises(SystemExit) as exit_:
        main(["grid", "--ray", "--shard-size", "0"])
    assert exit_.value.code == 2 and "--shard-size: expected a whole number >= 1" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    assert main(["grid", "--ray", "--only", "table2_llm_only", *_args(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "augmenter: error: augmenter grid --ray needs Ray: install the distributed "
        "extra (pip install 'augmenter[distributed]')"
    ]
