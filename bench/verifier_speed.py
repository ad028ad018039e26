"""What the claims utility with the fast verifier adds per claim, on DSTC11 (the aim: under 20 ms per claim).

    python bench/verifier_speed.py [--turns 100] [--seed 0]

For `--turns` seeded DSTC11 dev knowledge-seeking turns, the gold response is the candidate and BM25 (the turn's
consolidation) gives e; `ClaimsUtility.check` (sentence split, per-claim retrieval of 3 snippets, one encoder
batch, the fast verifier) runs twice: cold (every evidence sentence new to the encoder cache, as on a fresh start)
and warm (evidence already embedded, as for later candidates of a turn and snippets seen before; the claims
themselves are new in both). The encoder is
loaded and warmed up before timing; one thread set by torch's default. Writes bench/results/verifier_speed.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from augmenter.knowledge import BM25sRetriever, KnowledgeConsolidator, load_dstc11
from augmenter.memory import WorkingMemory
from augmenter.tasks.dstc11 import load_turns
from augmenter.utilities import ClaimsUtility
from augmenter.verification import FastVerifier, encoder

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "verifier_speed.json"))
    args = ap.parse_args()
    root = Path(args.data_root) / "dstc11-track5"
    kb = load_dstc11(root / "knowledge.json", root / "entity_mapping.json")
    consolidator = KnowledgeConsolidator(kb, BM25sRetriever(), k=5, opinions=False)
    utility = ClaimsUtility(FastVerifier(), consolidator=consolidator)
    turns = load_turns(root / "dev", knowledge_seeking_only=True, limit=args.turns, seed=args.seed)
    encoder.embed(["warm up the encoder", "a second sentence"])
    rows = {"cold": [], "warm": []}
    claims_total = 0
    for t in turns:
        mem = WorkingMemory(q=t.q, h_q=t.history, consolidated=True)
        mem.entities = consolidator.link(t.q, t.history)
        _, mem.e = consolidator.retrieve(t.q, t.history, mem.entities)
        for phase in ("cold", "warm"):
            for claim in utility.splitter.sentences((t.references or [""])[0]):
                encoder._CACHE.pop(claim, None)  # the claims are new in both phases; only the evidence is cached
            start = time.perf_counter()
            checks = utility.check(mem, (t.references or [""])[0])
            rows[phase].append((time.perf_counter() - start, len(checks)))
        claims_total += rows["warm"][-1][1]
    result = {
        "turns": len(turns),
        "claims": claims_total,
        "command": "python bench/verifier_speed.py " + " ".join(sys.argv[1:]),
        "machine": f"{os.cpu_count()} cores",
    }
    for phase, data in rows.items():
        seconds = sum(s for s, _ in data)
        per_turn = [s for s, n in data if n]
        result[phase] = {
            "ms_per_claim": round(1000 * seconds / max(1, claims_total), 2),
            "ms_per_turn_median": round(1000 * statistics.median(per_turn), 2) if per_turn else None,
        }
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
