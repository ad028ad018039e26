"""The claim verifiers alone on labelled data, cross-validated.

    python bench/verifier.py [--datasets wikibio,felm,halueval] [--llm-limit N] [--folds 5] [--seed 0]

Data (published formats, ../shared/data): WikiBio GPT-3 (1,908 sentences, evidence = the Wikipedia bio), FELM
world knowledge (532 segments, evidence = the shipped reference contents), HaluEval QA (2,000 seeded samples, each
answer judged alone, evidence = the knowledge given). Each item's evidence is cut into sentences (at most
`--max-units` per item, the most similar to the claim are what the verifiers look at).

Verifiers: `fast` (MiniLM + lexical features), `llm` (the embedded model's label log-probabilities, prompt
verify_claim, the 4 most similar evidence sentences), `combined` (both feature sets). Weights and thresholds are
chosen on the training folds only and applied to the held-out fold (group-wise folds: a bio, a FELM response or a
HaluEval sample never straddles folds); the figures are out-of-fold. The LLM runs on `--llm-limit` items per data
set (a seeded sample of whole groups; all when 0); `fast` is also scored on that subset for a like-for-like row.
Features are cached under runs/bench/verifier/ (resumable; the LLM part is written item by item).
Results: bench/results/verifier.json with the command, and a Markdown table on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from augmenter.config import build_llm, compose
from augmenter.errors import InputError
from augmenter.eval.factcheck import cross_validate, metrics, pairwise_accuracy, threshold_cv
from augmenter.memory import Verdict
from augmenter.prompts import PromptEngine
from augmenter.storage import write_atomic
from augmenter.tasks.factcheck import claim_set
from augmenter.verification import LLMVerifier
from augmenter.verification.encoder import similarities
from augmenter.verification.splitter import split_sentences
from augmenter.verification.verifiers import fast_features

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = {
    "wikibio": "CEG: balanced accuracy 77.59, AUC-PR non-factual 92.31 / factual 70.24; SelfCheckGPT (NLI) "
    "non-factual 92.50; chance 72.96 (non-factual share)",
    "felm": "CEG balanced accuracy 69.9 (GPT-4), 59.7 (ChatGPT)",
    "halueval": "ChatGPT accuracy 62.59 (HaluEval paper)",
}


def load(name: str, data: Path, seed: int):
    """The published claim set (HaluEval: a seeded sample of 2,000 rows, two answers each)."""
    try:
        return claim_set(name, data).claims(limit=2000 if name == "halueval" else None, seed=seed)
    except InputError as e:
        raise SystemExit(str(e)) from None


def evidence_units(item, max_units: int) -> list[str]:
    """The item's evidence as sentences; past `max_units`, the most similar to the claim are kept."""
    units = [s for passage in item.evidence for s in split_sentences(passage.replace("\r", " ")) if len(s) > 3]
    units = list(dict.fromkeys(u[:600] for u in units))
    if len(units) > max_units:
        sims = similarities(item.claim, units)
        keep = sorted(np.argsort(-sims)[:max_units])
        units = [units[i] for i in keep]
    return units


def _read_cache(path: Path) -> dict:
    out = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                row = json.loads(line)
                out[row["id"]] = row
            except (json.JSONDecodeError, KeyError):
                continue  # a line cut by a crash: recomputed
    return out


def fast_rows(name: str, items, cache_dir: Path, max_units: int) -> dict:
    path = cache_dir / f"{name}-fast-u{max_units}.jsonl"
    done = _read_cache(path)
    todo = [it for it in items if it.id not in done]
    with open(path, "a", encoding="utf-8") as sink:
        for it in tqdm(todo, desc=f"{name} fast", unit="claim", disable=not todo):
            start = time.perf_counter()
            units = evidence_units(it, max_units)
            t_units = time.perf_counter()
            features, _, _ = fast_features(it.claim, units, it.context)
            row = {
                "id": it.id,
                "features": features,
                "seconds": time.perf_counter() - t_units,
                "evidence_seconds": t_units - start,
                "units": len(units),
            }
            sink.write(json.dumps(row) + "\n")
            sink.flush()
            done[it.id] = row
    return done


def llm_rows(name: str, items, cache_dir: Path, max_units: int, verifier) -> dict:
    path = cache_dir / f"{name}-llm-u{max_units}.jsonl"
    done = _read_cache(path)
    todo = [it for it in items if it.id not in done]
    with open(path, "a", encoding="utf-8") as sink:
        for it in tqdm(todo, desc=f"{name} llm", unit="claim", disable=not todo):
            units = evidence_units(it, max_units)
            before = verifier.llm.usage.copy()
            start = time.perf_counter()
            dist, _ = verifier.distribution(it.claim, units, it.context)
            spent = verifier.llm.usage.minus(before)
            row = {
                "id": it.id,
                "dist": {v.value: p for v, p in dist.items()},
                "seconds": time.perf_counter() - start,
                "prompt_tokens": spent.prompt_tokens,
                "calls": spent.calls,
            }
            sink.write(json.dumps(row) + "\n")
            sink.flush()
            done[it.id] = row
    return done


def subset(items, limit: int, seed: int):
    """A seeded sample of whole groups holding about `limit` items (all items when limit is 0)."""
    if not limit or limit >= len(items):
        return items
    groups = sorted({it.group for it in items})
    random.Random(seed).shuffle(groups)
    chosen, count = set(), 0
    sizes = {g: sum(it.group == g for it in items) for g in groups}
    for g in groups:
        if count >= limit:
            break
        chosen.add(g)
        count += sizes[g]
    return [it for it in items if it.group in chosen]


FAST_NAMES = None


