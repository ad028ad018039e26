"""Claim verifiers on the project's own labelled claims: every settled claim of a labelled
round (bench/labels/<round>/, see bench/claim_set.py) judged as the system judges it, through the default
consolidator's evidence for the turn plus the per-claim retrieval of the claims utility, against the labels.

    python bench/verifier_labels.py --round dstc11-dev [--llm] [chat overrides, e.g. consolidator.opinions=true]

Reported: the packaged `fast` verifier as it ships (balanced accuracy of SUPPORTED vs not, the share of unsupported
and of contradicted claims it passes, AUC of p(supported)); the same features refitted on the labels (logistic
regression, 5 folds by dialogue: threshold and weights chosen on the training folds only); with --llm the embedded
model's label probability (prompt verify_claim) alone and combined with the features; and per answer, the share of
flawed answers in which the shipped verifier flags a claim (the safety net) against clean answers it flags.
Features are cached in runs/bench/verifier_labels/ (resumable). Results: bench/results/verifier_labels-<round>.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from tqdm import tqdm

from augmenter.audit.labels import read_labels
from augmenter.config import build_agent, compose
from augmenter.eval.factcheck import cross_validate, metrics, threshold_cv
from augmenter.memory import Utterance, Verdict, WorkingMemory
from augmenter.storage import write_atomic
from augmenter.verification.verifiers import fast_features

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from claim_set import LABELS, load_items


def claims_utility(agent):
    utility = agent.executor.utility
    return getattr(utility, "base", None) or utility


def rows_for(items, settled, agent, with_llm: bool, cache: Path) -> list[dict]:
    """One row per settled claim: label, the shipped verdict and p, the fast features, the LLM's p (with_llm)."""
    done = {}
    if cache.exists():
        for line in cache.read_text().splitlines():
            row = json.loads(line)
            done[row["key"]] = row
    utility = claims_utility(agent)
    llm_verifier = None
    if with_llm:
        from augmenter.verification import LLMVerifier

        llm_verifier = LLMVerifier(agent.executor.llm, agent.executor.prompts)
    out = []
    with open(cache, "a", encoding="utf-8") as sink:
        for item in tqdm(items, desc="items", unit="item"):
            mem = None
            for answer in item.answers:
                label = settled.get((item.item, answer.rid))
                if label is None:
                    continue
                for j, claim in enumerate(label.claims):
                    key = f"{item.item}/{answer.rid}/{j}"
                    row = done.get(key)
                    if row is None or (with_llm and "llm_p" not in row):
                        if mem is None:
                            mem = WorkingMemory(q=item.q, h_q=[Utterance(**u) for u in item.history])
                            agent.executor.observe(mem)
                            _, mem.e = agent.executor.consolidator.retrieve(mem.q, mem.h_q, mem.entities)
                        check = utility.check(mem, answer.text, claims=[claim.text])[0]
                        found = utility.finder.find(claim.text, mem)
                        evidence = [u.text for u, _ in found]
                        features, _, _ = fast_features(claim.text, evidence, mem.q)
                        row = {
                            "key": key,
                            "dialogue": item.dialogue,
                            "label": claim.label,
                            "systems": answer.systems,
                            "verdict": check.verdict.value,
                            "p": check.p_supported,
                            "features": features,
                        }
                        if llm_verifier is not None:
                            dist, _ = llm_verifier.distribution(claim.text, evidence, mem.q)
                            row["llm_p"] = dist[Verdict.SUPPORTED]
                        sink.write(json.dumps(row) + "\n")
                        sink.flush()
                    out.append(row)
    return out


def summary(rows: list[dict], with_llm: bool) -> dict:
    y = np.array([r["label"] == "S" for r in rows])
    groups = [r["dialogue"] for r in rows]
    shipped = np.array([r["verdict"] == "supported" for r in rows])
    p = np.array([r["p"] for r in rows])
    contradicted = np.array([r["label"] == "C" for r in rows])
    from sklearn.metrics import roc_auc_score

    out = {
        "claims": len(rows),
        "supported": int(y.sum()),
        "unsupported": int((~y & ~contradicted).sum()),
        "contradicted": int(contradicted.sum()),
        "shipped_fast": {
            **metrics(y, p, shipped),
            "auc_roc": 100 * float(roc_auc_score(y, p)),
            "unsupported_or_contradicted_passed_percent": 100 * float(shipped[~y].mean()),
            "contradicted_caught_percent": 100 * float((~shipped[contradicted]).mean()) if contradicted.any() else None,
        },
    }
    names = sorted(rows[0]["features"])
    X = np.array([[r["features"][n] for n in names] for r in rows])
    refit = cross_validate(X, y, groups, folds=5, seed=0)
    out["fast_features_refit_cv"] = {**refit.metrics(y), "auc_roc": 100 * float(roc_auc_score(y, refit.p_factual))}
    if with_llm:
        llm_p = np.array([r["llm_p"] for r in rows])
        alone = threshold_cv(llm_p, y, groups, folds=5, seed=0)
        out["llm_alone_cv"] = {**alone.metrics(y), "auc_roc": 100 * float(roc_auc_score(y, llm_p))}
        both = cross_validate(np.column_stack([X, llm_p]), y, groups, folds=5, seed=0)
        out["fast_features_plus_llm_cv"] = {**both.metrics(y), "auc_roc": 100 * float(roc_auc_score(y, both.p_factual))}
    return json.loads(json.dumps(out, default=float), parse_float=lambda v: round(float(v), 2))


def safety_net(items, settled, rows) -> dict:
    """Per answer: flagged = a claim the shipped verifier does not call SUPPORTED."""
    verdicts: dict[tuple, list[str]] = {}
    for r in rows:
        item, rid, _ = r["key"].split("/")
        verdicts.setdefault((int(item), rid), []).append(r["verdict"])
    flawed = [k for k, lab in settled.items() if lab.flawed]
    clean = [k for k, lab in settled.items() if lab.claims and not lab.flawed]

    def flag(k):
        return any(v != "supported" for v in verdicts.get(k, []))

    return {
        "flawed_answers": len(flawed),
        "flawed_flagged_percent": round(100 * np.mean([flag(k) for k in flawed]), 1) if flawed else None,
        "clean_answers": len(clean),
        "clean_flagged_percent": round(100 * np.mean([flag(k) for k in clean]), 1) if clean else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--round", default="dstc11-dev")
    ap.add_argument("--llm", action="store_true", help="also the embedded model's label probabilities (slow)")
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--tag", default="", help="suffix of the result and cache files (e.g. for other overrides)")
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    directory = LABELS / args.round
    items = load_items(directory)
    settled = read_labels(directory / "settled.jsonl")
    cfg = compose(
        "chat",
        [
            "task=dstc11",
            f"data_root={args.data_root}",
            "llm_cache.enabled=true",
            *([] if args.llm else ["llm=fake"]),
            *args.overrides,
        ],
    )
    agent = build_agent(cfg)
    name = f"{args.round}{'-' + args.tag if args.tag else ''}"
    cache = ROOT / "runs" / "bench" / "verifier_labels" / f"{name}.jsonl"
    cache.parent.mkdir(parents=True, exist_ok=True)
    rows = rows_for(items, settled, agent, args.llm, cache)
    result = {
        "command": "python bench/verifier_labels.py " + " ".join(sys.argv[1:]),
        "round": args.round,
        "claims": summary(rows, args.llm),
        "answers": safety_net(items, settled, rows),
    }
    write_atomic(ROOT / "bench" / "results" / f"verifier_labels-{name}.json", json.dumps(result, indent=1) + "\n")
    json.dump(result, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
