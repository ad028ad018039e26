"""Table 2 with two models side by side: KF1 per row, the gains the paper reports (knowledge,
feedback) with paired bootstrap intervals over the same turns, and each model's uncached cost per turn.

    augmenter grid --only table2 eval.limit=200 llm=local_1_5b eval.out_dir=runs/eval-1.5b  # the 1.5B model
    (the 0.5B model: docs/results/eval/dstc11-dev-n200-seed0/summaries.json, or `augmenter grid --only table2`)
    python bench/eval_cost.py --limit 10 --only table2 --out bench/results/eval_cost_table2_0_5b.json
    python bench/eval_cost.py --limit 10 --only table2 --out bench/results/eval_cost_table2_1_5b.json llm=local_1_5b
    python bench/table2_models.py

Writes bench/results/table2_models.json and .md (with these commands) and table2_models.png. A model may be given
by a report's `summaries.json` instead of a sample directory (`augmenter report` writes one beside report.md): its
KF1 and intervals are read as they are, and its gains are differences of means (no paired interval: the per-turn
scores are in the records only).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from augmenter.eval.report import load_runs, paired_delta

ROOT = Path(__file__).resolve().parents[1]
ROWS = [
    ("table2_llm_only", "LLM only", 31.33),
    ("table2_bm25", "+ BM25", 34.07),
    ("table2_bm25_feedback", "+ BM25 + feedback", 37.41),
    ("table2_gold", "+ gold knowledge", 45.63),
    ("table2_gold_feedback", "+ gold knowledge + feedback", 52.83),
]
GAINS = [
    ("BM25 over LLM only", "table2_bm25", "table2_llm_only"),
    ("feedback over + BM25", "table2_bm25_feedback", "table2_bm25"),
    ("feedback over + gold", "table2_gold_feedback", "table2_gold"),
    ("gold over BM25", "table2_gold", "table2_bm25"),
]
PAPER = {name: score for name, _, score in ROWS}


def _pairs(text: str) -> list[tuple[str, str]]:
    return [tuple(p.split("=", 1)) for p in text.split(",") if p.strip()]  # type: ignore[misc]


def _gain(runs: dict, a: str, b: str):
    if a not in runs or b not in runs:
        return None
    if "score_per_turn" not in runs[a] or "score_per_turn" not in runs[b]:  # from summaries: the means only
        d = (runs[a]["score"] - runs[b]["score"], None)
    else:
        d = paired_delta(runs[a], runs[b])
    return (
        None
        if d is None
        else {
            "delta": round(d[0], 2),
            "ci95": d[1] and [round(x, 2) for x in d[1]],
            "relative_%": round(100 * d[0] / runs[b]["score"], 1) if runs[b]["score"] else None,
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--models",
        default="0.5B=docs/results/eval/dstc11-dev-n200-seed0/summaries.json,1.5B=runs/eval-1.5b/dstc11-dev-n200-seed0",
        help="NAME=SAMPLE_DIR or NAME=summaries.json,... (of `augmenter grid --only table2`)",
    )
    ap.add_argument(
        "--costs",
        default="0.5B=bench/results/eval_cost_table2_0_5b.json,1.5B=bench/results/eval_cost_table2_1_5b.json",
        help="NAME=bench/eval_cost.py output,... (missing files are left out)",
    )
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "table2_models"))
    args = ap.parse_args()
    models = {}
    for name, sample in _pairs(args.models):
        if Path(sample).is_file():  # a report's summaries.json: no records, no per-turn scores
            runs = {
                r: {**s, "ok": s["turns"], "failed": s.get("failed", 0), "missing": 0, "score_ci95": s["KF1_ci95"]}
                for r, s in json.loads(Path(sample).read_text()).items()
            }
        elif Path(sample).is_dir():
            runs = load_runs(Path(sample), with_bertscore=False)
        else:
            sys.exit(f"{sample}: no such sample directory (run the grid first: see this script's docstring)")
        for run in runs.values():  # a run's KF1, and its turns' (the same turns in every run of a sample)
            run["score"] = run.get("metrics", {}).get("KF1")
        missing = [r for r, _, _ in ROWS if r not in runs or runs[r].get("score") is None or runs[r]["missing"]]
        if missing:
            sys.exit(f"{sample}: {', '.join(missing)} not run or not finished (rerun the grid: it resumes)")
        costs_path = dict(_pairs(args.costs)).get(name)
        costs = json.loads(Path(costs_path).read_text())["runs"] if costs_path and Path(costs_path).exists() else {}
        models[name] = {
            "sample": sample,
            "rows": {
                r: {
                    "KF1": round(runs[r]["score"], 2),
                    "ci95": [round(x, 2) for x in runs[r]["score_ci95"]],
                    "turns": runs[r]["ok"],
                    "failed": runs[r]["failed"],
                    "length": round(runs[r]["metrics"].get("length", float("nan")), 1),
                    "llm_calls": round(runs[r]["cost"]["llm_calls"], 2),
                    "uncached_cost": costs.get(r),
                }
                for r, _, _ in ROWS
            },
            "gains": {label: _gain(runs, a, b) for label, a, b in GAINS},
            "runs": runs,
        }
    names = list(models)
    across = {}
    if len(names) == 2:  # the larger model against the smaller, row by row, over the same turns
        small, large = (models[n]["runs"] for n in names)
        across = {r: _gain({"a": large[r], "b": small[r]}, "a", "b") for r, _, _ in ROWS}
    paper_gains = {label: round(PAPER[a] - PAPER[b], 2) for label, a, b in GAINS}
    for m in models.values():
        del m["runs"]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "command": " ".join(["python", "bench/table2_models.py", *sys.argv[1:]]),
        "models": models,
        "paper_gains": paper_gains,
        "larger_minus_smaller": across,
    }
    out.with_suffix(".json").write_text(json.dumps(report, indent=1))
    out.with_suffix(".md").write_text(render(report, names))
    plot(report, names, out.with_suffix(".png"))
    print(out.with_suffix(".md").read_text())


def _ci(g) -> str:
    if g is None:
        return "n/a"
    if g["ci95"] is None:  # a difference of means, no paired interval
        return f"{g['delta']:+.2f} (means)"
    return f"{g['delta']:+.2f} ({g['ci95'][0]:+.1f} to {g['ci95'][1]:+.1f})"


def render(report: dict, names: list[str]) -> str:
    models = report["models"]
    lines = [
        "# Table 2 (DSTC11 dev) with two models",
        "",
        f"Command: `{report['command']}`",
        "",
        "| system | paper KF1 | "
        + " | ".join(f"{n} KF1 (95% CI) | {n} length" for n in names)
        + (f" | {names[1]} - {names[0]} (paired 95% CI)" if len(names) == 2 else "")
        + " |",
        "|---|---|" + "---|---|" * len(names) + ("---|" if len(names) == 2 else ""),
    ]
    for r, label, paper in ROWS:
        cells = []
        for n in names:
            row = models[n]["rows"][r]
            cells += [f"{row['KF1']:.2f} ({row['ci95'][0]:.1f}–{row['ci95'][1]:.1f})", f"{row['length']:.1f}"]
        extra = [_ci(report["larger_minus_smaller"].get(r))] if len(names) == 2 else []
        lines.append(f"| {label} | {paper:.2f} | " + " | ".join(cells + extra) + " |")
    lines += [
        "",
        "| gain | paper (relative) | " + " | ".join(f"{n} (paired 95% CI) | {n} relative" for n in names) + " |",
        "|---|---|" + "---|---|" * len(names),
    ]
    for label, _, _ in GAINS:
        cells = []
        for n in names:
            g = models[n]["gains"][label]
            cells += [_ci(g), "n/a" if g is None or g["relative_%"] is None else f"{g['relative_%']:+.1f}%"]
        a, b = next((a, b) for lab, a, b in GAINS if lab == label)
        paper = f"{report['paper_gains'][label]:+.2f} ({100 * (PAPER[a] - PAPER[b]) / PAPER[b]:+.1f}%)"
        lines.append(f"| {label} | {paper} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Uncached cost per turn (`bench/eval_cost.py`, LLM cache off):",
        "",
        "| system | "
        + " | ".join(f"{n} wall s (mean / median) | {n} prompt + completion tokens" for n in names)
        + " |",
        "|---|" + "---|---|" * len(names),
    ]
    for r, label, _ in ROWS:
        cells = []
        for n in names:
            c = models[n]["rows"][r]["uncached_cost"]
            cells += (
                ["n/a", "n/a"]
                if not c
                else [
                    f"{c['wall_s_mean']:.2f} / {c['wall_s_median']:.2f}",
                    f"{c['prompt_tokens']:.0f} + {c['completion_tokens']:.0f}",
                ]
            )
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(report: dict, names: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / (len(names) + 1)
    for i, series in enumerate([*names, "paper (ChatGPT)"]):
        xs = [j + (i - len(names) / 2) * width for j in range(len(ROWS))]
        if series in report["models"]:
            rows = [report["models"][series]["rows"][r] for r, _, _ in ROWS]
            ys = [row["KF1"] for row in rows]
            err = [[y - row["ci95"][0] for y, row in zip(ys, rows)], [row["ci95"][1] - y for y, row in zip(ys, rows)]]
            ax.bar(xs, ys, width, yerr=err, capsize=3, label=series)
        else:
            ax.bar(xs, [p for _, _, p in ROWS], width, label=series, color="lightgrey")
    ax.set_xticks(range(len(ROWS)), [label for _, label, _ in ROWS], rotation=15, ha="right")
    ax.set_ylabel("KF1 (%)")
    ax.set_title("Table 2 on 200 DSTC11 dev turns: KF1 by model (95% bootstrap intervals)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
