"""Fit the two models of the opinion gatherer (augmenter/reviews/opinions.py) and report their cross-validated
quality:

- relevance of a review sentence to the question, on DSTC11 dev turns apart from the 200 experiment turns and the
  60 claim-set turns (one gold entity; its gold review sentences are the positives, its other sentences negatives),
  5 folds by dialogue;
- stance of a review clause (positive / negative / neutral; "mixed" counted neutral), on every clause of the review
  sentences of the entities that appear in none of those turns (3,291), each labelled by one of four labellers and
  100 of each sheet pair by two (bench/labels/stance/: sheets A and B, C and D overlap), 5 folds by entity.

    # writes augmenter/reviews/models/{aspect,stance}.json and bench/results/opinions.json
    python bench/fit_opinions.py
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from augmenter.audit import dialogue_folds, dialogue_key
from augmenter.audit.labels import cohen_kappa
from augmenter.knowledge.base import load_dstc11
from augmenter.knowledge.linker import EntityLinker, strip_names
from augmenter.reviews.opinions import RELEVANCE_FEATURES, STANCES, relevance_features
from augmenter.storage import write_atomic
from augmenter.tasks.base import seeded_sample
from augmenter.tasks.dstc11 import load_turns
from augmenter.verification.encoder import embed

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "augmenter" / "reviews" / "models"
STANCE = ROOT / "bench" / "labels" / "stance"
COMMAND = "python bench/fit_opinions.py"


def training_turns(data_root: Path, kb):
    """Dev turns outside the 200-turn experiment sample and the 60-turn claim set."""
    turns = load_turns(data_root / "dstc11-track5" / "dev", kb, True)
    held = seeded_sample(turns, 200, 0)
    rest = [t for t in turns if t.id not in {h.id for h in held}]
    claim_set = seeded_sample(rest, 60, 1)
    return [t for t in rest if t.id not in {c.id for c in claim_set}], held + claim_set


def entities_named(turns, kb) -> set[str]:
    """ "domain:id" of every entity a turn's gold knowledge or its entity linker names."""
    linker = EntityLinker(kb.entities)
    named = {f"{g.domain}:{g.entity_id}" for t in turns for g in t.gold}
    return named | {f"{m.domain}:{m.entity_id}" for t in turns for m in linker.link(t.q, t.history)}


def relevance_data(turns, kb):
    linker = EntityLinker(kb.entities)
    X, y, groups, n_turns = [], [], [], 0
    for t in turns:
        gold = {g.id for g in t.gold if g.doc_type == "review"}
        entities = {(g.domain, g.entity_id) for g in t.gold}
        if len(entities) != 1 or not gold:
            continue
        domain, entity_id = next(iter(entities))
        reviews = [kb.snippets[i] for i in kb.rows_of(domain, entity_id) if kb.snippets[i].doc_type == "review"]
        query = strip_names(t.q, [m.surface for m in linker.link(t.q, t.history)])
        X.append(relevance_features(query, [s.text for s in reviews]))
        n_turns += 1
        y += [s.id in gold for s in reviews]
        groups += [dialogue_key(t.history, t.q)] * len(reviews)
    return np.vstack(X), np.array(y), groups, n_turns


def logistic(multi: bool = False):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if multi:
        return LogisticRegression(C=4.0, max_iter=3000, class_weight="balanced")
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--min-p", type=float, default=0.3, help="the relevance threshold reported (and the default)")
    ap.add_argument("--only", choices=("relevance", "stance"), help="fit one model (the other's figures are kept)")
    args = ap.parse_args()

    kb = load_dstc11(Path(args.data_root) / "dstc11-track5" / "knowledge.json")
    turns, used_turns = training_turns(Path(args.data_root), kb)
    results = ROOT / "bench" / "results" / "opinions.json"
    out = json.loads(results.read_text()) if results.exists() else {}
    out["command"] = COMMAND
    if args.only != "stance":
        out["relevance"] = fit_relevance(turns, kb, args.min_p)
    if args.only != "relevance":
        out["stance"] = fit_stance(used_turns, kb)
    write_atomic(results, json.dumps(out, indent=1) + "\n")
    json.dump(out, sys.stdout, indent=1)


def fit_relevance(turns, kb, min_p: float) -> dict:
    from sklearn.metrics import roc_auc_score

    X, y, groups, n_turns = relevance_data(turns, kb)
    folds = np.array(dialogue_folds(groups, 5, seed=0))
    p = np.zeros(len(y))
    for f in range(5):
        p[folds == f] = logistic().fit(X[folds != f], y[folds != f]).predict_proba(X[folds == f])[:, 1]
    chosen = p >= min_p
    relevance = {
        "turns": n_turns,
        "dialogues": len(set(groups)),
        "sentences": int(len(y)),
        "gold_sentences": int(y.sum()),
        "auc": round(float(roc_auc_score(y, p)), 4),
        "min_p": min_p,
        "recall_of_gold": round(float((chosen & y).sum() / y.sum()), 3),
        "precision_against_gold": round(float((chosen & y).sum() / max(1, chosen.sum())), 3),
        "chosen_per_turn": round(float(chosen.sum() / n_turns), 2),
        "note": "gold lists the sentences one human answer used, not every sentence on the aspect: precision "
        "against it is a lower bound",
    }
    model = logistic().fit(X, y)  # the model cross-validated above (not class-balanced: p is a probability)
    scaler, lr = model[0], model[-1]
    write_atomic(
        MODELS / "aspect.json",
        json.dumps(
            {
                "feature_names": RELEVANCE_FEATURES,
                "mean": scaler.mean_.tolist(),
                "scale": scaler.scale_.tolist(),
                "coef": lr.coef_.ravel().tolist(),
                "intercept": float(lr.intercept_[0]),
                "threshold": min_p,
                "n": int(len(y)),
                "command": COMMAND,
            },
            indent=2,
        )
        + "\n",
    )
    return relevance


