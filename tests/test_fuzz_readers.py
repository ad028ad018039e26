"""Fuzzing (hypothesis): the eval records reader never fails on a damaged file (a crash's cut lines are skipped)
and keeps exactly its records; a record of the wrong shape is one line naming the file, the line and the key, and
whatever it reads, the run's summary (a resumed eval, `augmenter report`) is computed without a crash; `name`
keeps a run inside its sample folder; the knowledge loaders fail only with KnowledgeFormatError (one line, exit
2), whatever their files hold, and what they load can be searched."""

import json
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from augmenter.config import compose
from augmenter.errors import AugmenterError, ConfigError, InputError, KnowledgeFormatError
from augmenter.eval.records import SCORED, SHAPES
from augmenter.eval.report import load_runs
from augmenter.eval.runner import read_records, run_dir, run_lock, summarize
from augmenter.eval.tasks import KINDS
from augmenter.knowledge.base import load_dstc11, load_jsonl
from augmenter.knowledge.consolidator import KnowledgeConsolidator
from augmenter.knowledge.retrievers import BM25sRetriever

FUZZ = settings(max_examples=200, deadline=None)

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)
texts = st.lists(st.text(max_size=8), max_size=2)
failed_records = st.fixed_dictionaries(
    {"dialogue_id": st.text(max_size=4), "status": st.just("failed")},
    optional={"error": st.text(max_size=8), "memory": st.none()},
)
scored_records = st.fixed_dictionaries(
    {
        "dialogue_id": st.text(max_size=4),
        "status": st.just("ok"),
        "response": st.text(max_size=30),
        "references": texts,
        "gold_knowledge": texts,
        "metrics": st.dictionaries(st.sampled_from(["KF1", "BLEU-4"]), st.floats(0, 100) | st.none(), max_size=2),
        "cost": st.fixed_dictionaries(
            {"llm_calls": st.integers(0, 3), "knowledge_calls": st.integers(0, 2), "turn_seconds": st.floats(0, 9)}
        ),
        "memory": st.fixed_dictionaries({"o": texts}),
    },
    optional={"outcome": st.sampled_from(["answered", "partial"])},
)
records = failed_records | scored_records


def _line(record: dict) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode("utf-8")


@st.composite
def damaged(draw) -> bytes:
    """A line a crash, a disk or an editor could leave: never a readable record."""
    kind = draw(st.sampled_from(["cut", "cut_utf8", "not_object", "no_id", "not_utf8", "bytes"]))
    line = _line(draw(records))
    if kind == "cut":
        return line[: draw(st.integers(1, len(line) - 1))]
    if kind == "cut_utf8":  # cut inside a multi-byte character
        return line[:-1] + "é€😀".encode()[: draw(st.integers(1, 3))]
    if kind == "not_object":
        return json.dumps(draw(values.filter(lambda v: not isinstance(v, dict)))).encode()
    if kind == "no_id":
        return json.dumps({"dialogue_id": draw(values.filter(lambda v: not isinstance(v, str)))}).encode()
    if kind == "not_utf8":
        return line[:1] + b"\xff" + line[1:]
    return b"\x80" + draw(st.binary(max_size=40)).replace(b"\n", b"")


_SCRATCH: list[Path] = []  # one folder per module run, removed after it (hypothesis calls a test many times)


@pytest.fixture(scope="module", autouse=True)
def _scratch():
    with tempfile.TemporaryDirectory() as folder:
        _SCRATCH[:] = [Path(folder)]
        yield


def _file(data: bytes) -> Path:
    path = Path(tempfile.mkdtemp(dir=_SCRATCH[0])) / "data"
    path.write_bytes(data)
    return path


@FUZZ
@given(st.binary(max_size=400))
def test_read_records_never_fails_on_arbitrary_bytes(data):
    out = read_records(_file(data))
    assert all(isinstance(r, dict) and isinstance(r["dialogue_id"], str) for r in out)


