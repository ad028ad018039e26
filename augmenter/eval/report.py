"""`augmenter report`: the paper's tables (Markdown) and figures (PNG) from the records of `augmenter eval`.

A sample directory (e.g. `runs/eval/dstc11-dev-n200-seed0/`) holds one folder per run name. Runs named after
`configs/experiment/` fill the paper's tables, beside the paper's numbers (ChatGPT); every run, named or
not, is listed in the last table. Metrics are recomputed from the records, so the report is always current;
failed turns are not scored: the tables count them, and runs with failed or missing turns are listed first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from augmenter.eval.grounding import load_grounding
from augmenter.eval.records import failure, read_records
from augmenter.eval.runner import summarize
from augmenter.eval.tasks import KINDS, GroundedDialogueTask
from augmenter.storage import make_dir, write_atomic

# (run name, row label, the paper's KF1 for that row or None)
TABLE1 = [
    ("table1_llm_only", "LLM only", 26.71),
    ("table1_gold", "+ gold fact", 57.44),
    ("table1_gold_feedback", "+ gold fact + feedback", 60.76),
]  # the paper's news chat is a re-crawl
TABLE2 = [
    ("table2_llm_only", "LLM only", 31.33),
    ("table2_bm25", "+ BM25", 34.07),
    ("table2_bm25_feedback", "+ BM25 + feedback", 37.41),
    ("table2_gold", "+ gold knowledge", 45.63),
    ("table2_gold_feedback", "+ gold knowledge + feedback", 52.83),
]
TABLE4 = [
    ("table2_bm25", "w/o feedback", 34.07),
    ("table2_bm25_feedback", "w/ rule-based feedback", 37.41),
    ("table4_self_critique", "w/ self-criticism feedback", 37.10),
]
FIG4 = [
    ("table2_llm_only", "no knowledge consolidator", None),
    ("fig4_self_ask", "self-ask", None),
    ("table2_bm25", "always use", None),
]
FIG5 = [
    ("table2_bm25", "(1) no utility, no feedback", None),
    ("table2_bm25_feedback", "(2) utility + feedback", None),
    ("fig5_no_gating", "(3) feedback without utility gating", None),
    ("fig5_always_feedback", "(4) always feedback", None),
    ("fig5_rerank", "(5) rerank the best of two", None),
]
CONSOLIDATOR = [
    ("table2_bm25", "BM25 on the user's words", None),
    ("linker_bm25", "+ evidence linker (review context, FAQ)", None),
    ("querygen_bm25", "BM25 on an LLM-written query", None),
]

GROUNDING = [*TABLE2, ("claims_bm25", "+ BM25 + claims utility + its feedback", None)]

TABLE5 = [
    ("table5_closed_book", "LLM only (closed book)", 0.59),
    ("table5_dpr", "+ DPR (dense retrieval)", 2.38),
    ("table5_core", "+ linker + chainer (CORE)", 8.08),
    ("table5_core_feedback", "+ linker + chainer + feedback", 11.80),
]  # the paper's F1 (ChatGPT)

METRICS = ["KF1", "BLEU-4", "ROUGE-1", "ROUGE-L", "chrF", "METEOR", "BERTScore", "BARTScore", "BLEURT"]


def _fmt(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _sample_size(run_dir: Path) -> int | None:
    """The number of turns in the run's sample, from its summary.json (None when unknown)."""
    try:
        turns = json.loads((run_dir / "summary.json").read_text(encoding="utf-8")).get("turns")
    except (OSError, ValueError, AttributeError, RecursionError):
        return None
    return turns if isinstance(turns, int) else None


def task_of(run_dir: Path) -> type:
    """The task kind of a run: its config.json's `eval.dataset`, else the sample directory's name
    (`<dataset>-<split>-n<limit>-seed<seed>`); grounded dialogue when neither names a known data set."""
    try:
        dataset = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))["eval"]["dataset"]
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        dataset = run_dir.parent.name.split("-")[0]
    return KINDS.get(dataset, GroundedDialogueTask)


