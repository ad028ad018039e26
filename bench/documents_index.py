"""Indexing speed, peak memory, incremental updates and query latency of `augmenter index` on folders of 100,
1,000 and 10,000 documents.

    python bench/documents_index.py [--sizes 100,1000,10000] [--dense 1000] [--work /tmp/augmenter-docs-bench]

The folders are SYNTHETIC (bench/documents_corpus.py): mixed formats (50% Markdown, 15% text, 15% HTML, 10% PDF,
10% Word), about 450 words a document, written once under --work. For each size, in a fresh process each:
`full` indexes the folder into an empty index (BM25 with bm25s, as `augmenter index` does), reporting its wall
time and its peak resident memory (VmHWM); `noop` runs the update again with nothing changed; `update` rewrites 1%
of the files and runs the update (only those are read; the BM25 index is rebuilt from the kept chunks);
`query` loads the index as chat does at start-up (bm25s's saved index, no update) and times the Knowledge
Consolidator's retrieval (entity linking + BM25 top-5) of 200 questions one at a time. `--dense N` also times the
MiniLM embeddings of the N-document folder (dense retrieval, cached by content hash) in full and after a 1% change.
Everything runs on this machine's 2 cores at nice 10; `load_1min` is the machine's load as a row ends.
Writes bench/results/documents_index.json (each row with its command).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
OUT = ROOT / "bench" / "results" / "documents_index.json"


def peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(mode: str, folder: str, index: str) -> dict:
    from augmenter.documents import load_documents, update_index

    if mode in ("full", "noop", "update"):
        start = time.perf_counter()
        report = update_index([folder], index, progress=False, warn=lambda line: None)
        return {
            "seconds": round(time.perf_counter() - start, 2),
            "peak_mb": round(peak_mb()),
            "documents": report.documents,
            "chunks": report.chunks,
            "added": len(report.added),
            "changed": len(report.changed),
            "skipped": len(report.skipped),
            "written": report.written,
        }
    if mode == "query":
        from augmenter.documents.handbook import QUESTIONS
        from augmenter.knowledge import BM25sRetriever, KnowledgeConsolidator

        start = time.perf_counter()
        kb = load_documents(folder, index, update=False)
        consolidator = KnowledgeConsolidator(kb, BM25sRetriever(), k=5, opinions=False)
        loaded = time.perf_counter() - start
        from documents_corpus import TOPICS

        questions = [q["q"] for q in QUESTIONS] + [
            f"Who approves {w} and how many days in advance?" for words in TOPICS.values() for w in words
        ]
        questions = (questions * 10)[:200]
        times = []
        for q in questions:
            t = time.perf_counter()
            consolidator.retrieve(q, (), consolidator.link(q))
            times.append(1000 * (time.perf_counter() - t))
        times.sort()
        return {
            "load_seconds": round(loaded, 2),
            "queries": len(times),
            "median_ms": round(statistics.median(times), 2),
            "p95_ms": round(times[int(0.95 * len(times)) - 1], 2),
            "max_ms": round(times[-1], 2),
            "chunks": len(kb.snippets),
            "peak_mb": round(peak_mb()),
        }
    if mode in ("dense", "dense_update"):
        from augmenter.documents.knowledge import EmbeddingCache
        from augmenter.knowledge import DenseRetriever

        kb = load_documents(folder, index, update=mode == "dense_update")
        retriever = DenseRetriever(progress=False)
        start = time.perf_counter()
        matrix = EmbeddingCache(Path(index) / "embeddings").get(retriever, kb.search_texts)
        return {
            "seconds": round(time.perf_counter() - start, 2),
            "chunks": len(kb.snippets),
            "dim": int(matrix.shape[1]),
            "peak_mb": round(peak_mb()),
        }
    raise SystemExit(f"unknown mode {mode}")


def run_child(mode: str, folder: Path, index: Path) -> dict:
    out = subprocess.run(
        ["nice", "-n", "10", sys.executable, __file__, "--child", mode, str(folder), str(index)],
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    if out.returncode != 0:
        raise SystemExit(f"{mode} failed: {out.stderr[-2000:]}")
    row = json.loads(out.stdout.strip().splitlines()[-1])
    row["load_1min"] = round(os.getloadavg()[0], 2)
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--dense", type=int, default=0, help="also time MiniLM embeddings at this size")
    parser.add_argument("--work", default="/tmp/augmenter-docs-bench")
    parser.add_argument("--child", nargs=3, metavar=("MODE", "FOLDER", "INDEX"))
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    from documents_corpus import change_files, make_corpus

    command = "python bench/documents_index.py " + " ".join(sys.argv[1:])
    result = json.loads(OUT.read_text()) if OUT.exists() else {"rows": {}}
    result.update(machine=f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    work = Path(args.work)
    for n in [int(s) for s in args.sizes.split(",") if s]:
        folder, index = work / f"n{n}", work / f"index-n{n}"
        start = time.perf_counter()
        paths = make_corpus(folder, n)
        made = time.perf_counter() - start
        shutil.rmtree(index, ignore_errors=True)
        row = {
            "command": command,
            "documents": n,
            "corpus_mb": round(sum(p.stat().st_size for p in paths) / 2**20, 1),
            "formats": {s: sum(p.suffix == s for p in paths) for s in (".md", ".txt", ".html", ".pdf", ".docx")},
        }
        print(f"n={n}: folder ready ({made:.0f} s)", flush=True)
        row["full"] = run_child("full", folder, index)
        print(f"  full: {row['full']}", flush=True)
        row["noop"] = run_child("noop", folder, index)
        print(f"  noop: {row['noop']}", flush=True)
        seed = int(time.time())  # new content each run (a seed used before would rewrite the same texts)
        changed = change_files(paths, 0.01, seed=seed)
        row["update"] = {"files_changed": len(changed), "seed": seed, **run_child("update", folder, index)}
        row["update"]["share_of_full"] = round(row["update"]["seconds"] / row["full"]["seconds"], 4)
        print(f"  update: {row['update']}", flush=True)
        row["query"] = run_child("query", folder, index)
        print(f"  query: {row['query']}", flush=True)
        if n == args.dense:
            row["dense"] = run_child("dense", folder, index)
            change_files(paths, 0.01, seed=int(time.time()) + 1)
            row["dense_update"] = run_child("dense_update", folder, index)
            row["dense_command"] = command
            print(f"  dense: {row['dense']} then {row['dense_update']}", flush=True)
        else:  # dense figures measured by an earlier run stay, with their own command
            kept = {k: v for k, v in result["rows"].get(str(n), {}).items() if k in ("dense", "dense_update")}
            if kept:
                row.update(
                    kept, dense_command=result["rows"][str(n)].get("dense_command", result["rows"][str(n)]["command"])
                )
        result["rows"][str(n)] = row
        OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
