"""Whether a review sentence scored as its best part (whole or a fragment: `OnTopicModel.best_part_probabilities`,
`consolidator.opinions.on_topic_parts`) finds more of the sentences on the question than the sentence scored whole,
and at what cost in sentences off it: the 468 labelled (question, review sentence) pairs of bench/labels/opinions/
(none of them in the on-topic model's fit; "unrelated" is off the question, praise, complaint or mixed on it).

    python bench/on_topic_parts.py   # -> bench/results/on_topic_parts.json

Per way of scoring and bar (0.15: what the gatherer keeps, `min_on_topic`; 0.8: `on_topic_side`): recall of the
pairs on the question (and of the complaints alone, the side a one-sided "Yes" misses), precision among those kept,
and ROC AUC.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "bench" / "labels" / "opinions" / "settled.jsonl"
BARS = (0.15, 0.5, 0.8)


def figures(p: np.ndarray, on: np.ndarray, complaint: np.ndarray) -> dict:
    out: dict = {"auc": round(float(roc_auc_score(on, p)), 3)}
    for bar in BARS:
        kept = p >= bar
        out[f"at {bar}"] = {
            "recall": round(float(kept[on].mean()), 3),
            "complaint recall": round(float(kept[complaint].mean()), 3),
            "precision": round(float(on[kept].mean()), 3) if kept.any() else None,
            "kept": int(kept.sum()),
        }
    return out


def main() -> None:
    from augmenter.reviews.on_topic import OnTopicModel

    rows = [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]
    model = OnTopicModel.load()
    whole, parts = np.zeros(len(rows)), np.zeros(len(rows))
    by_question: dict[str, list[int]] = {}
    for n, r in enumerate(rows):
        by_question.setdefault(r["question"], []).append(n)
    for question, ns in by_question.items():
        sentences = [rows[n]["sentence"] for n in ns]
        whole[ns] = model.probabilities(question, sentences)
        parts[ns] = model.best_part_probabilities(question, sentences)
    on = np.array([r["stance"] != "unrelated" for r in rows])
    complaint = np.array([r["stance"] in ("complaint", "mixed") for r in rows])
    result = {
        "command": "python bench/on_topic_parts.py",
        "pairs": len(rows),
        "on the question": int(on.sum()),
        "complaints": int(complaint.sum()),
        "whole": figures(whole, on, complaint),
        "best part": figures(parts, on, complaint),
    }
    path = ROOT / "bench" / "results" / "on_topic_parts.json"
    path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