def load_runs(sample_dir: Path, with_bertscore: bool = True) -> dict[str, dict[str, Any]]:
    """Summaries of every run under a sample directory, recomputed from its records; a run without a scored turn
    has its counts only (no "metrics"). "missing": turns of the sample not recorded (a stopped run). A run's score
    is its headline metric, `score_metric`: KF1, or answer F1 for short answers (Wiki QA); "score_ci95" is its
    bootstrap interval and "score_per_turn" its value per turn."""
    runs = {}
    for d in sorted(p for p in sample_dir.iterdir() if (p / "records.jsonl").exists()):
        task = task_of(d)
        records = read_records(d / "records.jsonl", task.metric_keys)
        if not records:
            continue
        summary = runs[d.name] = summarize(records, with_bertscore=with_bertscore, task=task)
        summary["missing"] = max(0, (_sample_size(d) or 0) - len(records))
        records = [r for r in records if failure(r) is None]
        if not records:
            continue
        recalls = [r["evidence_recall"] for r in records if r.get("evidence_recall") is not None]
        summary["evidence_recall"] = sum(recalls) / len(recalls) if recalls else None
        key = summary["score_metric"] = task.score_metric
        summary["score_ci95"] = bootstrap_ci([r["metrics"][key] for r in records])
        summary["score_per_turn"] = {r["dialogue_id"]: r["metrics"][key] for r in records}
        grounding = load_grounding(d)
        if grounding:
            summary["grounding"] = {k: v for k, v in grounding.items() if k != "per_turn"}
    return runs


def bootstrap_ci(values: list[float], resamples: int = 2000, seed: int = 0) -> list[float]:
    """95% percentile-bootstrap interval of the mean over turns (seeded, so reports are reproducible)."""
    x = np.asarray(values, dtype=float)
    if not len(x):
        return [float("nan"), float("nan")]
    means = x[np.random.default_rng(seed).integers(0, len(x), size=(resamples, len(x)))].mean(axis=1)
    return [float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))]


