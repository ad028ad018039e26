"""A judge run's results as `results.json`, `results.md` (tables) and `elo.png` (Bootstrap Elo with its intervals)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from augmenter.judges.parsing import CRITERIA
from augmenter.storage import write_atomic

NAMES = {
    "relevant": "relevant",
    "informational": "informational",
    "natural": "natural",
    "non_repetitive": "non-repetitive",
    "temporal": "temporally correct",
}


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}"


def _num(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _counts(row: dict) -> str:
    return f"{row.get('unparsed', 0)} / {row.get('copied', 0)} / {row.get('failed', 0)}"


def _elo_section(a: dict, s: dict, title: str) -> list[str]:
    lines = [
        "",
        f"## {title}",
        "",
        f"{a['games']} parsed order-verdicts (both orders of each pair count); unparsed {a['unparsed']}, "
        f"copying the prompt's example {a.get('copied', 0)}, failed {a['failed']}. "
        f"Elo: initial {s['initial']:g}, scale {s['scale']:g}, K {s['k']:g}, median "
        f"of {s['rounds']} seeded shuffles; 95% interval from as many resamples of the games.",
        "",
        "| system | Bootstrap Elo | 95% interval | games |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {r['player']} | {r['elo']:.1f} | {r['low']:.1f} to {r['high']:.1f} | {r['games']} |"
        if r["games"]
        else f"| {r['player']} | n/a (no parsed game) | n/a | 0 |"
        for r in a["elo"]
    ]
    if a["pairs"]:
        lines += [
            "",
            "Conversations judged in both orders, the two results combined (win / tie / loss of the row's system):",
            "",
            "| system | against | wins | ties | losses |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {x} | {y} | {c['wins']} | {c['ties']} | {c['losses']} |"
            for x, row in a["pairs"].items()
            for y, c in row.items()
        ]
    return lines


def markdown(results: dict[str, Any], command: str = "", judge_model: str = "") -> str:
    lines = ["# Judged conversations", ""]
    if judge_model:
        lines.append(f"Judge model: `{judge_model}`; seeds {results['seeds']} (figures: the first seed).")
    if command:
        lines.append(f"Command: `{command}`")
    lines.append(
        "Unparsed answers, answers that copy the prompt's worked example and failed calls are counted, never scored."
    )
    for key, title in (
        ("arena", "BotChat Arena: Bootstrap Elo"),
        ("checks", "Rule checks (repetition, dodging; no LLM) as the Arena question: Bootstrap Elo"),
    ):
        if key in results:
            lines += _elo_section(results[key], results["elo_settings"], title)
    if "gteval" in results:
        lines += [
            "",
            "## GTEval: against the human conversation",
            "",
            "| system | win % | tie % | lose % | judged | unparsed / copied / failed |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {name} | {_pct(r['win'])} | {_pct(r['tie'])} | {_pct(r['lose'])} | {r['judged']} | {_counts(r)} |"
            for name, r in results["gteval"].items()
        ]
    if "unieval" in results:
        keys = [k for k in next(iter(results["unieval"].values()), {}) if k.startswith("pass@")]
        lines += [
            "",
            "## UniEval: pass rate (judged not AI-involved up to utterance N)",
            "",
            "| system | " + " | ".join(f"{k} %" for k in keys) + " | judged | unparsed / copied / failed |",
            "|---|" + "---|" * (len(keys) + 2),
        ]
        lines += [
            f"| {name} | " + " | ".join(_pct(r[k]) for k in keys) + f" | {r['judged']} | {_counts(r)} |"
            for name, r in results["unieval"].items()
        ]
    if "wikichat" in results:
        lines += [
            "",
            "## WikiChat's criteria (1-5, mean ± std over assistant turns)",
            "",
            "| system | " + " | ".join(NAMES[c] for c in CRITERIA) + " | turns | unparsed scores | "
            "turns copying the example |",
            "|---|" + "---|" * (len(CRITERIA) + 3),
        ]
        for name, r in results["wikichat"].items():
            cells = [f"{_num(r[c]['mean'])} ± {_num(r[c]['std'])}" for c in CRITERIA]
            lines.append(
                f"| {name} | " + " | ".join(cells) + f" | {r['turns']} | "
                f"{sum(r[c]['unparsed'] for c in CRITERIA)} | {r.get('copied_turns', 0)} |"
            )
    lines += [
        "",
        "## Judge validity",
        "",
        "| judge | pairs in both orders | verdict flips % | first shown wins % | "
        "self-consistency % (questions, seeds) | answers copying the prompt's example % |",
        "|---|---|---|---|---|---|",
    ]
    for name, v in results["validity"].items():
        pos, con, copied = v.get("position", {}), v["self_consistency"], v.get("copied") or {}
        lines.append(
            f"| {name} | {pos.get('pairs', 'n/a')} | {_pct(pos.get('flip_rate'))} | "
            f"{_pct(pos.get('first_wins'))} | {_pct(con['agreement'])} ({con['questions']}, {con['seeds']}) | "
            + (
                f"{_pct(copied['share'])} ({copied['copied']} of {copied['answers']}) |"
                if copied
                else "n/a (no prompt) |"
            )
        )
    if results.get("known"):
        lines += [
            "",
            "## Known orderings: does the judge rank the known-better system higher?",
            "",
            "Per dialogue judged for both (Arena: both orders combined; UniEval: passes or not; WikiChat: mean "
            "of the five scores; GTEval: result against the ground truth). Agreement = wins / (wins + losses), "
            '95% Wilson interval; "cannot tell": the interval holds 50%.',
            "",
            "| judge | better | worse | compared | wins | ties | losses | agreement % (95% interval) | reading |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {k['judge']} | {k['better']} | {k['worse']} | {k['compared']} | {k['wins']} | {k['ties']} | "
            f"{k['losses']} | {_pct(k['agreement'])} ({_pct(k['low'])} to {_pct(k['high'])}) | {k['reading']} |"
            for k in results["known"]
        ]
    lines += ["", "## Cost", "", "| judge | judgments | LLM calls | seconds |", "|---|---|---|---|"]
    lines += [
        f"| {name} | {c['judgments']} | {c['llm_calls']} | {c['seconds']:.1f} |" for name, c in results["cost"].items()
    ]
    return "\n".join(lines) + "\n"


def plot_elo(results: dict[str, Any], path: Path) -> Path | None:
    """Bootstrap Elo per system with its 95% interval, one panel per pairwise judge (Arena, the rule checks); None
    without a parsed game."""
    panels = [
        (title, [r for r in results.get(key, {}).get("elo", []) if r["games"]])
        for key, title in (("arena", "BotChat Arena"), ("checks", "Rule checks (no LLM)"))
    ]
    panels = [(title, ratings) for title, ratings in panels if ratings]
    if not panels:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = max(len(ratings) for _, ratings in panels)
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 0.6 * rows + 1.5), squeeze=False)
    for ax, (title, ratings) in zip(axes[0], panels):
        names = [r["player"] for r in ratings][::-1]
        elos = [r["elo"] for r in ratings][::-1]
        low = [r["elo"] - r["low"] for r in ratings][::-1]
        high = [r["high"] - r["elo"] for r in ratings][::-1]
        ax.errorbar(elos, range(len(names)), xerr=[low, high], fmt="o", capsize=4)
        ax.set_yticks(range(len(names)), names)
        ax.axvline(results["elo_settings"]["initial"], color="grey", linewidth=0.8, linestyle=":")
        ax.set_xlabel("Bootstrap Elo (median of shuffles; 95% resampling interval)")
        ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_results(results: dict[str, Any], out_dir: Path, command: str = "", judge_model: str = "") -> Path:
    """results.json, results.md and elo.png under `out_dir`; returns the Markdown file."""
    out_dir = Path(out_dir)
    write_atomic(
        out_dir / "results.json", json.dumps({"command": command, "judge_model": judge_model, **results}, indent=1)
    )
    write_atomic(out_dir / "results.md", markdown(results, command, judge_model))
    plot_elo(results, out_dir / "elo.png")
    return out_dir / "results.md"
