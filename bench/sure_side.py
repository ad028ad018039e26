"""Whether the on-topic model's sure sentences should take the judge's side without the judge's relatedness bar,
measured on the 468 labelled (question, review sentence) pairs of bench/labels/opinions/ (none of them in the
on-topic model's fit).

The gatherer keeps a sentence on a side where the on-topic model scores it `min_on_topic` (0.15) or more and the
1.5B judge's topic pass finds it related (P(praise) + P(complaint) >= 0.85). The judge reads some sentences that are
plainly on the question as unrelated ("They had many various non-alcoholic drink options for me to choose since i
drove their myself" to "Are there many non alcoholic drink options?"), so the side goes missing: a reply quotes the
sentence alone, or a verdict leaves out the other side of mixed reviews. Rule `sure at T`: a sentence the model
scores T or more takes the judge's likelier side (praise or complaint) whatever its relatedness. Reported per rule:
each side's recall and precision among the sentences put on it, and per turn (70) the sides found against the
labelled ones.

    python bench/stance_by.py                # the judge's distributions (cached under runs/bench/stance_by/)
    python bench/sure_side.py                # -> bench/results/sure_side.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from augmenter.reviews.judge import praise_or_complaint

sys.path.insert(0, str(Path(__file__).resolve().parent))
from about_by import sides_per_turn  # noqa: E402
from stance_by import LABELS, MIN_RELATED, judge_all, side_figures  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MIN_ON_TOPIC = 0.15
SURE = (0.8, 0.9, 0.95)


def side(on: float, d: dict, sure: float | None) -> set[str]:
    """The side a pair is put on: the on-topic model's score `on`, the judge's topic distribution `d`."""
    if on < MIN_ON_TOPIC:
        return set()
    if 1 - d["unrelated"] >= MIN_RELATED or (sure is not None and on >= sure):
        return {praise_or_complaint(d)}
    return set()


def found_in(index: dict[str, set[str]]):
    """The sides a turn's pairs are put on, as `sides_per_turn` asks."""
    return lambda pairs: set().union(*(index[r["pair"]] for r in pairs))


def main() -> None:
    from augmenter.reviews.on_topic import OnTopicModel

    rows = [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]
    judged = judge_all(rows, "local")
    model = OnTopicModel.load()
    on = {}
    for r in rows:
        on.setdefault(r["question"], []).append(r)
    p = {}
    for question, pairs in on.items():
        for r, score in zip(pairs, model.probabilities(question, [r["sentence"] for r in pairs])):
            p[r["pair"]] = score
    result: dict = {"command": "python bench/sure_side.py", "pairs": len(rows)}
    for name, sure in [("judge's bar", None), *((f"sure at {t}", t) for t in SURE)]:
        given = [side(p[r["pair"]], judged[r["pair"]]["topic"], sure) for r in rows]
        index = {r["pair"]: g for r, g in zip(rows, given)}
        result[name] = {"sentences": side_figures(rows, given), "turns": sides_per_turn(rows, found_in(index))}
    path = ROOT / "bench" / "results" / "sure_side.json"
    path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
