"""Queries per second of the BM25 backends on the DSTC11 knowledge base (10,882 snippets).

    python bench/retrieval_qps.py

Queries: the user turns of DSTC11 dev (knowledge-seeking), scored over the whole knowledge base, top-5.
Writes bench/results/retrieval_qps.json with the command.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from augmenter.knowledge import BM25sRetriever, RankBM25Retriever, load_dstc11, top_k
from augmenter.tasks.dstc11 import load_turns

ROOT = Path(__file__).resolve().parents[1]


def measure(retriever, texts, queries):
    t0 = time.perf_counter()
    retriever.index(texts)
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    tops = [[i for i, _ in top_k(retriever.scores(q), 5)] for q in queries]
    seconds = time.perf_counter() - t0
    return {"build_s": build, "queries": len(queries), "qps": len(queries) / seconds}, tops


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--rank-bm25-queries", type=int, default=200)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "retrieval_qps.json"))
    args = ap.parse_args()
    root = Path(args.data_root) / "dstc11-track5"
    kb = load_dstc11(root / "knowledge.json")
    texts = [s.text for s in kb.snippets]
    queries = [inst.q for inst in load_turns(root / "dev", knowledge_seeking_only=True)]
    fast, fast_tops = measure(BM25sRetriever(), texts, queries)
    slow_queries = queries[: args.rank_bm25_queries]
    slow, slow_tops = measure(RankBM25Retriever(), texts, slow_queries)
    same = sum(a == b for a, b in zip(fast_tops, slow_tops))
    result = {
        "command": "python bench/retrieval_qps.py " + " ".join(sys.argv[1:]),
        "snippets": len(texts),
        "bm25s": fast,
        "rank_bm25": slow,
        "speedup": fast["qps"] / slow["qps"],
        "identical_top5": f"{same}/{len(slow_queries)}",
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
