"""The learning curve (paper Fig. 3): held-out reward, KF1 and LLM calls per turn against training episodes, mean
and min-max over seeds, with the reference policies as horizontal lines; and a Markdown summary."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
from omegaconf import OmegaConf

from augmenter.errors import InputError
from augmenter.storage import write_atomic

PANELS = [
    ("heldout_reward", "reward", "held-out reward", 1.0),
    ("heldout_kf1", "kf1", "held-out KF1 in % (knowledge-seeking turns)", 100.0),
    ("heldout_llm_calls", "llm_calls", "LLM calls per turn", 1.0),
]
LINE_STYLES = {"random": ":", "no_knowledge": "--"}


def read_runs(name_dir: Path) -> dict[str, list[dict]]:
    runs = {}
    for path in sorted(name_dir.glob("seed*/metrics.csv")):
        with path.open(newline="", encoding="utf-8") as source:
            rows = [
                {k: (v if k == "stage" else float(v) if v not in ("", "nan") else float("nan")) for k, v in r.items()}
                for r in csv.DictReader(source)
            ]
        if rows:
            runs[path.parent.name] = rows
    if not runs:
        raise InputError(f"no training runs (seed*/metrics.csv) under {name_dir}")
    return runs


def _aligned(runs: dict[str, list[dict]], key: str) -> tuple[np.ndarray, np.ndarray]:
    """Episodes every seed has reached, and the metric per seed at those episodes."""
    episode_sets = [{r["episode"] for r in rows} for rows in runs.values()]
    episodes = np.array(sorted(set.intersection(*episode_sets)))
    values = np.array([[next(r[key] for r in rows if r["episode"] == e) for e in episodes] for rows in runs.values()])
    return episodes, values


def first_surpassing(episodes: np.ndarray, mean: np.ndarray, level: float) -> float | None:
    above = np.nonzero(mean > level)[0]
    return None if len(above) == 0 else float(episodes[above[0]])


def _pyplot():
    """matplotlib's pyplot, drawing to files only (imported here: most of a second, paid only for a figure)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def write_curve(name_dir: str | Path, out: str | Path | None = None) -> Path:
    """fig3.png and curve.md from `<name_dir>/seed*/metrics.csv` and `<name_dir>/baselines.json`."""
    plt = _pyplot()
    name_dir = Path(name_dir)
    out = Path(out) if out else name_dir
    out.mkdir(parents=True, exist_ok=True)
    runs = read_runs(name_dir)
    baselines_path = name_dir / "baselines.json"
    baselines = json.loads(baselines_path.read_text())["scores"] if baselines_path.exists() else {}
    starts_cloned = next(iter(runs.values()))[0]["stage"] == "cloned"
    fig, axes = plt.subplots(1, len(PANELS), figsize=(5 * len(PANELS), 3.6))
    for ax, (key, base_key, title, scale) in zip(axes, PANELS):
        episodes, values = _aligned(runs, key)
        values = values * scale
        ax.plot(episodes, values.mean(0), color="tab:blue", label=f"T5 policy (mean of {len(runs)} seeds)")
        ax.fill_between(episodes, values.min(0), values.max(0), color="tab:blue", alpha=0.2, label="min-max")
        for i, (name, score) in enumerate(baselines.items()):
            ax.axhline(scale * score[base_key], linestyle=LINE_STYLES.get(name, "-."), color=f"C{i + 1}", label=name)
        ax.set_title(title)
        ax.set_xlabel("REINFORCE episodes" + (" (after behaviour cloning)" if starts_cloned else ""))
    axes[0].legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(out / "fig3.png", dpi=120)
    plt.close(fig)

    lines = [
        f"# Learning curve: {name_dir.name} ({len(runs)} seeds: {', '.join(runs)})",
        "",
        "Held-out turns, greedy policy. KF1: mean utility against the gold knowledge on knowledge-seeking turns.",
        "",
    ]
    episodes, reward = _aligned(runs, "heldout_reward")
    if "random" in baselines:
        first = first_surpassing(episodes, reward.mean(0), baselines["random"]["reward"])
        lines.append(
            f"Mean held-out reward first above random's ({baselines['random']['reward']:.4f}): "
            + ("never" if first is None else f"after {first:.0f} episodes")
            + "."
        )
        lines.append("")
    lines += [
        "| policy | reward | KF1 | LLM calls/turn | consolidates (seeking) | consolidates (other) |",
        "|---|---|---|---|---|---|",
    ]
    for name, s in baselines.items():
        lines.append(
            f"| {name} | {s['reward']:.4f} | {100 * s['kf1']:.2f} | {s['llm_calls']:.2f} | "
            f"{s['consolidate_seeking']:.2f} | {s['consolidate_other']:.2f} |"
        )
    finals = [rows[-1] for rows in runs.values()]
    starts = [rows[0] for rows in runs.values()]
    start_label = "T5, after behaviour cloning" if starts[0]["stage"] == "cloned" else "T5, random init"
    for label, pick in ((start_label, starts), ("T5, final", finals)):

        def get(k, xs=pick):
            return np.array([r[k] for r in xs])

        lines.append(
            f"| {label} (mean [min, max] of {len(pick)}) | {get('heldout_reward').mean():.4f} "
            f"[{get('heldout_reward').min():.4f}, {get('heldout_reward').max():.4f}] | "
            f"{100 * get('heldout_kf1').mean():.2f} [{100 * get('heldout_kf1').min():.2f}, "
            f"{100 * get('heldout_kf1').max():.2f}] | {get('heldout_llm_calls').mean():.2f} | "
            f"{get('heldout_consolidate_seeking').mean():.2f} | "
            f"{get('heldout_consolidate_other').mean():.2f} |"
        )
    last = ", ".join(f"{k}: {int(v[-1]['episode'])}" for k, v in runs.items())
    lines += ["", f"Final episode per seed: {last}.", "", "![learning curve](fig3.png)", ""]
    write_atomic(out / "curve.md", "\n".join(lines))
    return out


