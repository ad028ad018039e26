"""Fit the packaged verifier models (augmenter/verification/models/{fast,combined}.json).

    python bench/fit_verifier.py [--halueval-rows 1500] [--dstc11-turns 800] [--combined-limit 1200]

Training fold (never the data the benchmarks or the DSTC11 evaluation score):
- DSTC11 dev turns outside the 200-turn evaluation sample (eval.seed=0): each gold-response sentence against its
  gold knowledge (supported), with a number, day or polarity changed (not), and against another turn's knowledge
  (not), and against other snippets of its own entity (not); see augmenter/tasks/dstc11_claims.py;
- with `--halueval-rows N`, N HaluEval QA rows outside its 2,000-sample benchmark (off by default: its short right
  answers against sentence-long hallucinated ones teach the wrong thing about product claims).
The stored threshold maximises balanced accuracy on the training fold; `--precision P` stores instead the lowest p
at which at least P of the training claims called SUPPORTED are supported (on this fold P = 0.8 needs p >= 0.96:
the human gold responses paraphrase loosely, so it would pass almost nothing).
The logistic regression and its threshold are fitted on all of it; a 5-fold cross-validated balanced accuracy on
the same fold is printed and stored beside the weights, with this command. `--combined-limit N` also runs the LLM
verifier on N seeded training items and fits the combined model (fast features + the LLM's label probabilities).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from augmenter.config import build_llm, compose
from augmenter.eval.factcheck import cross_validate, fit_and_save
from augmenter.knowledge import load_dstc11
from augmenter.memory import Verdict
from augmenter.prompts import PromptEngine
from augmenter.storage import write_atomic
from augmenter.tasks.dstc11 import load_turns
from augmenter.tasks.dstc11_claims import dstc11_claims
from augmenter.tasks.factcheck import halueval_rest
from augmenter.verification import LLMVerifier
from augmenter.verification.splitter import split_sentences
from augmenter.verification.verifiers import fast_features

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "augmenter" / "verification" / "models"


def units(item) -> list[str]:
    return [s for passage in item.evidence for s in (split_sentences(passage) if len(passage) > 300 else [passage])]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--halueval-rows", type=int, default=0, help="also HaluEval rows outside its benchmark sample")
    ap.add_argument("--dstc11-turns", type=int, default=800)
    ap.add_argument("--combined-limit", type=int, default=0)
    ap.add_argument(
        "--precision",
        type=float,
        default=0.0,
        help="store the threshold with this SUPPORTED precision on the training fold (0: balanced accuracy)",
    )
    ap.add_argument("--eval-limit", type=int, default=200, help="the DSTC11 evaluation sample to leave out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    args = ap.parse_args()
    command = "python bench/fit_verifier.py " + " ".join(sys.argv[1:])
    data = Path(args.data_root)
    dstc = data / "dstc11-track5"
    kb = load_dstc11(dstc / "knowledge.json", dstc / "entity_mapping.json")
    held_out = {
        int(i.id) for i in load_turns(dstc / "dev", knowledge_seeking_only=True, limit=args.eval_limit, seed=args.seed)
    }
    items = (
        halueval_rest(data / "halueval", n=2000, seed=args.seed, limit=args.halueval_rows) if args.halueval_rows else []
    )
    items += dstc11_claims(dstc, kb, exclude=held_out, limit=args.dstc11_turns, seed=args.seed)
    print(f"{len(items)} training claims ({sum(not it.factual for it in items)} not supported)")
    feats = []
    start = time.perf_counter()
    for it in tqdm(items, desc="fast features", unit="claim"):
        feats.append(fast_features(it.claim, units(it), it.context)[0])
    names = list(feats[0])
    X = np.array([[f[n] for n in names] for f in feats])
    y = np.array([it.factual for it in items])
    groups = [it.group for it in items]
    cv = cross_validate(X, y, groups, 5, args.seed)
    fitted = fit_and_save(X, y, names, MODELS / "fast.json", command)
    print(
        f"fast: 5-fold CV balanced accuracy {cv.metrics(y)['balanced_accuracy']:.2f} on the training fold; "
        f"threshold {fitted.threshold:.3f}; {1000 * (time.perf_counter() - start) / len(items):.1f} ms/claim"
    )
    _note(
        MODELS / "fast.json",
        cv.metrics(y),
        _safe_threshold(fitted.pipeline, X, y, args.precision) if args.precision else None,
    )
    if args.combined_limit:
        verifier = LLMVerifier(
            build_llm(compose("chat", ["llm_cache.enabled=true"])), PromptEngine(response="customer_service")
        )
        rows = sorted(random.Random(args.seed).sample(range(len(items)), min(args.combined_limit, len(items))))
        llm = []
        for i in tqdm(rows, desc="LLM verifier", unit="claim"):
            dist, _ = verifier.distribution(items[i].claim, units(items[i]), items[i].context)
            llm.append([dist[v] for v in Verdict])
        Xc = np.hstack([X[rows], np.array(llm)])
        yc, gc = y[rows], [groups[i] for i in rows]
        cvc = cross_validate(Xc, yc, gc, 5, args.seed)
        fc = fit_and_save(Xc, yc, names + [f"llm_{v.value}" for v in Verdict], MODELS / "combined.json", command)
        print(f"combined: 5-fold CV balanced accuracy {cvc.metrics(yc)['balanced_accuracy']:.2f} on {len(rows)} claims")
        _note(
            MODELS / "combined.json",
            cvc.metrics(yc),
            _safe_threshold(fc.pipeline, Xc, yc, args.precision) if args.precision else None,
        )


def _safe_threshold(pipeline, X, y, precision: float) -> float:
    """The lowest p(supported) threshold at which, on the training fold, at least `precision` of the claims called
    SUPPORTED are supported: the product's operating point (an unsupported claim passing is the costly error)."""
    p = pipeline.predict_proba(X)[:, list(pipeline.classes_).index(True)]
    for t in np.unique(p):
        called = p >= t
        if called.any() and y[called].mean() >= precision:
            return float(t)
    return float(p.max())


def _note(path: Path, cv_metrics: dict, safe: float) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data["training_fold_cv"] = {k: round(v, 2) if isinstance(v, float) else v for k, v in cv_metrics.items()}
    if safe is not None:
        data["threshold_balanced_accuracy"], data["threshold"] = data["threshold"], safe
        data["threshold_rule"] = "lowest p(supported) with SUPPORTED precision >= --precision on the training fold"
    else:
        data["threshold_rule"] = "the balanced-accuracy threshold on the training fold"
    write_atomic(path, json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
