"""An eval run's records: one typed record per turn (`EvalRecord`), read back tolerantly (`read_records`), and
whether a record's turn failed (`failure`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, TypedDict

from augmenter.errors import InputError
from augmenter.storage import read_jsonl

log = logging.getLogger(__name__)


class EvalRecord(TypedDict):
    """One turn of an eval run, as written to `records.jsonl` (JSON-ready; a failed turn has no metrics)."""

    dialogue_id: str
    status: Literal["ok", "failed"]
    error: str | None  # one line: the LLM's error, "empty response", "crash: ..."
    response: str
    outcome: str | None  # answered | partial | quoted | abstained ("I don't know") | failed; None: crashed
    citations: list[dict]
    references: list[str]  # gold response(s) or answers
    gold_knowledge: list[str]
    gold_ids: list[str]
    metrics: dict[str, float | None]  # the task's per-turn metrics
    cost: dict[str, float]  # the Working Memory's cost figures, and `turn_seconds`, the turn's measured time
    evidence_recall: float | None  # gold knowledge found (dialogue), answer in the top-5 evidence (QA)
    memory: dict | None  # the whole Working Memory


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _optional(kind: type):
    return lambda v: v is None or isinstance(v, kind)


# what each key of a record holds when present: (test, what it must be); older records may lack some keys
SHAPES = {
    "status": (lambda v: v in ("ok", "failed"), '"ok" or "failed"'),
    "error": (_optional(str), "a string or null"),
    "response": (_optional(str), "a string"),
    "outcome": (_optional(str), "a string or null"),
    "citations": (lambda v: isinstance(v, list), "a list"),
    "references": (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "a list of strings"),
    "gold_knowledge": (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "a list of strings"),
    "gold_ids": (lambda v: isinstance(v, list), "a list"),
    "metrics": (
        lambda v: isinstance(v, dict) and all(x is None or _number(x) for x in v.values()),
        "an object of numbers",
    ),
    "cost": (lambda v: isinstance(v, dict) and all(_number(x) for x in v.values()), "an object of numbers"),
    "evidence_recall": (lambda v: v is None or _number(v), "a number or null"),
    "memory": (
        lambda v: v is None or (isinstance(v, dict) and isinstance(v.get("o", []), list)),
        "an object (the Working Memory, its candidates `o` a list) or null",
    ),
}


SCORED = ("response", "references", "gold_knowledge", "metrics", "cost", "memory")


def shape_error(record: dict, metric_keys: Sequence[str] = ()) -> str | None:
    """What is wrong with a record that is valid JSON ("'metrics' must be ..."), or None. `metric_keys`: the
    per-turn metrics the run's task scores every turn with, which a scored turn's record must hold."""
    for key, (ok, allowed) in SHAPES.items():
        if key in record and not ok(record[key]):
            return f"{key!r} must be {allowed}, got {json.dumps(record[key], ensure_ascii=False)[:60]}"
    if failure(record) is None:  # a scored turn: what its metrics and costs are computed from
        absent = [k for k in SCORED if not isinstance(record.get(k), (str, list, dict))]
        if absent:
            return f"a scored turn's record needs {absent[0]!r}"
        lacking = [k for k in metric_keys if k not in record["metrics"]]
        if lacking:
            return f"'metrics' lacks {lacking[0]!r}, which the task scores every turn with"
    return None


def _upgraded(record: dict) -> dict:
    """A record in today's layout: records written before `turn_seconds` kept the turn's measured time as
    `cost.wall_seconds` (which in the Working Memory's summary is the sum of its actions' times)."""
    cost = record.get("cost")
    if isinstance(cost, dict) and "wall_seconds" in cost and "turn_seconds" not in cost:
        cost["turn_seconds"] = cost.pop("wall_seconds")
    return record


def read_records(path: Path, metric_keys: Sequence[str] = ()) -> list[dict]:
    """A run's records, one per turn: a later line of the same turn (a retry) replaces the earlier one.

    Never fails on a damaged file: a line that is not a JSON object with a string `dialogue_id` (cut short by a
    crash, cut inside a UTF-8 character, garbled) is skipped with a warning, and its turn is run again on resume.
    Blank lines are ignored. Records of older layouts are read as today's (`_upgraded`). A record of the wrong shape
    (valid JSON that no crash leaves: `"metrics": "oops"`, or metrics without the task's `metric_keys`) is an
    InputError naming the file, the line and the key; a folder in the file's place too."""
    if not path.exists():
        return []
    records: dict[str, dict] = {}
    bad: list[int] = []
    for n, record in read_jsonl(path, lambda n, why: bad.append(n)):
        if not isinstance(record.get("dialogue_id"), str):
            bad.append(n)
            continue
        wrong = shape_error(record, metric_keys)
        if wrong:
            raise InputError(f"{path}:{n}: {wrong}; correct or delete the line (a deleted turn is run again)")
        records[record["dialogue_id"]] = _upgraded(record)
    if bad:
        lines = ", ".join(map(str, bad[:5])) + (", ..." if len(bad) > 5 else "")
        log.warning(
            "%s: skipped %d unreadable line(s) (line %s: cut short or not a record); their turns run again on resume",
            path,
            len(bad),
            lines,
        )
    return list(records.values())


def failure(record: dict) -> str | None:
    """Why a record's turn failed, or None for a scored turn. Records written before turn status count as failed
    when the LLM failed (outcome "failed") or the response is empty."""
    if "status" in record:
        return None if record["status"] == "ok" else str(record.get("error") or "unknown")
    if record.get("outcome") == "failed":
        warnings = (record.get("memory") or {}).get("warnings")
        return str(warnings[-1] if isinstance(warnings, list) and warnings else "") or "the LLM call failed"
    return None if str(record.get("response") or "").strip() else "empty response"