def _metric_table(rows, runs) -> list[str]:
    head = ["system", "turns", "failed turns", *METRICS, "avg. length", "paper KF1 (ChatGPT)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, label, paper in rows:
        if name not in runs:
            continue
        m = runs[name]["metrics"]
        lines.append(
            "| "
            + " | ".join(
                [
                    f"{label} (`{name}`)",
                    str(runs[name]["ok"]),
                    _failed(runs[name]),
                    *[_fmt(m.get(k)) for k in METRICS],
                    _fmt(m.get("length"), 1),
                    _fmt(paper),
                ]
            )
            + " |"
        )
    return lines


def paired_delta(run: dict, base: dict) -> tuple[float, list[float]] | None:
    """Mean score difference run - base over the turns both scored, with its paired bootstrap 95% CI."""
    shared = [t for t in run["score_per_turn"] if t in base["score_per_turn"]]
    if not shared:
        return None
    diffs = [run["score_per_turn"][t] - base["score_per_turn"][t] for t in shared]
    return sum(diffs) / len(diffs), bootstrap_ci(diffs)


def _delta(run: dict, base: dict | None) -> str:
    if base is None or run is base:
        return "–"
    d = paired_delta(run, base)
    return "n/a" if d is None else f"{d[0]:+.2f} ({d[1][0]:+.1f} to {d[1][1]:+.1f})"


def _cached_share(cost: dict) -> str:
    if "cached_llm_calls" not in cost or not cost["llm_calls"]:
        return "n/a"
    return f"{100 * cost['cached_llm_calls'] / cost['llm_calls']:.0f}%"


def _cost_table(rows, runs, with_delta: bool = True) -> list[str]:
    present = [name for name, _, _ in rows if name in runs]
    base = runs[present[0]] if present and with_delta else None
    head = [
        "system",
        "KF1",
        "KF1 95% CI",
        "ΔKF1 vs first row (paired 95% CI)",
        "LLM calls",
        "from the LLM cache",
        "candidates",
        "prompt tokens",
        "completion tokens",
        "wall s",
        "knowledge used",
        "gold recall of evidence",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, label, _ in rows:
        if name not in runs:
            continue
        r, c = runs[name], runs[name]["cost"]
        lines.append(
            "| "
            + " | ".join(
                [
                    f"{label} (`{name}`)",
                    _fmt(r["metrics"]["KF1"]),
                    "–".join(_fmt(v, 1) for v in r["score_ci95"]),
                    _delta(r, base),
                    _fmt(c["llm_calls"]),
                    _cached_share(c),
                    _fmt(c.get("candidates")),
                    _fmt(c["prompt_tokens"], 0),
                    _fmt(c["completion_tokens"], 0),
                    _fmt(c["turn_seconds"]),
                    f"{100 * c['knowledge_used']:.0f}%",
                    _fmt(r["evidence_recall"]),
                ]
            )
            + " |"
        )
    return lines


def _grounding_table(rows, runs) -> list[str]:
    """The share of sent responses with a claim the gold knowledge does not support (judged claim by
    claim by a verifier against the gold snippets), the "I don't know" rate, KF1 and LLM calls."""
    head = [
        "system",
        "KF1",
        "KF1 95% CI",
        "responses with an unsupported claim",
        "... with a refuted claim",
        "supported share of claims",
        "claims per response",
        '"I don\'t know"',
        "only supported claims sent",
        "LLM calls",
        "judged by",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, label, _ in rows:
        if name not in runs or "grounding" not in runs[name]:
            continue
        r, g = runs[name], runs[name]["grounding"]
        lines.append(
            "| "
            + " | ".join(
                [
                    f"{label} (`{name}`)",
                    _fmt(r["metrics"]["KF1"]),
                    "–".join(_fmt(v, 1) for v in r["score_ci95"]),
                    f"{g['unsupported_response_rate']:.1f}%",
                    f"{g['refuted_response_rate']:.1f}%",
                    "n/a" if g["supported_claim_share"] is None else f"{g['supported_claim_share']:.1f}%",
                    _fmt(g["claims_per_response"]),
                    f"{g['idk_rate']:.1f}%",
                    f"{r.get('outcomes_percent', {}).get('partial', 0.0):.1f}%",
                    _fmt(r["cost"]["llm_calls"]),
                    g["verifier"],
                ]
            )
            + " |"
        )
    return lines


def _qa_table(rows, runs) -> list[str]:
    """Wiki QA (Table 5): answer P/R/F1 beside the paper's F1, bootstrap CI and paired ΔF1 vs the first row."""
    present = [name for name, _, _ in rows if name in runs]
    base = runs[present[0]] if present else None
    head = [
        "system",
        "questions",
        "failed",
        "P",
        "R",
        "F1",
        "F1 95% CI",
        "ΔF1 vs first row (paired 95% CI)",
        "answer recall@5 of evidence",
        "LLM calls",
        "paper F1 (ChatGPT)",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, label, paper in rows:
        if name not in runs:
            continue
        r, m = runs[name], runs[name]["metrics"]
        lines.append(
            "| "
            + " | ".join(
                [
                    f"{label} (`{name}`)",
                    str(r["ok"]),
                    _failed(r),
                    _fmt(m["P"]),
                    _fmt(m["R"]),
                    _fmt(m["F1"]),
                    "–".join(_fmt(v, 1) for v in r["score_ci95"]),
                    _delta(r, base),
                    _fmt(m["answer_recall@5"]),
                    _fmt(r["cost"]["llm_calls"]),
                    _fmt(paper),
                ]
            )
            + " |"
        )
    return lines


def _figure():
    import matplotlib  # with pyplot, most of a second: paid only when a figure is drawn

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(6, 4))


def _save(fig, path: Path) -> Path:
    import matplotlib.pyplot as plt  # loaded by `_figure` already

    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_fig5(runs, path: Path) -> Path | None:
    """KF1 against the average number of LLM calls per turn (the paper's Fig. 5)."""
    points = [(label, runs[name]) for name, label, _ in FIG5 if name in runs]
    if not points:
        return None
    fig, ax = _figure()
    for label, run in points:
        x, y = run["cost"]["llm_calls"], run["metrics"]["KF1"]
        ax.scatter([x], [y], s=40, label=label)
        ax.annotate(label.split()[0], (x, y), textcoords="offset points", xytext=(5, 4), fontsize=8)  # "(n)"
    ax.margins(x=0.15, y=0.15)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_xlabel("average LLM calls per turn")
    ax.set_ylabel("KF1 (%)")
    ax.set_title(f"Utility and feedback (DSTC11, {points[0][1]['turns']} turns)")
    ax.grid(alpha=0.3)
    return _save(fig, path)


def plot_fig4(runs, path: Path) -> Path | None:
    """KF1 and the share of turns that used the knowledge consolidator, per policy (the paper's Fig. 4)."""
    points = [(label, runs[name]) for name, label, _ in FIG4 if name in runs]
    if not points:
        return None
    fig, ax = _figure()
    labels = [label for label, _ in points]
    kf1 = [run["metrics"]["KF1"] for _, run in points]
    bars = ax.bar(labels, kf1, color="#4c72b0")
    for bar, (_, run) in zip(bars, points):
        ax.annotate(
            f"KC used {100 * run['cost']['knowledge_used']:.0f}%",
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    ax.set_ylabel("KF1 (%)")
    ax.set_title("Knowledge-use policies (DSTC11)")
    return _save(fig, path)


def _failed(run: dict) -> str:
    return str(run["failed"]) + (f" (+{run['missing']} not run)" if run.get("missing") else "")


def _incomplete(runs: dict[str, dict]) -> list[str]:
    """A warning listing the runs with failed or missing turns (none: no lines)."""
    lines = []
    for name, run in runs.items():
        parts = [f"{run['failed']} failed (most common: {next(iter(run['failure_reasons']))})"] if run["failed"] else []
        parts += [f"{run['missing']} not run"] if run.get("missing") else []
        if parts:
            lines.append(f"- `{name}`: turns: {run['ok']} scored, " + ", ".join(parts))
    if not lines:
        return []
    return [
        "**Incomplete runs**: their figures cover only their scored turns (failed turns are never scored); "
        "run `augmenter eval` or `augmenter grid` again to retry the failed and missing turns.",
        "",
        *lines,
        "",
    ]


def _scored(runs: dict[str, dict]) -> dict[str, dict]:
    return {name: run for name, run in runs.items() if "metrics" in run}


def render(runs: dict[str, dict], title: str) -> str:
    warning, runs = _incomplete(runs), _scored(runs)
    out = [
        f"# {title}",
        "",
        "Scores in %. BERTScore uses all-MiniLM-L6-v2 (layer 6, F1, no rescaling), not the paper's RoBERTa-large; "
        "BARTScore and BLEURT have no offline weights (n/a). KF1 is against the gold knowledge. "
        "Costs are per turn; LLM calls and tokens count cache hits as calls, but wall time does not pay for "
        "them (runs share prompts through the LLM cache; `bench/eval_cost.py` measures uncached wall time). "
        "'gold recall of evidence': the share of the gold snippets among the evidence the LLM saw. "
        "KF1 95% CI: percentile bootstrap over turns; "
        "ΔKF1: paired difference to the table's first row over the same turns.",
        "",
        *warning,
    ]
    if runs and all(run.get("score_metric") == "F1" for run in runs.values()):  # Wiki QA
        out = [
            f"# {title}",
            "",
            "Wiki QA (OTT-QA dev; the knowledge is the 789 dev tables and their linked passages, "
            "not the 400K-table open corpus). Token-level P/R/F1 in % against the answers; answer recall@5: "
            "share of questions with an answer in the top-5 evidence. F1 95% CI: percentile bootstrap over "
            "questions; ΔF1: paired difference to the first row.",
            "",
            *warning,
            "## Table 5: Wiki QA",
            "",
            *_qa_table(TABLE5, runs),
            "",
            "## All runs",
            "",
            *_qa_table([(name, name, None) for name in runs], runs),
            "",
        ]
        return "\n".join(out)
    sections = [
        ("Table 1: news chat (DSTC7)", TABLE1),
        ("Table 2: customer service (DSTC11)", TABLE2),
        ("Table 4: feedback types", TABLE4),
        ("Fig. 4: knowledge-use policies", FIG4),
        ("Fig. 5: utility and feedback", FIG5),
        ("Knowledge Consolidator options (DSTC11)", CONSOLIDATOR),
    ]
    for heading, rows in sections:
        if any(name in runs for name, _, _ in rows):
            out += [f"## {heading}", "", *_metric_table(rows, runs), "", *_cost_table(rows, runs), ""]
    if any("grounding" in runs.get(name, {}) for name, _, _ in GROUNDING):
        out += [
            "## Grounding: claims the gold knowledge does not support",
            "",
            'Each sent response is split into sentences that state something (questions and "I don\'t know" '
            "sentences are not claims); each is judged against the turn's gold snippets (`augmenter ground`).",
            "",
            *_grounding_table(GROUNDING, runs),
            "",
        ]
    everything = [(name, name, None) for name in runs]
    out += [
        "## All runs",
        "",
        *_metric_table(everything, runs),
        "",
        *_cost_table(everything, runs, with_delta=False),
        "",
    ]
    return "\n".join(out)


def write_report(sample_dir: Path, out_dir: Path, with_bertscore: bool = True) -> Path:
    """report.md, summaries.json and fig4.png / fig5.png (when their runs exist) in `out_dir`."""
    runs = load_runs(sample_dir, with_bertscore=with_bertscore)
    make_dir(out_dir, "the report's folder (--out)")
    public = {name: {k: v for k, v in run.items() if k != "score_per_turn"} for name, run in runs.items()}
    write_atomic(out_dir / "summaries.json", json.dumps(public, indent=1))
    text = render(runs, f"Evaluation: {sample_dir.name}")
    for name, plot in (("fig4.png", plot_fig4), ("fig5.png", plot_fig5)):
        if plot(_scored(runs), out_dir / name):
            text += f"\n![{name}]({name})\n"
    write_atomic(out_dir / "report.md", text)
    return out_dir / "report.md"
