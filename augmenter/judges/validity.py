"""Is the judge worth listening to? Measured on its own judgments (records of `augmenter.judges.run`):

- position bias: of the pairs judged in both orders (both parsed), how often the system-level result flips when
  the order is swapped, and how often the first-shown conversation wins a decisive verdict (0.5: no preference);
- self-consistency: with several sampling seeds, how often two seeds give the same verdict on the same question;
- agreement with a known ordering: how often the judge ranks the known-better system (human gold replies, say)
  above the known-worse one, with a 95% interval, and whether it can tell them apart at all;
- copying: how many answers reproduce the prompt's worked example instead of judging.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Any

from augmenter.judges.base import COPIED, FAILED, OK, PARTIAL
from augmenter.judges.botchat import passes_at


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
    return {
        "pairs": len(both),
        "flip_rate": flips / len(both) if both else None,
        "first_wins": first / decisive if decisive else None,
        "decisive": decisive,
    }


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


PAIRWISE = ("arena", "checks")  # judges that compare two systems' dialogues directly


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float | None, float | None]:
    """The Wilson score interval (95% by default) of a share `successes / n`; (None, None) when n is 0."""
    if n == 0:
        return None, None
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _arena_results(records: Iterable[dict], judge: str, better: str, worse: str) -> dict[str, float]:
    """Arena: per conversation judged in both orders (both parsed), `better`'s combined result (1 win, 0.5 tie)."""
    orders: dict[str, dict[int, float]] = defaultdict(dict)
    for r in records:
        verdict = r.get("verdict") or {}
        if (
            r.get("judge") != judge
            or r.get("status") != OK
            or set(r.get("systems") or []) != {better, worse}
            or "first" not in verdict
        ):
            continue
        result = verdict["first"] if r["systems"][0] == better else 1.0 - verdict["first"]
        orders[r.get("dialogue_id")][r.get("order")] = result
    return {d: (o[0] + o[1]) / 2 for d, o in orders.items() if 0 in o and 1 in o}


def _unary_scores(records: Iterable[dict], judge: str, system: str) -> dict[str, Any]:
    """Per dialogue, what a judge gives `system` alone: WikiChat the mean of its parsed 1-5 scores; GTEval the
    dialogue's result against the ground truth over both orders; UniEval its verdict (compared at the shorter
    dialogue's length, see `known_ordering`). Unparsed, copied or failed judgments are left out."""
    out: dict[str, Any] = {}
    gt: dict[str, dict[int, float]] = defaultdict(dict)
    for r in records:
        verdict, dialogue = r.get("verdict") or {}, r.get("dialogue_id")
        if r.get("judge") != judge or system not in (r.get("systems") or []) or r.get("status") not in (OK, PARTIAL):
            continue
        if judge == "gteval" and "first" in verdict and r["status"] == OK:
            gt[dialogue][r.get("order")] = verdict["first"] if r["systems"][0] == system else 1.0 - verdict["first"]
        elif "turns" in verdict:
            scores = [s for t in verdict["turns"] for s in (t.get("scores") or {}).values() if s is not None]
            if scores:
                out[dialogue] = sum(scores) / len(scores)
        elif "ai" in verdict and r["status"] == OK:
            out[dialogue] = verdict
    out.update({d: (o[0] + o[1]) / 2 for d, o in gt.items() if 0 in o and 1 in o})
    return out


def _compare(mine: Any, theirs: Any) -> float | None:
    """1 / 0.5 / 0: `mine` above, level with or below `theirs` (None: undecidable). UniEval verdicts compare at the
    shorter dialogue's length (one that ended early would pass more easily): passing beats failing."""
    if isinstance(mine, dict):
        n = min(mine.get("length", 0), theirs.get("length", 0))
        mine, theirs = passes_at(mine, n), passes_at(theirs, n)
        if mine is None or theirs is None:
            return None
    return 1.0 if mine > theirs else 0.0 if mine < theirs else 0.5


