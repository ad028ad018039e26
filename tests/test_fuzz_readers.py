"""Fuzzing (hypothesis): the eval records reader never fails and keeps exactly the records of a damaged file; the
knowledge loaders fail only with KnowledgeFormatError (one line, exit 2), whatever their files hold."""

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from augmenter.errors import AugmenterError, KnowledgeFormatError
from augmenter.eval.runner import read_records
from augmenter.knowledge.base import load_dstc11, load_jsonl

FUZZ = settings(max_examples=200, deadline=None)

values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                      | st.text(max_size=12), lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=12)
records = st.fixed_dictionaries({"dialogue_id": st.text(max_size=4)},
                                optional={"status": st.sampled_from(["ok", "failed"]), "response": st.text(),
                                          "memory": values})


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


def _file(data: bytes) -> Path:
    path = Path(tempfile.mkdtemp()) / "data"
    path.write_bytes(data)
    return path


@FUZZ
@given(st.binary(max_size=400))
def test_read_records_never_fails_on_arbitrary_bytes(data):
    out = read_records(_file(data))
    assert all(isinstance(r, dict) and isinstance(r["dialogue_id"], str) for r in out)


@FUZZ
@given(st.lists(st.one_of(records.map(lambda r: (_line(r), r)), damaged().map(lambda line: (line, None)),
                          st.sampled_from([b"", b"  ", b"\r", b"\t "]).map(lambda line: (line, None))), max_size=12),
       st.booleans())
def test_read_records_keeps_exactly_the_records(lines, final_newline):
    expected: dict[str, dict] = {}
    for _, record in lines:  # the later record of a turn (a retry) replaces the earlier one
        if record is not None:
            expected[record["dialogue_id"]] = record
    data = b"\n".join(line for line, _ in lines) + (b"\n" if final_newline else b"")
    assert read_records(_file(data)) == list(expected.values())


def _loads(load, *paths):
    """Run a loader; it may succeed or raise KnowledgeFormatError, nothing else."""
    try:
        load(*paths)
    except KnowledgeFormatError as exc:
        assert isinstance(exc, AugmenterError) and str(exc)


@FUZZ
@given(st.binary(max_size=400))
def test_load_jsonl_on_arbitrary_bytes(data):
    _loads(load_jsonl, _file(data))


keys = st.sampled_from(["text", "question", "answer", "id", "entity", "aliases", "domain", "doc_type"])


@FUZZ
@given(st.lists(st.one_of(st.dictionaries(keys, values, max_size=6), values), max_size=6))
def test_load_jsonl_on_garbled_rows(rows):
    _loads(load_jsonl, _file("\n".join(json.dumps(r) for r in rows).encode()))


@FUZZ
@given(st.binary(max_size=300), st.binary(max_size=100))
def test_load_dstc11_on_arbitrary_bytes(knowledge, mapping):
    _loads(load_dstc11, _file(knowledge), _file(mapping))


entity = st.fixed_dictionaries({}, optional={
    "name": values, "faqs": values | st.dictionaries(st.text(max_size=3), values | st.fixed_dictionaries(
        {}, optional={"question": values, "answer": values}), max_size=3),
    "reviews": values | st.dictionaries(st.text(max_size=3), values | st.fixed_dictionaries(
        {}, optional={"sentences": values | st.dictionaries(st.text(max_size=3), values, max_size=3)}), max_size=3)})


@FUZZ
@given(st.dictionaries(st.text(max_size=6), values | st.dictionaries(st.text(max_size=4), values | entity, max_size=3),
                       max_size=3) | values, values | st.dictionaries(st.text(max_size=6), values, max_size=3))
def test_load_dstc11_on_garbled_structure(knowledge, mapping):
    _loads(load_dstc11, _file(json.dumps(knowledge).encode()), _file(json.dumps(mapping).encode()))


@pytest.mark.parametrize("text", ["[" * 100_000, '{"a": ' * 100_000])
def test_loaders_on_deeply_nested_json(text):
    _loads(load_dstc11, _file(text.encode()))
    _loads(load_jsonl, _file(text.encode()))
    assert read_records(_file(text.encode())) == []
