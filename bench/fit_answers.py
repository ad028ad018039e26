"""The answers check's two thresholds (augmenter/utilities/answers.py), chosen on the labelled
claim set's answers (bench/labels/dstc11-dev) with 5 folds by dialogue, and how well the check agrees with the
labellers' flags:

- `min_topicality`: an answer whose claims are all further than this from the question and from the evidence that
  answers it is off-topic (labels: `off_topic`);
- `min_faq`: a FAQ this close to the question answers it, so "I don't know" is wrong and a reply may quote it. The
  labelled answers hold too few bare "I don't know"s to choose it (reported), so it is chosen on DSTC11's gold
  knowledge instead: in dev turns apart from every held-out turn and dialogue (bench/fit_opinions.py's pool), the
  evidence's nearest FAQ answers the question when a human answer used that very FAQ; the lowest threshold whose
  precision reaches 0.7 on the training folds, as `min_review` (`--reviews-only`).

Each turn's evidence is rebuilt as the checked system (experiment grounded_bm25) gathers it, the opinion gatherer's
judge included (the embedded model; cached by the LLM cache, so a rerun is quick).

    python bench/fit_answers.py [--round dstc11-dev] [overrides]    # -> bench/results/answers_check.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from tqdm import tqdm

from augmenter.audit import dialogue_folds
from augmenter.audit.labels import read_labels
from augmenter.config import build_agent, compose
from augmenter.memory import Utterance, WorkingMemory
from augmenter.storage import write_atomic
from augmenter.utilities.answers import AnswersQuestion
from augmenter.verification.encoder import embed
from augmenter.verification.splitter import is_abstention, is_claim, split_sentences

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from claim_set import LABELS, load_items

GROUNDED = [
    "task=dstc11",
    "prompt=assistant",
    "utility=grounded",
    "consolidator.opinions.stance=llm",
    "consolidator.opinions.min_p=0.15",
    "consolidator.opinions.max_sentences=8",
    "llm_cache.enabled=true",
]


def rows_for(items, settled, agent) -> list[dict]:
    """Per labelled answer: its flags, whether it says it does not know and states claims, its topicality, and the
    best similarity of a FAQ of the evidence to the question (with whether reviews on the question take a side)."""
    check = AnswersQuestion()
    rows = []
    for item in tqdm(items, desc="turns", unit="turn"):
        mem = WorkingMemory(q=item.q, h_q=[Utterance(**u) for u in item.history])
        agent.executor.observe(mem)
        _, mem.e = agent.executor.consolidator.retrieve(mem.q, mem.h_q, mem.entities)
        faqs = [s for s in mem.e if s.doc_type == "faq"]
        faq_sim = float(np.max(check.similarities(mem, faqs))) if faqs else 0.0
        reviews = [s for s in mem.e if s.doc_type == "review" and s.stance in ("positive", "negative")]
        for answer in item.answers:
            label = settled.get((item.item, answer.rid))
            if label is None:
                continue
            sentences = split_sentences(answer.text)
            claims = [s for s in sentences if is_claim(s)]
            evidence = check.answering_evidence(mem)
            rows.append(
                {
                    "item": item.item,
                    "rid": answer.rid,
                    "dialogue": item.dialogue,
                    "flags": label.flags,
                    "abstains": any(is_abstention(s) for s in sentences),
                    "claims": len(claims),
                    "topicality": check.topicality(mem, claims, evidence) if claims else None,
                    "faq_similarity": faq_sim,
                    "review_sides": bool(reviews),
                }
            )
    return rows


def searched_gold_turns(agent, data_root: Path, limit: int, keep, desc: str):
    """(turn, its Working Memory with the consolidator's search as evidence) for the gold-labelled dev turns of the
    fitting pool that `keep` accepts: one turn per dialogue, apart from every held-out turn's dialogue, a seeded
    sample of at most `limit`."""
    from fit_opinions import training_turns

    from augmenter.audit import dialogue_key
    from augmenter.tasks.base import seeded_sample

    turns, held = training_turns(data_root, agent.executor.consolidator.kb)
    held_dialogues = {dialogue_key(t.history, t.q) for t in held}
    seen, pool = set(), []
    for t in turns:
        key = dialogue_key(t.history, t.q)
        if key not in held_dialogues and key not in seen and keep(t):
            seen.add(key)
            pool.append(t)
    for t in tqdm(seeded_sample(pool, limit, 0), desc=desc, unit="turn"):
        mem = WorkingMemory(q=t.q, h_q=list(t.history))
        agent.executor.observe(mem)
        _, mem.e = agent.executor.consolidator.search(mem.q, mem.h_q, mem.entities)
        yield t, mem


def faq_rows(agent, data_root: Path, limit: int) -> list[dict]:
    """Per gold-labelled dev turn of the fitting pool (one per dialogue, at most `limit`): the similarity of the
    evidence's nearest FAQ to the question (`AnswersQuestion.similarities`; and by the whole text alone), and
    whether a human answer used that FAQ."""
    from augmenter.audit import dialogue_key

    check, rows = AnswersQuestion(), []
    for t, mem in searched_gold_turns(agent, data_root, limit, lambda t: bool(t.gold), "gold turns"):
        faqs = [s for s in mem.e if s.doc_type == "faq"]
        if not faqs:
            continue
        sims = check.similarities(mem, faqs)
        vectors = embed([check.question(mem), *(s.text for s in faqs)])
        whole = vectors[1:] @ vectors[0]  # by the whole text alone, as before FAQs were found by their question
        gold = {g.id for g in t.gold}
        rows.append(
            {
                "dialogue": dialogue_key(t.history, t.q),
                "similarity": float(sims.max()),
                "answers": faqs[int(np.argmax(sims))].id in gold,
                "whole_similarity": float(whole.max()),
                "whole_answers": faqs[int(np.argmax(whole))].id in gold,
            }
        )
    return rows


def review_rows(agent, data_root: Path, limit: int) -> list[dict]:
    """Per review sentence the consolidator's search retrieves in a gold-labelled dev turn of the fitting pool (one
    turn per dialogue, at most `limit`): its similarity to the question, and whether a human answer used it."""
    from augmenter.audit import dialogue_key

    check, rows = AnswersQuestion(), []

    def reviewed(t):
        return any(g.doc_type == "review" for g in t.gold)

    for t, mem in searched_gold_turns(agent, data_root, limit, reviewed, "gold review turns"):
        reviews = [s for s in mem.e if s.doc_type == "review"]
        if not reviews:
            continue
        vectors = embed([check.question(mem), *(s.text for s in reviews)])
        gold = {g.id for g in t.gold}
        rows += [
            {"dialogue": dialogue_key(t.history, t.q), "similarity": float(sim), "answers": s.id in gold}
            for s, sim in zip(reviews, vectors[1:] @ vectors[0])
        ]
    return rows


def precision_by_threshold(y: np.ndarray, score: np.ndarray, grid, positives: int | None = None) -> dict:
    """Per threshold: the precision of what reaches it, its recall of `positives` (default: the right rows), and
    how many reach it."""
    positives = int(y.sum()) if positives is None else positives
    return {
        f"{t:.3f}": {
            "precision": round(float(y[score >= t].mean()), 3) if (score >= t).any() else None,
            "recall": round(float(y[score >= t].sum() / positives), 3),
            "n": int((score >= t).sum()),
        }
        for t in grid
    }


def _balanced(y: np.ndarray, pred: np.ndarray) -> float:
    from sklearn.metrics import balanced_accuracy_score

    return float(balanced_accuracy_score(y, pred)) if len(set(y)) > 1 else float((y == pred).mean())


def cross_validated(score: np.ndarray, y: np.ndarray, groups: list[str], grid, below: bool) -> dict:
    """A threshold per fold chosen on the training folds (flag when score < t if `below`, else >= t), the
    out-of-fold predictions' balanced accuracy, and the threshold chosen on all of them."""
    folds = np.array(dialogue_folds(groups, 5, seed=0))
    flag = (lambda s, t: s < t) if below else (lambda s, t: s >= t)
    pred, chosen = np.zeros(len(y), dtype=bool), []
    for f in range(5):
        train = folds != f
        best = max(grid, key=lambda t: _balanced(y[train], flag(score[train], t)))
        chosen.append(round(float(best), 3))
        pred[~train] = flag(score[~train], best)
    whole = max(grid, key=lambda t: _balanced(y, flag(score, t)))
    tp, fp = int((pred & y).sum()), int((pred & ~y).sum())
    return {
        "n": int(len(y)),
        "positives": int(y.sum()),
        "balanced_accuracy_cv": round(_balanced(y, pred), 4),
        "flagged_of_positives": f"{tp} of {int(y.sum())}",
        "flagged_of_negatives": f"{fp} of {int((~y).sum())}",
        "threshold_per_fold": chosen,
        "threshold_on_all": round(float(whole), 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--round", default="dstc11-dev")
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--gold-turns", type=int, default=600, help="fitting-pool turns for min_faq (one per dialogue)")
    ap.add_argument(
        "--reviews-only",
        action="store_true",
        help="only min_review (no LLM: the consolidator's search), into answers_check_reviews.json",
    )
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    if args.reviews_only:
        agent = build_agent(compose("chat", [f"data_root={args.data_root}", *GROUNDED, "llm=fake", *args.overrides]))
        fit_min_review(agent, Path(args.data_root), args.gold_turns)
        return
    directory = LABELS / args.round
    items, settled = load_items(directory), read_labels(directory / "settled.jsonl")
    agent = build_agent(compose("chat", [f"data_root={args.data_root}", *GROUNDED, *args.overrides]))
    rows = rows_for(items, settled, agent)
    from sklearn.metrics import roc_auc_score

    stating = [r for r in rows if r["claims"] and not r["abstains"]]
    y_off = np.array(["off_topic" in r["flags"] for r in stating])
    top = np.array([r["topicality"] for r in stating])
    off = cross_validated(top, y_off, [r["dialogue"] for r in stating], np.round(np.arange(0.2, 0.8, 0.025), 3), True)
    off["auc_of_low_topicality"] = round(float(roc_auc_score(y_off, -top)), 4)
    idk = [r for r in rows if r["abstains"] and not r["claims"]]
    y_idk = np.array(["idk_wrong" in r["flags"] for r in idk])
    # "I don't know" is wrong when a FAQ is this close, or reviews on the question take a side
    score = np.array([1.0 if r["review_sides"] else r["faq_similarity"] for r in idk])
    wrong = cross_validated(score, y_idk, [r["dialogue"] for r in idk], np.round(np.arange(0.3, 0.9, 0.025), 3), False)
    gold = faq_rows(agent, Path(args.data_root), args.gold_turns)
    y_faq = np.array([r["answers"] for r in gold])
    sims = np.array([r["similarity"] for r in gold])
    groups = [r["dialogue"] for r in gold]
    answering = {"n": int(len(y_faq)), "positives": int(y_faq.sum()), **precise_threshold(sims, y_faq, groups)}
    answering["balanced threshold (not used)"] = cross_validated(sims, y_faq, groups, GRID, False)
    y_whole = np.array([r["whole_answers"] for r in gold])
    by_whole = precise_threshold(np.array([r["whole_similarity"] for r in gold]), y_whole, groups)
    answering["by the whole text (before)"] = {"positives": int(y_whole.sum()), **by_whole}
    both = [r for r in rows if r["abstains"] and r["claims"]]
    result = {
        "command": "python bench/fit_answers.py " + " ".join(sys.argv[1:]),
        "round": args.round,
        "answers": len(rows),
        "off_topic (min_topicality)": off,
        "idk_wrong (labelled answers; too few to choose min_faq)": wrong,
        "the nearest FAQ answers (min_faq, DSTC11 gold)": answering,
        "idk_then_answer": {
            "answers": len(both),
            "labelled_self_contradiction": sum("self_contradiction" in r["flags"] for r in both),
            "labelled_self_contradiction_elsewhere": sum(
                "self_contradiction" in r["flags"] for r in rows if r not in both
            ),
        },
    }
    write_atomic(ROOT / "bench" / "results" / "answers_check.json", json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


GRID = np.round(np.arange(0.3, 0.85, 0.025), 3)


def precise_threshold(sims: np.ndarray, y: np.ndarray, groups: list[str], positives: int | None = None) -> dict:
    """The lowest threshold whose precision reaches `PRECISION` (at least 10 above it), chosen per fold on the other
    folds (5 by dialogue), with the out-of-fold precision and recall (of `positives`; default: the right rows), and
    the threshold chosen on all."""
    from sklearn.metrics import roc_auc_score

    positives = int(y.sum()) if positives is None else positives

    folds = np.array(dialogue_folds(groups, 5, seed=0))

    def lowest_precise(mask) -> float:
        ok = [t for t in GRID if (sims[mask] >= t).sum() >= 10 and y[mask][sims[mask] >= t].mean() >= PRECISION]
        return float(min(ok)) if ok else float(GRID[-1])

    chosen, pred = [], np.zeros(len(y), dtype=bool)
    for f in range(5):
        t = lowest_precise(folds != f)
        chosen.append(round(t, 3))
        pred[folds == f] = sims[folds == f] >= t
    return {
        "auc": round(float(roc_auc_score(y, sims)), 4),
        "required precision": PRECISION,
        "threshold_per_fold": chosen,
        "out_of_fold": {
            "precision": round(float(y[pred].mean()), 3) if pred.any() else None,
            "recall": round(float(y[pred].sum() / positives), 3),
            "flagged": int(pred.sum()),
        },
        "threshold_on_all": round(lowest_precise(np.ones(len(y), dtype=bool)), 3),
        "by_threshold": precision_by_threshold(y, sims, GRID, positives),
    }


def fit_min_review(agent, data_root: Path, limit: int) -> None:
    """`min_review`: a retrieved review sentence this close to the question answers it (DSTC11 gold: a human answer
    used that sentence), chosen on the fitting pool for precision as `min_faq` is (`precise_threshold`)."""
    rows = review_rows(agent, data_root, limit)
    y, sims = np.array([r["answers"] for r in rows]), np.array([r["similarity"] for r in rows])
    result = {
        "command": "python bench/fit_answers.py " + " ".join(sys.argv[1:]),
        "review sentences": int(len(y)),
        "used by a human answer": int(y.sum()),
        "turns": len({r["dialogue"] for r in rows}),
        **precise_threshold(sims, y, [r["dialogue"] for r in rows]),
    }
    write_atomic(ROOT / "bench" / "results" / "answers_check_reviews.json", json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "by_threshold"}, indent=1))


PRECISION = 0.7  # a quoted FAQ or review sentence must be one a human would have used at least this often


if __name__ == "__main__":
    main()
