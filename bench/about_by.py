"""What the review judge's about-pass should ask: the question ("Is it quiet there?") or its topic named without a
side ("noise"), measured on the 468 labelled (question, review sentence) pairs of bench/labels/opinions/.

The opinion gatherer keeps a side of the reviews only with a sentence the about-pass finds on the question; asked of
the question, the 1.5B model reads a sentence on the other side ("it is quite noisy" for "Is it quiet?") as off the
question, so the complaints of mixed reviews go missing and the verdict takes one side. Per way of asking
(`question`, `topic`, `either`: the higher of the two), it reports the AUC of related against unrelated sentences
(praise and complaint apart) and, among the sentences the stance judge puts on a side (P(related) >= 0.85), the
recall of each side's labelled sentences and the precision of those kept, at fixed thresholds and with the
threshold chosen on the training folds (5 folds by dialogue, F0.5: a quote had better be right than found). Per
turn (70), it also sets the sides the gatherer would count (a side with a sentence of the stance judge on it whose
about-pass reaches the threshold) against the labelled sides: right, one-sided where the other side exists, divided
where one side exists, the wrong side, or no side (no verdict).

    python bench/about_by.py [--llm local]   # -> bench/results/about_by.json; judgments cached (resumable) in
                                             #    runs/bench/about_by/<llm>-<prompts hash>.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

from augmenter.reviews.judge import praise_or_complaint

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "bench" / "labels" / "opinions" / "settled.jsonl"
WAYS = ("question", "topic", "either")
GRID = np.round(np.arange(0.05, 0.96, 0.05), 2)


def judge_all(rows: list[dict], llm_name: str) -> dict[str, dict]:
    """Per pair: the stance judge's distribution, the about-pass of the question and of the topic (cached)."""
    from tqdm import tqdm

    from augmenter.config import build_llm, compose
    from augmenter.prompts.engine import PromptTemplate
    from augmenter.reviews.judge import ReviewJudge

    names = ("review_stance", "review_about", "review_topic", "review_about_topic", "review_stance_topic")
    digest = hashlib.sha256("".join(PromptTemplate.source(n) for n in names).encode()).hexdigest()[:10]
    cache = ROOT / "runs" / "bench" / "about_by" / f"{llm_name}-{digest}.jsonl"
    cache.parent.mkdir(parents=True, exist_ok=True)
    done = {}
    if cache.exists():
        done = {json.loads(line)["pair"]: json.loads(line) for line in cache.read_text().splitlines() if line.strip()}
    by_question = defaultdict(list)
    for r in rows:
        if r["pair"] not in done:
            by_question[r["question"]].append(r)
    if by_question:
        llm = build_llm(compose("chat", [f"llm={llm_name}", "llm_cache.enabled=false"]))
        asks, topics = ReviewJudge(llm), ReviewJudge(llm, about_by="topic", stance_by="topic")
        with open(cache, "a", encoding="utf-8") as sink:
            # one question's sentences in a row, one prompt at a time: the model reuses the shared prefix
            for question, todo in tqdm(by_question.items(), desc="questions", unit="q"):
                topic = topics.topic(question)
                dist = [asks.distribution(question, r["sentence"]) for r in todo]
                about = [asks.about(question, r["sentence"]) for r in todo]
                about_topic = [topics.about(question, r["sentence"]) for r in todo]
                dist_topic = [topics.topic_distribution(question, r["sentence"]) for r in todo]
                for r, d, a, t, dt in zip(todo, dist, about, about_topic, dist_topic):
                    done[r["pair"]] = {
                        "pair": r["pair"],
                        "dist": d,
                        "about": a,
                        "about_topic": t,
                        "topic": topic,
                        "dist_topic": dt,
                    }
                    sink.write(json.dumps(done[r["pair"]]) + "\n")
                sink.flush()
    return done


def f_half(right: np.ndarray, kept: np.ndarray) -> float:
    from sklearn.metrics import fbeta_score

    return float(fbeta_score(right, kept, beta=0.5, zero_division=0))