@FUZZ
@given(
    st.lists(
        st.one_of(
            records.map(lambda r: (_line(r), r)),
            damaged().map(lambda line: (line, None)),
            st.sampled_from([b"", b"  ", b"\r", b"\t "]).map(lambda line: (line, None)),
        ),
        max_size=12,
    ),
    st.booleans(),
)
def test_read_records_keeps_exactly_the_records(lines, final_newline):
    expected: dict[str, dict] = {}
    for _, record in lines:  # the later record of a turn (a retry) replaces the earlier one
        if record is not None:
            expected[record["dialogue_id"]] = record
    data = b"\n".join(line for line, _ in lines) + (b"\n" if final_newline else b"")
    assert read_records(_file(data)) == list(expected.values())


@settings(max_examples=100, deadline=None)
@given(st.lists(records, min_size=1, max_size=3), st.sampled_from(sorted({*SHAPES, *SCORED})), values)
def test_a_record_of_the_wrong_shape_is_one_line_and_nothing_read_crashes_the_summary(good, key, value):
    """A record of the wrong shape (`"metrics": "oops"`) neither crashes a resumed eval nor `augmenter report`."""
    bad = {**good[-1], key: value}
    path = _file(b"\n".join(map(_line, [*good[:-1], bad])) + b"\n")
    try:
        kept = read_records(path)
    except InputError as exc:
        assert str(exc).startswith(f"{path}:{len(good)}: ") and repr(key) in str(exc) and "\n" not in str(exc)
        return
    summary = summarize(kept, with_bertscore=False)  # what a resumed eval and the report compute
    assert summary["turns"] == len(kept)


ALL_METRICS = sorted({k for kind in KINDS.values() for k in kind.metric_keys} | {"BLEU-4"})


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(sorted(KINDS)),
    st.lists(
        st.dictionaries(st.sampled_from(ALL_METRICS), st.floats(0, 100), max_size=len(ALL_METRICS)),
        min_size=1,
        max_size=3,
    ),
)
def test_records_without_their_tasks_metrics_are_one_line_and_the_report_never_crashes(dataset, metrics):
    """A valid-shape record whose metrics lack what its task scores with (`"metrics": {}`) crashed `augmenter
    report` and the short-answer and document tasks' summaries with a KeyError."""
    task = KINDS[dataset]
    lines = [
        {
            "dialogue_id": str(i),
            "status": "ok",
            "response": "r",
            "references": ["a"],
            "gold_knowledge": ["k"],
            "metrics": m,
            "cost": {"llm_calls": 1},
            "memory": {"o": ["r"]},
        }
        for i, m in enumerate(metrics)
    ]
    sample = Path(tempfile.mkdtemp(dir=_SCRATCH[0])) / f"{dataset}-dev-n3-seed0"
    (sample / "run").mkdir(parents=True)
    path = sample / "run" / "records.jsonl"
    path.write_bytes(b"\n".join(map(_line, lines)) + b"\n")
    first_bad = next((n for n, m in enumerate(metrics, 1) if not set(task.metric_keys) <= set(m)), None)
    try:
        kept = read_records(path, task.metric_keys)
    except InputError as exc:
        assert first_bad is not None and str(exc).startswith(f"{path}:{first_bad}: 'metrics' lacks ")
        with pytest.raises(InputError, match=rf"^{path}:{first_bad}: 'metrics' lacks '[^']+', which the task"):
            load_runs(sample, with_bertscore=False)
        return
    assert first_bad is None and len(kept) == len(metrics)
    run = load_runs(sample, with_bertscore=False)["run"]  # what `augmenter report` reads
    assert run["ok"] == len(metrics) and len(run["score_per_turn"]) == len(metrics)


def test_a_records_file_that_is_a_folder_is_one_line(tmp_path):
    (tmp_path / "records.jsonl").mkdir()
    with pytest.raises(InputError, match="records.jsonl is a folder, not a JSON Lines file$"):
        read_records(tmp_path / "records.jsonl")


