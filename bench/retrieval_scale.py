"""Build time, queries per second and peak memory of the retrieval backends at 10k, 100k and 1M passages.

    python bench/retrieval_scale.py [--sizes 10000,100000,1000000]
                                    [--backends bm25s,rank_bm25,lucene,faiss_flat,faiss_hnsw] [--search-queries 2000]

The corpus is SYNTHETIC, for size: passages of 30-80 words drawn from a Zipf-distributed vocabulary of 50,000
made-up words (seeded); queries are 4-word samples of random passages. The faiss backends index random unit
vectors of the MiniLM's 384 dimensions (their speed does not depend on what the vectors mean); the encoder's own
throughput is measured separately on real DSTC11 snippets. Lucene is asked for its 10 best hits per query (the
retriever's `hits`; each hit crosses the Java bridge, so asking for 1,000 is much slower). Each (backend, size)
runs in a fresh process, which runs on one thread and reports its own peak resident memory (VmHWM) and the memory
the corpus alone took. The sparse backends' top-5 are compared with bm25s's; HNSW's with exact search (recall@5).
Each row times the old path (`qps`: `top_k(scores(q), 5)`, one query at a time) and then, on the same index, the
retriever API's `search` (`search_qps`, over `--search-queries` queries in one batch; the first 200 are the old
path's, and `search_same_top5` counts those whose top-5 ids are the old path's): bm25s on one thread (its default:
numba from 50,000 passages where installed; `search_qps_numpy` and `search_qps_numba` force either, over the first
200 queries), Lucene's `batch_search` on 2 threads, rank-bm25 (no top-k of its own),
faiss one batched `search` on one thread. `load_1min`: the machine's load average as the row ends (other processes
slow every figure down). Writes bench/results/retrieval_scale.json, keeping the rows of sizes and
backends not measured this time (each row names its command).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SPARSE = ("bm25s", "rank_bm25", "lucene")
DENSE = ("faiss_flat", "faiss_hnsw")


def rss_mb(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def synthetic_corpus(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}x" for i in range(50_000)])
    ranks = np.arange(1, len(vocab) + 1)
    p = 1.0 / ranks**1.07
    p /= p.sum()
    lengths = rng.integers(30, 81, size=n)
    words = rng.choice(len(vocab), size=int(lengths.sum()), p=p)
    out, start = [], 0
    for length in lengths:
        out.append(" ".join(vocab[words[start : start + length]]))
        start += length
    return out


def synthetic_queries(corpus: list[str], count: int, seed: int = 1) -> list[str]:
    """Query i depends on (seed, i) alone, so the first n queries are the same whatever `count` is."""
    queries = []
    for q in range(count):
        rng = np.random.default_rng([seed, q])
        words = corpus[int(rng.integers(len(corpus)))].split()
        queries.append(" ".join(rng.choice(words, size=min(4, len(words)), replace=False)))
    return queries


def child(backend: str, size: int, queries: int, search_queries: int) -> dict:
    # imports by backend, here in the child: the peak memory it reports is then its backend's own
    from augmenter.knowledge import BM25sRetriever, RankBM25Retriever, top_k

    if backend in SPARSE:
        corpus = synthetic_corpus(size)
        qs = synthetic_queries(corpus, queries)
        base = rss_mb()
        if backend == "lucene":
            from augmenter.knowledge.lucene import LuceneRetriever

            retriever = LuceneRetriever(index_dir=tempfile.mkdtemp(prefix="lucene-bench-") + "/index", hits=10)
        else:
            retriever = BM25sRetriever() if backend == "bm25s" else RankBM25Retriever()
        start = time.perf_counter()
        retriever.index(corpus)
        build = time.perf_counter() - start
        start = time.perf_counter()
        tops = [[i for i, _ in top_k(retriever.scores(q), 5)] for q in qs]
        seconds = time.perf_counter() - start
        new = {}
        sq = synthetic_queries(corpus, max(search_queries, queries)) if backend != "rank_bm25" else qs
        if backend == "lucene":
            retriever.threads = 2  # batch_search's threads (the index was built on one, as before)
        retriever.search(sq[:1], 5)  # warm-up: numba's compiled top-k (cached on disk), the JVM
        start = time.perf_counter()
        hits = retriever.search(sq, 5)
        new["search_qps"] = round(len(sq) / (time.perf_counter() - start), 1)
        if backend == "bm25s":  # the default picks numba from 50,000 passages (where installed): both, forced
            for name, numba in (("numpy", False), ("numba", True)):
                retriever.numba = numba
                retriever.search(qs[:1], 5)
                start = time.perf_counter()
                retriever.search(qs, 5)
                new[f"search_qps_{name}"] = round(len(qs) / (time.perf_counter() - start), 1)
        new["search_queries"] = len(sq)
        new["search_same_top5"] = f"{sum(a == [i for i, _ in h] for a, h in zip(tops, hits))}/{len(tops)}"
    else:
        import faiss

        faiss.omp_set_num_threads(1)  # one query at a time on one thread, like the other backends
        rng = np.random.default_rng(0)
        vectors = rng.standard_normal((size, 384), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        qv = vectors[rng.integers(size, size=queries)] + 0.05 * rng.standard_normal((queries, 384), dtype=np.float32)
        qv /= np.linalg.norm(qv, axis=1, keepdims=True)
        base = rss_mb()
        start = time.perf_counter()
        if backend == "faiss_flat":
            index = faiss.IndexFlatIP(384)
        else:
            index = faiss.IndexHNSWFlat(384, 32, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efSearch = 128
        index.add(vectors)
        build = time.perf_counter() - start
        start = time.perf_counter()
        tops = [index.search(qv[i : i + 1], 5)[1][0].tolist() for i in range(queries)]  # one query at a time
        seconds = time.perf_counter() - start
        start = time.perf_counter()
        found = index.search(qv, 6)[1]  # one batch, k + 1 as DenseRetriever.search asks
        new = {
            "search_qps": round(queries / (time.perf_counter() - start), 1),
            "search_queries": queries,
            "search_same_top5": f"{sum(a == f[:5].tolist() for a, f in zip(tops, found))}/{queries}",
        }
    return {
        "backend": backend,
        "size": size,
        "build_s": round(build, 2),
        "queries": queries,
        "qps": round(queries / seconds, 1),
        "corpus_rss_mb": round(base, 1),
        "peak_rss_mb": round(rss_mb("VmHWM"), 1),
        **new,
        "load_1min": round(os.getloadavg()[0], 2),
        "top5": tops,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--backends", default=",".join(SPARSE + DENSE))
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rank-bm25-queries", type=int, default=20, help="rank-bm25 is slow: fewer queries")
    ap.add_argument("--search-queries", type=int, default=2000, help="queries timed through `search`")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "retrieval_scale.json"))
    ap.add_argument("--child", nargs=4, metavar=("BACKEND", "SIZE", "QUERIES", "SEARCH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), int(args.child[2]), int(args.child[3]))))
        return
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        results = {}
        for backend in args.backends.split(","):
            n = args.rank_bm25_queries if backend == "rank_bm25" else args.queries
            done = subprocess.run(
                [sys.executable, __file__, "--child", backend, str(size), str(n), str(args.search_queries)],
                capture_output=True,
                text=True,
            )
            if done.returncode != 0:
                rows.append({"backend": backend, "size": size, "error": done.stderr.strip().splitlines()[-1:]})
                print(f"{backend} at {size}: failed", file=sys.stderr)
                continue
            results[backend] = json.loads(done.stdout.strip().splitlines()[-1])
            print(
                f"{backend:>10} {size:>8}: build {results[backend]['build_s']} s, {results[backend]['qps']} q/s, "
                f"search {results[backend].get('search_qps')} q/s, peak {results[backend]['peak_rss_mb']} MB",
                file=sys.stderr,
            )
        for backend, r in results.items():
            reference = results.get("bm25s") if backend in SPARSE else results.get("faiss_flat")
            if reference and backend not in ("bm25s", "faiss_flat"):
                pairs = list(zip(reference["top5"], r["top5"]))
                r["identical_top5"] = f"{sum(a == b for a, b in pairs)}/{len(pairs)}"
                r["recall@5_vs_reference"] = round(float(np.mean([len(set(a) & set(b)) / 5 for a, b in pairs])), 4)
        for r in results.values():
            r.pop("top5")
            rows.append(r)
    command = "python bench/retrieval_scale.py " + " ".join(sys.argv[1:])
    for r in rows:
        r["command"] = command
    # rows of other sizes or backends measured earlier (a 1M run need not repeat 10k and 100k) are kept
    out = Path(args.out)
    earlier = json.loads(out.read_text()) if out.exists() else {}
    measured = {(r["backend"], r["size"]) for r in rows}
    kept = [r for r in earlier.get("rows", []) if (r["backend"], r["size"]) not in measured]
    for r in kept:
        r.setdefault("command", earlier.get("command", "?"))
    rows = sorted(kept + rows, key=lambda r: (r["size"], (SPARSE + DENSE).index(r["backend"])))
    result = {
        "commands": sorted({r["command"] for r in rows}),
        "machine": f"{platform.machine()}, python {platform.python_version()}",
        "corpus": "synthetic (see the module docstring)",
        "rows": rows,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