def report(rows: list[dict], judged: dict[str, dict], llm_name: str) -> dict:
    from sklearn.metrics import roc_auc_score

    from augmenter.audit import dialogue_folds

    label = np.array([{"mixed": "complaint"}.get(r["stance"], r["stance"]) for r in rows])
    dist = [judged[r["pair"]]["dist"] for r in rows]
    related = np.array([1 - d["unrelated"] for d in dist])
    side = np.array([praise_or_complaint(d) for d in dist])
    q = np.array([judged[r["pair"]]["about"] for r in rows])
    t = np.array([judged[r["pair"]]["about_topic"] for r in rows])
    about = {"question": q, "topic": t, "either": np.maximum(q, t)}
    folds = np.array(dialogue_folds([r["dialogue"] for r in rows], 5, seed=0))
    on_a_side = related >= 0.85  # what the gatherer puts to the about-pass
    right = on_a_side & (side == label)

    def kept_figures(kept: np.ndarray) -> dict:
        return {
            "recall_praise": round(float((kept & right & (label == "praise")).sum() / (label == "praise").sum()), 3),
            "recall_complaint": round(
                float((kept & right & (label == "complaint")).sum() / (label == "complaint").sum()), 3
            ),
            "precision": round(float(right[kept].mean()), 3) if kept.any() else None,
            "kept": int(kept.sum()),
        }

    out: dict = {
        "command": "python bench/about_by.py --llm " + llm_name,
        "pairs": len(rows),
        "labelled": {s: int((label == s).sum()) for s in ("praise", "complaint", "unrelated")},
        "stance judge alone (P(related) >= 0.85)": kept_figures(on_a_side),
    }
    for way, p in about.items():
        auc = {
            "related": round(float(roc_auc_score(label != "unrelated", p)), 3),
            **{
                f"{s}_vs_unrelated": round(float(roc_auc_score(label[label != o] == s, p[label != o])), 3)
                for s, o in (("praise", "complaint"), ("complaint", "praise"))
            },
        }
        kept_cv, chosen = np.zeros(len(rows), dtype=bool), []
        for f in range(5):
            train = folds != f
            best = max(GRID, key=lambda x, train=train: f_half(right[train], (on_a_side & (p >= x))[train]))
            chosen.append(float(best))
            kept_cv[~train] = (on_a_side & (p >= best))[~train]
        out[way] = {
            "auc": auc,
            "threshold_per_fold": chosen,
            "cross_validated": kept_figures(kept_cv),
            "at": {f"{x:.2f}": kept_figures(on_a_side & (p >= x)) for x in (0.5, 0.65, 0.85)},
        }
    either = on_a_side & (about["either"] >= 0.85)
    out["either >= 0.85, praise also the question's pass >= x (opinions.praise_about)"] = {
        f"{x:.2f}": kept_figures(either & ~((side == "praise") & (q < x))) for x in (0.5, 0.65, 0.85)
    }
    out["turns: counted sides against the labelled ones"] = {
        f"{way} >= {x:.2f}": turn_sides(rows, judged, way, x) for way in WAYS for x in (0.65, 0.85)
    }
    out["turns: either >= 0.85, praise also the question's pass >= x (opinions.praise_about)"] = {
        f"{x:.2f}": turn_sides(rows, judged, "either", 0.85, praise_about=x) for x in (0.5, 0.65, 0.85)
    }
    out["turns: either >= 0.85, the side with fewer sentences counted only where one of them also passes x"] = {
        name: turn_sides(rows, judged, "either", 0.85, second=strict) for name, strict in SECOND.items()
    }
    out[
        "turns, the stance asked of the topic (opinions.stance_by=topic): either >= 0.85, the side with fewer "
        "sentences also x"
    ] = {
        name: turn_sides(rows, judged, "either", 0.85, second=strict, stance="dist_topic")
        for name, strict in {"(none)": None, **SECOND}.items()
    }
    out["topics (first 10 questions)"] = dict(
        list({r["question"]: judged[r["pair"]]["topic"] for r in rows}.items())[:10]
    )
    return out