def fit_stance(used_turns, kb) -> dict:
    from sklearn.metrics import balanced_accuracy_score, confusion_matrix

    sheets = sorted(p.stem.split("-")[1] for p in STANCE.glob("labels-*.jsonl"))
    rows = {
        json.loads(line)["id"]: json.loads(line)
        for name in sheets
        for line in (STANCE / f"sheet-{name}.jsonl").read_text().splitlines()
    }
    labels = {
        name: {
            json.loads(line)["id"]: json.loads(line)["stance"]
            for line in (STANCE / f"labels-{name}.jsonl").read_text().splitlines()
        }
        for name in sheets
    }
    pairs = [(a, b, i) for k, a in enumerate(sheets) for b in sheets[k + 1 :] for i in set(labels[a]) & set(labels[b])]
    disputed = {i for a, b, i in pairs if labels[a][i] != labels[b][i]}
    merged = {i: lab for name in reversed(sheets) for i, lab in labels[name].items()}
    items = [i for i in rows if i not in disputed]
    both = pairs
    names = {"pos": "positive", "neg": "negative", "neu": "neutral", "mixed": "neutral"}
    texts = [rows[i]["clause"] for i in items]
    target = np.array([STANCES.index(names[merged[i]]) for i in items])
    entity = [":".join(i.split(":")[:2]) for i in items]
    E = embed(texts)
    sfolds = np.array(dialogue_folds(entity, 5, seed=0))
    synthetic = STANCE / "synthetic-minimal-pairs.jsonl"
    syn = [json.loads(line) for line in synthetic.read_text().splitlines()] if synthetic.exists() else []
    S = embed([r["clause"] for r in syn]) if syn else np.zeros((0, E.shape[1]))
    s_target = np.array([STANCES.index(names[r["stance"]]) for r in syn], dtype=int)

    def cv(with_synthetic: bool) -> np.ndarray:
        pred = np.zeros(len(target), dtype=int)
        for f in range(5):
            X_train, y_train = E[sfolds != f], target[sfolds != f]
            if with_synthetic and syn:
                X_train, y_train = np.vstack([X_train, S]), np.concatenate([y_train, s_target])
            pred[sfolds == f] = logistic(True).fit(X_train, y_train).predict(E[sfolds == f])
        return pred

    variants = {"real": cv(False), **({"real+synthetic": cv(True)} if syn else {})}
    scores = {k: float(balanced_accuracy_score(target, v)) for k, v in variants.items()}
    best = max(scores, key=scores.get)  # chosen on out-of-fold real clauses only
    pred = variants[best]
    X_all, y_all = (np.vstack([E, S]), np.concatenate([target, s_target])) if best == "real+synthetic" else (E, target)
    model = logistic(True).fit(X_all, y_all)
    stance = {
        "clauses": len(items),
        "entities": len(set(entity)),
        "sheets": sheets,
        "double_labelled": len(both),
        "disputed_left_out": len(disputed),
        "kappa_double_labelled": round(
            cohen_kappa([labels[a][i] for a, _, i in both], [labels[b][i] for _, b, i in both]), 3
        ),
        "synthetic_minimal_pairs": len(syn),
        "trained_on": best,
        "balanced_accuracy_cv_by_variant": {k: round(v, 4) for k, v in scores.items()},
        "accuracy_cv_by_entity": round(float((pred == target).mean()), 4),
        "balanced_accuracy_cv_by_entity": round(float(balanced_accuracy_score(target, pred)), 4),
        "confusion (rows: labelled positive, negative, neutral)": confusion_matrix(target, pred).tolist(),
        "entities_in_evaluation_turns": "none (the clauses come from entities no experiment or claim-set turn names)",
    }
    if set(entity) & entities_named(used_turns, kb):
        sys.exit("stance clauses of an entity that an evaluation turn names: refit on other entities")
    write_atomic(
        MODELS / "stance.json",
        json.dumps(
            {
                "classes": [STANCES[int(c)] for c in model.classes_],
                "coef": model.coef_.round(6).tolist(),
                "intercept": model.intercept_.round(6).tolist(),
                "n": int(len(y_all)),
                "command": COMMAND,
            }
        )
        + "\n",
    )
    return stance


if __name__ == "__main__":
    main()
