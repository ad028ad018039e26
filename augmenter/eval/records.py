"""An eval run's records: one typed record per turn (`EvalRecord`), read back tolerantly (`read_records`), and
whether a record's turn failed (`failure`)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Literal, Optional, TypedDict

from augmenter.storage import read_jsonl

log = logging.getLogger(__name__)


class EvalRecord(TypedDict):
    """One turn of an eval run, as written to `records.jsonl` (JSON-ready; a failed turn has no metrics)."""

    dialogue_id: str
    status: Literal["ok", "failed"]
    error: Optional[str]  # one line: the LLM's error, "empty response", "crash: ..."
    response: str
    outcome: Optional[str]  # answered | partial | abstained ("I don't know") | failed; None: the turn crashed
    citations: list[dict]
    references: list[str]  # gold response(s) or answers
    gold_knowledge: list[str]
    gold_ids: list[str]
    metrics: dict[str, Optional[float]]  # the task's per-turn metrics
    cost: dict[str, float]  # the Working Memory's cost figures, and `turn_seconds`, the turn's measured time
    evidence_recall: Optional[float]  # gold knowledge found (dialogue), answer in the top-5 evidence (QA)
    memory: Optional[dict]  # the whole Working Memory


def _upgraded(record: dict) -> dict:
    """A record in today's layout: records written before `turn_seconds` kept the turn's measured time as
    `cost.wall_seconds` (which in the Working Memory's summary is the sum of its actions' times)."""
    cost = record.get("cost")
    if isinstance(cost, dict) and "wall_seconds" in cost and "turn_seconds" not in cost:
        cost["turn_seconds"] = cost.pop("wall_seconds")
    return record


def read_records(path: Path) -> list[dict]:
    """A run's records, one per turn: a later line of the same turn (a retry) replaces the earlier one.

    Never fails on a damaged file: a line that is not a JSON object with a string `dialogue_id` (cut short by a
    crash, cut inside a UTF-8 character, garbled) is skipped with a warning, and its turn is run again on resume.
    Blank lines are ignored. Records of older layouts are read as today's (`_upgraded`)."""
    if not path.exists():
        return []
    records: dict[str, dict] = {}
    bad: list[int] = []
    for n, record in read_jsonl(path, lambda n, why: bad.append(n)):
        if isinstance(record.get("dialogue_id"), str):
            records[record["dialogue_id"]] = _upgraded(record)
        else:
            bad.append(n)
    if bad:
        lines = ", ".join(map(str, bad[:5])) + (", ..." if len(bad) > 5 else "")
        log.warning("%s: skipped %d unreadable line(s) (line %s: cut short or not a record); their turns run again "
                    "on resume", path, len(bad), lines)
    return list(records.values())


def failure(record: dict) -> Optional[str]:
    """Why a record's turn failed, or None for a scored turn. Records written before turn status count as failed
    when the LLM failed (outcome "failed") or the response is empty."""
    if "status" in record:
        return None if record["status"] == "ok" else str(record.get("error") or "unknown")
    if record.get("outcome") == "failed":
        warnings = (record.get("memory") or {}).get("warnings") or [""]
        return str(warnings[-1]) or "the LLM call failed"
    return None if str(record.get("response") or "").strip() else "empty response"