@pytest.mark.parametrize("blocker", ["out", "out/sample"])
def test_a_run_directory_behind_a_file_is_one_line_naming_the_setting(blocker, tmp_path):
    (tmp_path / blocker).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / blocker).write_text("a file")
    with pytest.raises(InputError, match=rf"^eval.out_dir: .*: {tmp_path / blocker} is a file, not a folder$"):
        with run_lock(tmp_path / "out" / "sample" / "run", "eval.out_dir"):
            pass


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=10) | st.sampled_from(["", ".", "..", "../../x", "/abs", "a/b", "ok_name", "a\\b", " x"]))
def test_name_keeps_a_run_inside_its_sample_folder(name):
    """`name=../../x` or an absolute name wrote outside eval.out_dir, `name=` into the sample folder itself."""
    try:
        cfg = compose("eval", [f"name={name}", "eval.out_dir=runs/eval"])
    except ConfigError as exc:
        assert "\n" not in str(exc)
        return
    path = run_dir(cfg)
    assert path.parent.parent == Path("runs/eval") and path.name == str(cfg.name) not in ("", ".", "..")


def _loads(load, *paths):
    """Run a loader; it may succeed or raise KnowledgeFormatError, nothing else. What it loads is searched."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # numpy's "invalid value" on a base without words
            kb = load(*paths)
            KnowledgeConsolidator(kb, BM25sRetriever(), opinions=False).retrieve("is there a pool")
    except KnowledgeFormatError as exc:
        assert isinstance(exc, AugmenterError) and str(exc) and "\n" not in str(exc)


@FUZZ
@given(st.binary(max_size=400))
def test_load_jsonl_on_arbitrary_bytes(data):
    _loads(load_jsonl, _file(data))


keys = st.sampled_from(["text", "question", "answer", "id", "entity", "aliases", "domain", "doc_type"])


@FUZZ
@given(
    st.lists(
        st.one_of(
            st.dictionaries(keys, values | st.sampled_from(["", " ", "!!!", "the", "a pool"]), max_size=6), values
        ),
        max_size=6,
    )
)
def test_load_jsonl_on_garbled_rows(rows):
    """Garbled rows (e.g. `{"text": ""}`: a base without words) load and are searched without a warning, or fail
    as one KnowledgeFormatError."""
    _loads(load_jsonl, _file("\n".join(json.dumps(r) for r in rows).encode()))


@FUZZ
@given(st.binary(max_size=300), st.binary(max_size=100))
def test_load_dstc11_on_arbitrary_bytes(knowledge, mapping):
    _loads(load_dstc11, _file(knowledge), _file(mapping))


entity = st.fixed_dictionaries(
    {},
    optional={
        "name": values,
        "faqs": values
        | st.dictionaries(
            st.text(max_size=3),
            values | st.fixed_dictionaries({}, optional={"question": values, "answer": values}),
            max_size=3,
        ),
        "reviews": values
        | st.dictionaries(
            st.text(max_size=3),
            values
            | st.fixed_dictionaries(
                {}, optional={"sentences": values | st.dictionaries(st.text(max_size=3), values, max_size=3)}
            ),
            max_size=3,
        ),
    },
)


@FUZZ
@given(
    st.dictionaries(
        st.text(max_size=6), values | st.dictionaries(st.text(max_size=4), values | entity, max_size=3), max_size=3
    )
    | values,
    values | st.dictionaries(st.text(max_size=6), values, max_size=3),
)
def test_load_dstc11_on_garbled_structure(knowledge, mapping):
    _loads(load_dstc11, _file(json.dumps(knowledge).encode()), _file(json.dumps(mapping).encode()))


@pytest.mark.parametrize("text", ["[" * 100_000, '{"a": ' * 100_000])
def test_loaders_on_deeply_nested_json(text):
    _loads(load_dstc11, _file(text.encode()))
    _loads(load_jsonl, _file(text.encode()))
    assert read_records(_file(text.encode())) == []
