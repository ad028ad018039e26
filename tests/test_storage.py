"""augmenter.storage: atomic writes, tolerant JSONL reading, content hashing."""

import hashlib
import json
import os
import stat

import pytest

from augmenter.storage import atomic_open, content_hash, read_jsonl, write_atomic


def test_write_atomic_replaces_the_whole_file_and_leaves_no_temp_file(tmp_path):
    path = tmp_path / "summary.json"
    path.write_text("old")
    write_atomic(path, "new text, é\n")
    assert path.read_text(encoding="utf-8") == "new text, é\n"
    write_atomic(path, b"\x00bytes")
    assert path.read_bytes() == b"\x00bytes"
    assert os.listdir(tmp_path) == ["summary.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask  # like any file written in place (not 0600)


def test_a_write_that_fails_leaves_the_old_file_whole(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_text("line 1\n")
    with pytest.raises(RuntimeError), atomic_open(path) as sink:
        sink.write("half a new ")
        raise RuntimeError("killed mid-write")
    assert path.read_text() == "line 1\n" and os.listdir(tmp_path) == ["records.jsonl"]


def test_atomic_open_takes_binary_writers(tmp_path):
    np = pytest.importorskip("numpy")
    path = tmp_path / "embeddings.npy"
    with atomic_open(path, "wb") as sink:
        np.save(sink, np.eye(2, dtype=np.float32))
    assert (np.load(path) == np.eye(2)).all()


def test_read_jsonl_yields_objects_with_line_numbers_and_reports_every_other_line(tmp_path):
    path = tmp_path / "data.jsonl"
    lines = [
        b'{"a": 1}',
        b"",
        b"  \r",
        b'{"a": 2}\r',
        b'{"a": "cut',
        b"[1, 2]",
        b'{"a": "caf\xe9"}',
        b"[" * 100_000,
        json.dumps({"a": "x\u2028y"}, ensure_ascii=False).encode(),
        b'{"a": 3}',
    ]
    path.write_bytes(b"\n".join(lines))  # no final newline
    bad = []
    rows = list(read_jsonl(path, lambda n, why: bad.append((n, why))))
    assert rows == [(1, {"a": 1}), (4, {"a": 2}), (9, {"a": "x\u2028y"}), (10, {"a": 3})]
    assert [n for n, _ in bad] == [5, 6, 7, 8]
    assert bad[0][1].startswith("not valid JSON: line 5, column 11: Invalid control character (a raw line break")
    assert bad[1][1] == "expected a JSON object"
    assert bad[2][1].startswith("not UTF-8 text (") and bad[3][1] == "JSON nested too deeply"


def test_read_jsonl_stops_where_on_bad_raises(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text('{"a": 1}\nnot json\n{"a": 3}\n')
    seen = []

    def strict(n, why):
        raise ValueError(f"{path}:{n}: {why}")

    with pytest.raises(ValueError, match=r"data.jsonl:2: not valid JSON"):
        for n, _row in read_jsonl(path, strict):
            seen.append(n)
    assert seen == [1]


def test_content_hash():
    assert content_hash("prompt text") == hashlib.sha256(b"prompt text").hexdigest()[:16]
    assert content_hash(b"\xff", 64) == hashlib.sha256(b"\xff").hexdigest()
    assert content_hash(["a", "b"], 20) == hashlib.sha256(b"a\x00b\x00").hexdigest()[:20]  # each text, then NUL
    assert content_hash(["ab"]) != content_hash(["a", "b"]) != content_hash("ab")
    assert content_hash(iter(["a", "b"])) == content_hash(["a", "b"])