def write_tradeoff(name_dirs: list[str | Path], out: str | Path) -> Path:
    """tradeoff.png and tradeoff.md: held-out KF1 against LLM calls per turn of the final policies of training runs
    that differ in their cost term (each seed a point, each run's mean a larger one), with the reference policies."""
    plt = _pyplot()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    lines = [
        "# KF1 against LLM calls: the cost term's trade-off",
        "",
        "| run | cost per LLM call / consolidation | seeds | KF1 (mean [min, max]) | LLM calls / turn | reward |",
        "|---|---|---|---|---|---|",
    ]
    baselines: dict = {}
    for i, name_dir in enumerate(Path(d) for d in name_dirs):
        runs = read_runs(name_dir)
        env = OmegaConf.load(next(name_dir.glob("seed*/config.yaml"))).env
        finals = [rows[-1] for rows in runs.values()]
        kf1 = np.array([100 * r["heldout_kf1"] for r in finals])
        calls = np.array([r["heldout_llm_calls"] for r in finals])
        reward = np.array([r["heldout_reward"] for r in finals])
        label = f"{name_dir.name} (costs {env.llm_call_cost} / {env.consolidation_cost})"
        ax.scatter(calls, kf1, color=f"C{i}", alpha=0.4, s=20)
        ax.scatter([calls.mean()], [kf1.mean()], color=f"C{i}", s=90, marker="D", label=label)
        lines.append(
            f"| {name_dir.name} | {env.llm_call_cost} / {env.consolidation_cost} | {len(finals)} | "
            f"{kf1.mean():.2f} [{kf1.min():.2f}, {kf1.max():.2f}] | {calls.mean():.2f} | "
            f"{reward.mean():.4f} |"
        )
        path = name_dir / "baselines.json"
        if path.exists() and not baselines:
            baselines = json.loads(path.read_text())["scores"]
    for j, (name, s) in enumerate(baselines.items()):
        ax.scatter(
            [s["llm_calls"]],
            [100 * s["kf1"]],
            marker="x",
            s=70,
            color="black" if j == 0 else f"C{j + 4}",
            label=f"{name} (rule)" if name != "random" else "random",
        )
        lines.append(f"| {name} (reference) | - | - | {100 * s['kf1']:.2f} | {s['llm_calls']:.2f} | - |")
    ax.set_xlabel("LLM calls per turn (held-out)")
    ax.set_ylabel("KF1 in % (held-out, knowledge-seeking turns)")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(out / "tradeoff.png", dpi=120)
    plt.close(fig)
    lines += ["", "![trade-off](tradeoff.png)", ""]
    write_atomic(out / "tradeoff.md", "\n".join(lines))
    return out
