"""Is the judge worth listening to? Measured on its own judgments (records of `augmenter.judges.run`):

- position bias: of the pairs judged in both orders (both parsed), how often the system-level result flips when
  the order is swapped, and how often the first-shown conversation wins a decisive verdict (0.5: no preference);
- self-consistency: with several sampling seeds, how often two seeds give the same verdict on the same question.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations
from typing import Any, Iterable

from augmenter.judges.base import OK, PARTIAL


def position_bias(records: Iterable[dict], judge: str) -> dict[str, Any]:
    """{"pairs": pairs judged in both orders, "flip_rate": share whose result flips, "first_wins": share of
    decisive order-verdicts won by the first-shown conversation, "decisive": their number}."""
    by_pair: dict[tuple, dict[int, float]] = defaultdict(dict)
    decisive = first = 0
    for r in records:
        if r["judge"] != judge or r["status"] != OK:
            continue
        result = r["verdict"]["first"]
        by_pair[(r["pair"], r["seed"])][r["order"]] = result if r["order"] == 0 else 1.0 - result
        if result != 0.5:
            decisive += 1
            first += result == 1.0
    both = [orders for orders in by_pair.values() if len(orders) == 2]
    flips = sum(orders[0] != orders[1] for orders in both)
    return {"pairs": len(both), "flip_rate": flips / len(both) if both else None,
            "first_wins": first / decisive if decisive else None, "decisive": decisive}


def _units(record: dict) -> dict[Any, Any]:
    """The verdict's comparable parts: the choice (Arena, GTEval), AI-involved or not (UniEval), each turn's score
    per criterion (WikiChat; unparsed scores left out)."""
    verdict = record["verdict"]
    if "choice" in verdict:
        return {"choice": verdict["choice"]}
    if "ai" in verdict:
        return {"ai": verdict["ai"]}
    return {(t["index"], c): s for t in verdict.get("turns", []) for c, s in t["scores"].items() if s is not None}


def self_consistency(records: Iterable[dict], judge: str) -> dict[str, Any]:
    """{"questions": questions judged with >= 2 seeds, "agreement": share of seed pairs that agree on a verdict
    part, "seeds": the most seeds seen on one question}; None figures without two parsed seeds anywhere."""
    by_question: dict[tuple, list[dict]] = defaultdict(list)
    for r in records:
        if r["judge"] == judge and r["status"] in (OK, PARTIAL):
            by_question[(r["pair"], r["order"])].append(_units(r))
    agree = total = questions = 0
    most = 0
    for verdicts in by_question.values():
        most = max(most, len(verdicts))
        if len(verdicts) < 2:
            continue
        questions += 1
        for a, b in combinations(verdicts, 2):
            for unit in set(a) & set(b):
                total += 1
                agree += a[unit] == b[unit]
    return {"questions": questions, "agreement": agree / total if total else None, "seeds": most}
