"""Does the model confirming a FAQ find more of the FAQs that answer, at the same precision, than the similarity
alone (`AnswersQuestion.similarities` >= `min_faq`)? Measured on the fitting pool of bench/fit_answers.py (DSTC11 dev
turns with gold knowledge, one per dialogue, apart from every held-out turn): per turn, the evidence's FAQs; a FAQ
"answers" when a human answer used it.

- similarity alone: the nearest FAQ, kept at >= t;
- confirmed: of the three nearest FAQs at similarity >= `--near` (0.45), the one the model gives the highest P(yes)
  that it answers the question (`ReviewJudge.answers`, prompt `faq_answers`: four examples), kept at P(yes) >= t:
  what `executor.review_faq_check` does.

Each threshold is the lowest whose precision reaches 0.7 on the other four folds (5 by dialogue), as `min_faq` is
(bench/fit_answers.py's `precise_threshold`); out-of-fold precision and recall are reported. Model answers are
cached by the LLM cache (a rerun is quick).

    python bench/faq_confirm.py [--turns 600] [--near 0.45]    # -> bench/results/faq_confirm.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from fit_answers import GROUNDED, precise_threshold, searched_gold_turns  # noqa: E402

from augmenter.audit import dialogue_key  # noqa: E402
from augmenter.config import build_agent, build_llm, compose  # noqa: E402
from augmenter.reviews.judge import ReviewJudge  # noqa: E402
from augmenter.storage import write_atomic  # noqa: E402
from augmenter.utilities.answers import AnswersQuestion  # noqa: E402


def fitted(rows: list[tuple[float | None, bool]], groups: list[str], positives: int) -> dict:
    """(score, whether the FAQ it picks is the human's) per turn, a turn with none picked scored -1: its threshold
    chosen per fold for precision, as `min_faq` is (`precise_threshold`), recall of the turns with the human's FAQ."""
    score = np.array([-1.0 if s is None else s for s, _ in rows])
    return precise_threshold(score, np.array([right for _, right in rows]), groups, positives)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--turns", type=int, default=600, help="fitting-pool turns (one per dialogue)")
    ap.add_argument("--near", type=float, default=0.45, help="the similarity a FAQ needs to be put to the model")
    ap.add_argument("--llm", default="local")
    args = ap.parse_args()
    agent = build_agent(compose("chat", [f"data_root={args.data_root}", *GROUNDED, "llm=fake"]))
    llm = build_llm(compose("chat", [f"llm={args.llm}", "llm_cache.enabled=true"]))
    check, rows, judge = AnswersQuestion(), [], ReviewJudge(llm)
    for t, mem in searched_gold_turns(agent, Path(args.data_root), args.turns, lambda t: bool(t.gold), "gold turns"):
        faqs = [s for s in mem.e if s.doc_type == "faq"]
        if faqs:
            rows.append((t, mem, faqs, check.similarities(mem, faqs)))
    by_sim, confirmed, groups, positives = [], [], [], 0
    for t, mem, faqs, sims in tqdm(rows, desc="confirming", unit="turn"):
        gold = {g.id for g in t.gold}
        positives += any(f.id in gold for f in faqs)
        groups.append(dialogue_key(t.history, t.q))
        best = int(np.argmax(sims))
        by_sim.append((float(sims[best]), faqs[best].id in gold))
        near = [i for i in np.argsort(-sims, kind="stable")[:3] if sims[i] >= args.near]
        asked = {int(i): judge.answers(mem.q, faqs[i].text) for i in near}
        pick = max(asked, key=asked.get) if asked else None
        confirmed.append((asked[pick] if pick is not None else None, pick is not None and faqs[pick].id in gold))
    result = {
        "command": "python bench/faq_confirm.py " + " ".join(sys.argv[1:]),
        "turns": len(rows),
        "turns whose evidence holds the human's FAQ": positives,
        "similarity alone": fitted(by_sim, groups, positives),
        f"confirmed by the model (similarity >= {args.near}, three nearest)": fitted(confirmed, groups, positives),
    }
    write_atomic(ROOT / "bench" / "results" / "faq_confirm.json", json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
