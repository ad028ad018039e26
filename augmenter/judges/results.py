"""The figures of a judge run, from its judgment records: Bootstrap Elo and win rates (Arena), win/tie/lose against
the ground truth (GTEval), pass@N (UniEval), WikiChat's five scores, judge validity and cost. Only parsed verdicts
count; unparsed and failed judgments are counted beside every figure. Verdicts of the first seed are the results;
the other seeds serve self-consistency."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from statistics import mean, pstdev
from typing import Any

from augmenter.judges.base import COPIED, FAILED, OK, PARTIAL, UNPARSED
from augmenter.judges.botchat import passes_at
from augmenter.judges.elo import EloSettings, bootstrap_elo
from augmenter.judges.parsing import CRITERIA
from augmenter.judges.validity import copied_examples, known_ordering, mark_copies, position_bias, self_consistency

TRUTH = "ground truth"


def _counts(records: Sequence[dict]) -> dict[str, int]:
    return {s: sum(r["status"] == s for r in records) for s in (OK, PARTIAL, UNPARSED, COPIED, FAILED)}


def arena(records: Sequence[dict], systems: Sequence[str], settings: EloSettings) -> dict[str, Any]:
    """Bootstrap Elo over every parsed order-verdict (both orders count, as in BotChat), and per pair of systems
    the combined verdicts of conversations judged in both orders (the mean of the two results: > 0.5 a win)."""
    ok = [r for r in records if r["status"] == OK]
    games = [(r["systems"][0], r["systems"][1], r["verdict"]["first"]) for r in ok]
    ratings = bootstrap_elo(games, settings, systems)
    results: dict[tuple, dict[int, float]] = defaultdict(dict)  # (pair, a, b) -> {order: a's result}
    for r in ok:
        a, b = r["systems"] if r["order"] == 0 else r["systems"][::-1]
        results[(r["pair"], a, b)][r["order"]] = r["verdict"]["first"] if r["order"] == 0 else 1 - r["verdict"]["first"]
    matrix: dict[str, dict[str, dict[str, int]]] = defaultdict(dict)
    for (_, a, b), orders in results.items():
        if len(orders) < 2:
            continue
        score = (orders[0] + orders[1]) / 2
        for x, y, s in ((a, b, score), (b, a, 1 - score)):
            cell = matrix[x].setdefault(y, {"wins": 0, "ties": 0, "losses": 0})
            cell["wins" if s > 0.5 else "losses" if s < 0.5 else "ties"] += 1
    return {"elo": [vars(r) for r in ratings], "games": len(games), "pairs": dict(matrix), **_counts(records)}


def gteval(records: Sequence[dict], systems: Sequence[str]) -> dict[str, Any]:
    """Per system: the shares of order-verdicts where its conversation wins (the judge picks the human one as
    AI-involved), ties (both / neither) or loses, among the parsed ones."""
    out = {}
    for system in systems:
        mine = [r for r in records if system in r["systems"]]
        results = [
            r["verdict"]["first"] if r["systems"][0] == system else 1 - r["verdict"]["first"]
            for r in mine
            if r["status"] == OK
        ]
        n = len(results)
        out[system] = {
            "judged": n,
            **_counts(mine),
            "win": sum(x == 1 for x in results) / n if n else None,
            "tie": sum(x == 0.5 for x in results) / n if n else None,
            "lose": sum(x == 0 for x in results) / n if n else None,
        }
    return out


def unieval(records: Sequence[dict], systems: Sequence[str], pass_at: Sequence[int]) -> dict[str, Any]:
    """Per system: pass@N for each N (and @all: the whole dialogue) among decidable verdicts, with their number."""
    out = {}
    for system in systems:
        mine = [r for r in records if r["systems"] == [system]]
        verdicts = [r["verdict"] for r in mine if r["status"] == OK]
        row: dict[str, Any] = {"judged": len(verdicts), **_counts(mine)}
        for n in [*pass_at, None]:
            decided = [p for p in (passes_at(v, v["length"] if n is None else n) for v in verdicts) if p is not None]
            row[f"pass@{n or 'all'}"] = sum(decided) / len(decided) if decided else None
            row[f"decided@{n or 'all'}"] = len(decided)
        out[system] = row
    return out


def wikichat(records: Sequence[dict], systems: Sequence[str]) -> dict[str, Any]:
    """Per system and criterion: mean and standard deviation of the parsed 1-5 scores, over assistant turns (turns
    whose answer copies the prompt's example left out and counted)."""
    out = {}
    for system in systems:
        mine = [r for r in records if r["systems"] == [system]]
        every = [t for r in mine if r["status"] != FAILED for t in r["verdict"].get("turns", [])]
        turns = [t for t in every if t.get("status") != COPIED]
        row: dict[str, Any] = {"turns": len(turns), "copied_turns": len(every) - len(turns), **_counts(mine)}
        for criterion in CRITERIA:
            scores = [t["scores"][criterion] for t in turns if t["scores"].get(criterion) is not None]
            row[criterion] = {
                "mean": mean(scores) if scores else None,
                "std": pstdev(scores) if scores else None,
                "n": len(scores),
                "unparsed": len(turns) - len(scores),
            }
        out[system] = row
    return out


def summarize(
    records: Sequence[dict],
    systems: Sequence[str],
    seeds: Sequence[int],
    settings: EloSettings,
    pass_at: Sequence[int] = (4, 8),
    known: Sequence[tuple[str, str]] = (),
    examples: dict[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """Every judge's figures (first seed), validity (all seeds; `known`: (better, worse) system pairs whose order
    each judge is checked against, on the first seed's verdicts; `examples`: {judge: its prompt's worked answers}:
    answers that copy them are counted and left out of every figure) and cost."""
    judges = list(dict.fromkeys(r["judge"] for r in records))
    copies = {name: copied_examples(records, name, examples[name]) for name in judges if examples and name in examples}
    records = mark_copies(records, examples or {})  # copied answers: counted, never scored
    primary = [r for r in records if r["seed"] == seeds[0]]

    def of(name):
        return [r for r in primary if r["judge"] == name]

    out: dict[str, Any] = {"systems": list(systems), "seeds": list(seeds), "elo_settings": vars(settings)}
    if "arena" in judges:
        out["arena"] = arena(of("arena"), systems, settings)
    if "checks" in judges:
        out["checks"] = arena(of("checks"), systems, settings)
    if "gteval" in judges:
        out["gteval"] = gteval(of("gteval"), systems)
    if "unieval" in judges:
        out["unieval"] = unieval(of("unieval"), systems, pass_at)
    if "wikichat" in judges:
        out["wikichat"] = wikichat(of("wikichat"), systems)
    paired = ("arena", "gteval", "checks")
    out["validity"] = {
        name: {
            **({"position": position_bias(records, name)} if name in paired else {}),
            "self_consistency": self_consistency(records, name),
            **({"copied": copies[name]} if name in copies else {}),
        }
        for name in judges
    }
    out["known"] = [
        {"judge": name, **known_ordering(of(name), name, better, worse)} for name in judges for better, worse in known
    ]
    out["cost"] = {
        name: {
            "judgments": len(rs),
            "llm_calls": sum(r.get("llm_calls", 0) for r in rs),
            "seconds": round(sum(r.get("seconds", 0.0) for r in rs), 2),
        }
        for name in judges
        for rs in [[r for r in records if r["judge"] == name]]
    }
    return out