# stricter bars for the side that would make a reply "divided" (the side with fewer sentences counted)
SECOND: dict[str, Callable[[dict], bool]] = {
    "question >= 0.5": lambda j: j["about"] >= 0.5,
    "question >= 0.85": lambda j: j["about"] >= 0.85,
    "both >= 0.85": lambda j: min(j["about"], j["about_topic"]) >= 0.85,
    "either >= 0.95": lambda j: max(j["about"], j["about_topic"]) >= 0.95,
    "topic >= 0.95": lambda j: j["about_topic"] >= 0.95,
}


def turn_sides(
    rows: list[dict],
    judged: dict[str, dict],
    way: str,
    threshold: float,
    praise_about: float | None = None,
    second: Callable[[dict], bool] | None = None,
    stance: str = "dist",
) -> dict[str, int]:
    """Per turn: the sides counted (a sentence the stance judge puts on a side with P(related) >= 0.85 and an
    about-pass >= `threshold`; praise, with `praise_about`, also the question's own pass >= it) against the sides
    its labelled sentences take. `second`: where both sides are counted, the side with fewer sentences stays only
    where one of its sentences passes this too (on a tie, a side that fails is dropped where the other passes).
    `stance`: the stance pass asked of the question ("dist") or of its topic ("dist_topic")."""

    def counted(r: dict) -> set[str]:
        j = judged[r["pair"]]
        d = j[stance]
        about = {"question": j["about"], "topic": j["about_topic"], "either": max(j["about"], j["about_topic"])}
        side = praise_or_complaint(d)
        barred = praise_about is not None and side == "praise" and j["about"] < praise_about
        return {side} if 1 - d["unrelated"] >= 0.85 and about[way] >= threshold and not barred else set()

    def kept(pairs: list[dict]) -> set[str]:
        per_side = defaultdict(list)
        for r in pairs:
            for side in counted(r):
                per_side[side].append(judged[r["pair"]])
        if second is None or len(per_side) < 2:
            return set(per_side)
        passing = {side for side, js in per_side.items() if any(second(j) for j in js)}
        fewer = min(len(js) for js in per_side.values())
        weak = {side for side, js in per_side.items() if len(js) == fewer}
        if len(weak) == 2:  # a tie: a side that fails is dropped only where the other passes
            return passing or set(per_side)
        return set(per_side) - (weak - passing)

    return sides_per_turn(rows, kept)


def sides_per_turn(rows: list[dict], kept: Callable[[list[dict]], set[str]]) -> dict[str, int]:
    """Per turn, the sides counted (`kept`: the sides of a turn's pairs) against the sides its labelled sentences
    take: right, one-sided where the other side exists, divided where one side exists, wrong, or none."""
    turns = defaultdict(list)
    for r in rows:
        turns[r["turn"]].append(r)
    out = dict.fromkeys(("right", "one-sided, the other side exists", "divided, one side only", "wrong", "none"), 0)
    for pairs in turns.values():
        labelled = {{"mixed": "complaint"}.get(r["stance"], r["stance"]) for r in pairs} - {"unrelated"}
        found = kept(pairs)
        if not found:
            out["none"] += 1
        elif found == labelled:
            out["right"] += 1
        elif len(found) == 1 and found < labelled:
            out["one-sided, the other side exists"] += 1
        elif len(found) == 2 and len(labelled) == 1:
            out["divided, one side only"] += 1
        else:
            out["wrong"] += 1
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--llm", default="local", help="the LLM config (default: the embedded 1.5B model)")
    args = ap.parse_args()
    rows = [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]
    result = report(rows, judge_all(rows, args.llm), args.llm)
    path = ROOT / "bench" / "results" / "about_by.json"
    path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    shown = (
        "stance judge alone (P(related) >= 0.85)",
        *WAYS,
        "either >= 0.85, praise also the question's pass >= x (opinions.praise_about)",
        "turns: counted sides against the labelled ones",
        "turns: either >= 0.85, praise also the question's pass >= x (opinions.praise_about)",
        "turns: either >= 0.85, the side with fewer sentences counted only where one of them also passes x",
        "turns, the stance asked of the topic (opinions.stance_by=topic): either >= 0.85, the side with fewer "
        "sentences also x",
    )
    json.dump({k: result[k] for k in shown}, sys.stdout, indent=1)
    print(f"\n-> {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
