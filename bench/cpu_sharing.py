"""CPU sharing: the embedded model's per-call time alone and beside another llama.cpp process.

    python bench/cpu_sharing.py --calls 4

Each scenario runs a fresh "demo" process (it loads the 0.5B model and times `--calls` demo-sized calls: a
~350-token prompt, 24 new tokens, greedy) with or without a "busy" process beside it (the same model answering
prompts in a loop, as a running `augmenter eval` does). Scenarios set OMP_WAIT_POLICY and the thread count of
both processes explicitly:
- before: llama.cpp's default wait policy (threads spin while waiting), 2 threads each (the old default);
- passive: OMP_WAIT_POLICY=PASSIVE (waiting threads sleep), 2 threads each;
- one thread: OMP_WAIT_POLICY=PASSIVE and 1 thread each.
Results go to bench/results/cpu_sharing.json with the command; `docs/RESULTS.md` quotes them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

from augmenter.knowledge.demo import DEMO_SCRIPT
from augmenter.llm import LocalLLM, SamplingParams
from augmenter.memory import Snippet, WorkingMemory
from augmenter.prompts import PromptEngine

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = {  # name: (OMP_WAIT_POLICY or None for the library default, threads)
    "before": (None, 2),
    "passive": ("PASSIVE", 2),
    "one_thread": ("PASSIVE", 1),
}


def _messages(i: int) -> list[dict]:
    mem = WorkingMemory(q=DEMO_SCRIPT[i % len(DEMO_SCRIPT)])
    mem.e = [
        Snippet(
            id=str(k),
            entity_name="GRAND MERIDIAN HOTEL",
            text=f"Q: Question {k} about the hotel? A: Yes, the hotel offers service number {k} every day "
            f"from 7 am to 10 pm, and guests can ask at the front desk for details.",
        )
        for k in range(5)
    ]
    return PromptEngine(response="assistant").respond(mem)


def worker(calls: int, threads: int, loop: bool, policy: str | None) -> None:
    """Load the model and time `calls` calls (prints one JSON line), or answer in a loop until killed."""
    llm = LocalLLM(n_threads=threads, wait_policy=policy)
    params = SamplingParams(max_tokens=24, temperature=0.0)
    llm.complete(_messages(0), params)  # load + warm up
    i, times = 1, []
    while loop or len(times) < calls:
        start = time.perf_counter()
        out = llm.complete(_messages(i), params)
        times.append(time.perf_counter() - start)
        i += 1
    print(json.dumps({"seconds": times, "prompt_tokens": out.prompt_tokens}), flush=True)


def scenario(name: str, calls: int, busy: bool) -> dict:
    policy, threads = SCENARIOS[name]
    cmd = [sys.executable, __file__, "--worker", "--threads", str(threads), "--policy", policy or "default"]
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    background = None
    if busy:
        background = subprocess.Popen([*cmd, "--loop"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(8)  # let it load the model and start answering
    try:
        out = subprocess.run([*cmd, "--calls", str(calls)], env=env, capture_output=True, text=True, check=True)
    finally:
        if background is not None:
            background.kill()
            background.wait()
    seconds = json.loads(out.stdout.strip().splitlines()[-1])["seconds"]
    return {
        "scenario": name,
        "omp_wait_policy": policy or "library default",
        "threads": threads,
        "beside_busy_process": busy,
        "calls": len(seconds),
        "median_s": round(statistics.median(seconds), 3),
        "seconds": [round(s, 3) for s in seconds],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=4)
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "cpu_sharing.json"))
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--loop", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=2, help=argparse.SUPPRESS)
    ap.add_argument("--policy", default="default", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.calls, args.threads, args.loop, None if args.policy == "default" else args.policy)
        return
    rows = []
    for name in [s.strip() for s in args.scenarios.split(",") if s.strip()]:
        for busy in (False, True):
            rows.append(scenario(name, args.calls, busy))
            print(json.dumps(rows[-1]), flush=True)
    result = {
        "command": "python bench/cpu_sharing.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}",
        "rows": rows,
    }
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(
        "| scenario | threads | wait policy | alone (s/call) | beside a busy process (s/call) |\n|---|---|---|---|---|"
    )
    for name in dict.fromkeys(r["scenario"] for r in rows):
        alone = next(r for r in rows if r["scenario"] == name and not r["beside_busy_process"])
        busy = next(r for r in rows if r["scenario"] == name and r["beside_busy_process"])
        print(
            f"| {name} | {alone['threads']} | {alone['omp_wait_policy']} | {alone['median_s']} | {busy['median_s']} |"
        )


if __name__ == "__main__":
    main()
