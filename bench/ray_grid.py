"""Wall time of a small grid run one experiment after another and on Ray.

    python bench/ray_grid.py [--only table2] [--limit 20] [--shard-size 10] [--delay SECONDS]

Runs `augmenter grid --only ... eval.limit=...` as a user would (a subprocess each, its whole wall time: start-up,
knowledge loading, answering, summaries), first sequentially, then with `--ray --shard-size N` on a local Ray
instance it starts (the Ray start-up included), each into fresh run and cache directories, and checks that the
records are the same apart from timings (and cache counts). The LLM is the fake one; with `--delay` it is a local
OpenAI-compatible server that answers after that many seconds (`bench/concurrency.py`'s, in its own process).
Results go to bench/results/ray_grid.json with the command; `docs/RESULTS.md` quotes them.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from compare_records import without_timings


def _records(sample: Path) -> dict[str, list[dict]]:
    """Each run's records without timings and cache counts (which depend on what the cache held)."""

    def clean(value):
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if "cached" not in k}
        return [clean(v) for v in value] if isinstance(value, list) else value

    return {
        run.name: [
            clean(without_timings(json.loads(line)))
            for line in (run / "records.jsonl").read_text(encoding="utf-8").splitlines()
        ]
        for run in sorted(sample.iterdir())
        if (run / "records.jsonl").exists()
    }


def _grid(flags: list[str], overrides: list[str], out: Path) -> float:
    command = [
        str(Path(sys.executable).parent / "augmenter"),
        "grid",
        *flags,
        *overrides,
        f"eval.out_dir={out}",
        f"llm_cache.dir={out / 'cache'}",
        "eval.progress=false",
    ]
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="table2")
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--shard-size", type=int, default=10)
    ap.add_argument("--delay", type=float, default=None, help="seconds per answer of a local server (default: fake)")
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "ray_grid.json"))
    args = ap.parse_args()
    overrides = [f"data_root={args.data_root}", f"eval.limit={args.limit}", "llm=fake"]
    server = None
    if args.delay is not None:
        from concurrency import _Handler, _serve

        _Handler.wbufsize = -1  # one write per reply: unbuffered headers meet Nagle and delayed ACKs (+40 ms)

        os.environ.setdefault("OPENAI_API_KEY", "unused-by-the-local-server")
        replies, asks = multiprocessing.Queue(), multiprocessing.Queue()
        server = multiprocessing.Process(target=_serve, args=(args.delay, replies, asks), daemon=True)
        server.start()
        overrides[-1:] = [
            "llm=openai",
            f"llm.base_url=http://127.0.0.1:{replies.get(timeout=30)}/v1",
            "llm.model=slow-server",
        ]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            sequential = _grid(["--only", args.only], overrides, Path(tmp) / "seq")
            on_ray = _grid(
                ["--only", args.only, "--ray", "--shard-size", str(args.shard_size)], overrides, Path(tmp) / "ray"
            )
            sample = f"dstc11-dev-n{args.limit}-seed0"
            before, after = _records(Path(tmp) / "seq" / sample), _records(Path(tmp) / "ray" / sample)
    finally:
        if server is not None:
            server.terminate()
    turns = sum(len(r) for r in before.values())
    result = {
        "command": " ".join(["python bench/ray_grid.py", *sys.argv[1:]]),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, python {platform.python_version()}",
        "llm": "fake" if args.delay is None else f"local server, {args.delay} s per answer",
        "experiments": sorted(before),
        "turns": turns,
        "shard_size": args.shard_size,
        "sequential_seconds": round(sequential, 1),
        "ray_seconds": round(on_ray, 1),
        "speedup": round(sequential / on_ray, 2),
        "records_identical_apart_from_timings": before == after and len(before) > 0,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))
    return 0 if result["records_identical_apart_from_timings"] else 1


if __name__ == "__main__":
    sys.exit(main())