def known_ordering(records: Iterable[dict], judge: str, better: str, worse: str) -> dict[str, Any]:
    """How often `judge` puts `better` above `worse`, a known ordering (human gold replies above a small model's,
    say), over the dialogues judged for both: wins, ties and losses of `better`; `agreement` = wins / (wins +
    losses) with its 95% Wilson interval; `reading`: "agrees" (interval above 0.5), "reversed" (below), "cannot
    tell" (it holds 0.5), "all ties" (no decisive comparison) or "no comparison" (no dialogue judged for both).
    Arena compares the two directly (both orders combined); the one-dialogue judges compare each system's own score
    on the same dialogue."""
    records = list(records)
    if judge in PAIRWISE:
        results = list(_arena_results(records, judge, better, worse).values())
    else:
        mine, theirs = _unary_scores(records, judge, better), _unary_scores(records, judge, worse)
        results = [x for x in (_compare(mine[d], theirs[d]) for d in mine if d in theirs) if x is not None]
    wins, losses = sum(x > 0.5 for x in results), sum(x < 0.5 for x in results)
    decisive = wins + losses
    low, high = wilson(wins, decisive)
    if not results:
        reading = "no comparison"
    elif not decisive:
        reading = "all ties"
    else:
        reading = "cannot tell" if low <= 0.5 <= high else ("agrees" if low > 0.5 else "reversed")
    return {
        "better": better,
        "worse": worse,
        "compared": len(results),
        "wins": wins,
        "ties": len(results) - decisive,
        "losses": losses,
        "agreement": wins / decisive if decisive else None,
        "low": low,
        "high": high,
        "reading": reading,
    }


_LABELS = {
    "choice",
    "index",
    "reason",
    "score",
    "relevant",
    "informational",
    "natural",
    "non",
    "repetitive",
    "temporally",
    "correct",
    "conversation",
    "yes",
    "no",
    "none",
    "both",
    "neither",
}


def _grams(text: str, n: int) -> list[tuple[str, ...]]:
    """Word n-grams of an answer without the answer format's own words (labels, choices, numbers)."""
    words = [w for w in re.findall(r"[a-z']+", text.lower()) if w not in _LABELS]
    return [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]


def _copies(text: str, known: set, n: int, share: float) -> bool:
    grams = _grams(str(text), n)
    return bool(grams) and bool(known) and sum(g in known for g in grams) >= share * len(grams)


def mark_copies(
    records: Iterable[dict], examples: dict[str, Sequence[str]], n: int = 4, share: float = 0.5
) -> list[dict]:
    """The records with every answer that copies its judge's worked examples (see `copied_examples`) marked
    "copied": a one-answer judgment's status becomes "copied"; a WikiChat turn's scores are dropped and the turn
    marked, the judgment "copied" when all its turns are, else "partial". Copied answers are counted, never scored,
    as unparsed ones. The stored judgments are not changed."""
    out = []
    for r in records:
        known = {g for text in examples.get(r.get("judge"), ()) for g in _grams(text, n)}
        raws = [str(x) for x in r.get("raw") or []]
        if not known or r.get("status") not in (OK, PARTIAL) or not raws:
            out.append(r)
            continue
        verdict = r.get("verdict") or {}
        if "turns" not in verdict:
            out.append({**r, "status": COPIED} if _copies(raws[0], known, n, share) else r)
            continue
        answers, turns = iter(raws), []
        for turn in verdict["turns"]:
            if turn.get("status") != FAILED and _copies(next(answers, ""), known, n, share):
                turn = {**turn, "scores": dict.fromkeys(turn.get("scores") or {}), "status": COPIED}
            turns.append(turn)
        statuses = {t.get("status") for t in turns}
        status = COPIED if statuses == {COPIED} else (PARTIAL if COPIED in statuses else r["status"])
        out.append({**r, "status": status, "verdict": {**verdict, "turns": turns}})
    return out


def copied_examples(
    records: Iterable[dict], judge: str, examples: Sequence[str], n: int = 4, share: float = 0.5
) -> dict[str, Any]:
    """How many of `judge`'s answers copy its prompt's worked examples (`examples`, their answers): at least `share`
    of an answer's word n-grams (its own words: reasons, not the format's labels and choices) are in an example. A
    small model that copies an example's answer (its reasons and scores) is echoing, not judging.
    {"answers", "copied", "share": copied / answers}."""
    known = {g for text in examples for g in _grams(text, n)}
    answers = copied = 0
    for r in records:
        if r.get("judge") != judge:
            continue
        for text in r.get("raw") or []:
            answers += 1
            copied += _copies(str(text), known, n, share)
    return {"answers": answers, "copied": copied, "share": copied / answers if answers else None}