def matrix(items, rows: dict, key: str = "features") -> np.ndarray:
    global FAST_NAMES
    FAST_NAMES = FAST_NAMES or list(rows[items[0].id][key])
    return np.array([[rows[it.id][key][n] for n in FAST_NAMES] for it in items], dtype=float)


def score(name: str, items, p, pred) -> dict:
    y = np.array([it.factual for it in items])
    out = {k: (round(v, 2) if isinstance(v, float) else v) for k, v in metrics(y, p, pred).items()}
    if name == "halueval":
        out["accuracy"] = round(100.0 * float(np.mean(np.asarray(pred, bool) == y)), 2)
        by_group: dict[str, dict[bool, float]] = {}
        for it, q in zip(items, p):
            by_group.setdefault(it.group, {})[it.factual] = float(q)
        pairs = [g for g in by_group.values() if len(g) == 2]
        out["pairwise_accuracy"] = round(pairwise_accuracy([g[True] for g in pairs], [g[False] for g in pairs]), 2)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="wikibio,felm,halueval")
    ap.add_argument("--verifiers", default="fast,llm,combined")
    ap.add_argument("--llm-limit", type=int, default=0, help="items per data set for the LLM verifiers (0: all)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-units", type=int, default=200)
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--cache", default=str(ROOT / "runs" / "bench" / "verifier"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "verifier.json"))
    args = ap.parse_args()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    wanted = args.verifiers.split(",")
    out_path = Path(args.out)
    results = json.loads(out_path.read_text()) if out_path.exists() else {}
    llm_verifier = None
    if {"llm", "combined"} & set(wanted):
        cfg = compose("chat", ["llm_cache.enabled=false"])
        llm_verifier = LLMVerifier(build_llm(cfg), PromptEngine(response="customer_service"))
    for name in args.datasets.split(","):
        items = load(name, Path(args.data_root), args.seed)
        rows = fast_rows(name, items, cache, args.max_units)
        y = np.array([it.factual for it in items])
        groups = [it.group for it in items]
        entry = {
            "n": len(items),
            "nonfactual_share": round(100.0 * float(np.mean(~y)), 2),
            "published": PUBLISHED[name],
            "folds": args.folds,
            "seed": args.seed,
            "max_units": args.max_units,
        }
        X = matrix(items, rows)
        cv = cross_validate(X, y, groups, args.folds, args.seed)
        entry["fast"] = score(name, items, cv.p_factual, cv.predicted)
        entry["fast"]["features"] = FAST_NAMES
        entry["fast"]["ms_per_claim"] = round(1000 * float(np.mean([rows[it.id]["seconds"] for it in items])), 2)
        entry["fast"]["ms_per_claim_evidence_split"] = round(
            1000 * float(np.mean([rows[it.id]["evidence_seconds"] for it in items])), 2
        )
        # a baseline that reads nothing but the claim's length (HaluEval's right answers are short spans, its
        # hallucinated ones whole sentences): a verifier's figure means little unless it beats this
        short = -np.array([len(it.claim.split()) for it in items], dtype=float)
        cvs = threshold_cv(short, y, groups, args.folds, args.seed)
        entry["length_only"] = score(name, items, 1.0 / (1.0 + np.exp(-(short - np.median(short)))), cvs.predicted)
        if llm_verifier is not None:
            part = subset(items, args.llm_limit, args.seed)
            lrows = llm_rows(name, part, cache, args.max_units, llm_verifier)
            yp = np.array([it.factual for it in part])
            gp = [it.group for it in part]
            entry["llm_subset"] = {
                "n": len(part),
                "groups": len(set(gp)),
                "nonfactual_share": round(100.0 * float(np.mean(~yp)), 2),
            }
            Xp = matrix(part, rows)
            cvf = cross_validate(Xp, yp, gp, args.folds, args.seed)
            entry["fast_on_llm_subset"] = score(name, part, cvf.p_factual, cvf.predicted)
            p_llm = np.array([lrows[it.id]["dist"][Verdict.SUPPORTED.value] for it in part])
            cvl = threshold_cv(p_llm, yp, gp, args.folds, args.seed)
            cost = {
                "llm_calls_per_claim": float(np.mean([lrows[it.id]["calls"] for it in part])),
                "prompt_tokens_per_claim": round(float(np.mean([lrows[it.id]["prompt_tokens"] for it in part])), 1),
                "seconds_per_claim": round(float(np.mean([lrows[it.id]["seconds"] for it in part])), 3),
            }
            entry["llm"] = {**score(name, part, cvl.p_factual, cvl.predicted), **cost}
            llm_x = np.array([[lrows[it.id]["dist"][v.value] for v in Verdict] for it in part])
            cvc = cross_validate(np.hstack([Xp, llm_x]), yp, gp, args.folds, args.seed)
            entry["combined"] = {**score(name, part, cvc.p_factual, cvc.predicted), **cost}
        results[name] = entry
        print(f"## {name}: n={entry['n']}, non-factual {entry['nonfactual_share']}%  (published: {PUBLISHED[name]})")
        for key in ("length_only", "fast", "fast_on_llm_subset", "llm", "combined"):
            if key in entry:
                m = entry[key]
                extra = f", accuracy {m['accuracy']}, pairwise {m['pairwise_accuracy']}" if "accuracy" in m else ""
                print(
                    f"  {key:>18}: balanced accuracy {m['balanced_accuracy']}, AUC-PR non-factual "
                    f"{m['auc_pr_nonfactual']} / factual {m['auc_pr_factual']}{extra}"
                )
    results["command"] = "python bench/verifier.py " + " ".join(sys.argv[1:])
    results["machine"] = f"{os.cpu_count()} cores"
    write_atomic(out_path, json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
