"""Load on `augmenter serve`: concurrent chat sessions, each a few turns with its history.

    python bench/serve_load.py --sessions 50 --turns 4                 # the fake LLM: augmenter's own overhead
    python bench/serve_load.py --sessions 8 --turns 2 --repeat 1 llm=local   # the embedded model: queueing, first token

The server runs as a user runs it (`augmenter serve` in a subprocess, on a free port, with the given overrides;
`llm=fake` unless an `llm=` override is given). Each session asks the demo questions in turn, sending its own
history; half the sessions stream (as the web chat does), half do not. One warm-up pass asks each question once
before the clock starts; the load then runs `--repeat` times (3) and the figures are those of the median run
(each run's throughput and latency are listed too). Figures:
- requests/s over the whole run; latency per request (client side, p50/p95/max);
- augmenter's overhead: latency minus the LLM's own seconds (as the turn's trace measured them), with and without
  the time spent queued for a free agent; the same on the server's clock (from the request's arrival to its
  summary: no client time, no sending); the turn's non-LLM seconds inside the agent (retrieval, checks, policy);
- streamed requests: time to the first draft text (the first token the user sees) and to the checked answer.
Results: bench/results/serve_load.json (with the command); `docs/RESULTS.md` quotes them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = [
    "Does the Grand Meridian Hotel have a pool?",
    "Is there free parking there?",
    "And is there an airport shuttle?",
    "I also want dinner at Spice Garden. Is their beer a good value?",
]

MAX_HISTORY = 20  # messages of history a session sends (an even number: whole turns)


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, max(0, round(q / 100 * len(values)) - 1))], 4)


def stats(values: list[float]) -> dict:
    return {
        "n": len(values),
        "p50": pct(values, 50),
        "p95": pct(values, 95),
        "max": round(max(values), 4) if values else None,
        "mean": round(statistics.fmean(values), 4) if values else None,
    }


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(overrides: list[str], workers: int, port: int, log: Path) -> subprocess.Popen:
    llm = [] if any(o.startswith("llm=") for o in overrides) else ["llm=fake"]
    cmd = [
        sys.executable,
        "-m",
        "augmenter.cli.main",
        "-q",
        "serve",
        *llm,
        f"serve.port={port}",
        f"serve.workers={workers}",
        "serve.max_queue=1000",
        *overrides,
    ]
    return subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT, cwd=ROOT)


async def wait_ready(url: str, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient() as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise SystemExit(f"the server exited with {proc.returncode}")
            try:
                if (await client.get(f"{url}/readyz")).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.2)
    raise SystemExit("the server was not ready in time")


async def one_turn(client: httpx.AsyncClient, messages: list[dict], stream: bool) -> dict:
    """One request; its latency, first-draft and answer times, the server's timings, and the answer."""
    start = time.perf_counter()
    body = {"model": "augmenter", "messages": messages, "stream": stream}
    row = {"stream": stream}
    if not stream:
        r = await client.post("/v1/chat/completions", json=body)
        row["latency"] = time.perf_counter() - start
        row["status"] = r.status_code
        if r.status_code == 200:
            data = r.json()
            row["answer"], row["summary"] = data["choices"][0]["message"]["content"], data["augmenter"]
        return row
    answer = []
    async with client.stream("POST", "/v1/chat/completions", json=body) as r:
        row["status"] = r.status_code
        async for line in r.aiter_lines():
            if not line.startswith("data: {"):
                continue
            chunk = json.loads(line[6:])
            now = time.perf_counter() - start
            event = chunk.get("augmenter") or {}
            if event.get("event") == "draft":
                row.setdefault("first_draft", now)
            elif event.get("event") == "final":
                row["summary"] = event
            for choice in chunk.get("choices") or []:
                if choice["delta"].get("content"):
                    row.setdefault("first_answer", now)
                    answer.append(choice["delta"]["content"])
    row["latency"] = time.perf_counter() - start
    row["answer"] = "".join(answer)
    return row


async def session(client: httpx.AsyncClient, index: int, turns: int, stream: bool) -> list[dict]:
    history, rows = [], []
    for turn in range(turns):
        question = QUESTIONS[(index + turn) % len(QUESTIONS)]
        row = await one_turn(client, [*history, {"role": "user", "content": question}], stream)
        rows.append(row)
        if row.get("status") != 200:
            break
        history += [{"role": "user", "content": question}, {"role": "assistant", "content": row["answer"]}]
        history = history[-MAX_HISTORY:]  # as the web chat does: the latest turns (within serve.max_history_messages)
    return rows


async def run(args, url: str) -> dict:
    """The warm-up, then `args.repeat` runs of the load; the figures of the run with the median requests/s, and
    each run's throughput and latency."""
    limits = httpx.Limits(max_connections=args.sessions + 4, max_keepalive_connections=args.sessions + 4)
    runs = []
    async with httpx.AsyncClient(base_url=url, timeout=args.timeout, limits=limits) as client:
        for question in QUESTIONS:  # warm-up: every question once, alone
            await one_turn(client, [{"role": "user", "content": question}], False)
        for _ in range(args.repeat):
            start = time.perf_counter()
            results = await asyncio.gather(*(session(client, i, args.turns, i % 2 == 0) for i in range(args.sessions)))
            runs.append(figures([row for rows in results for row in rows], time.perf_counter() - start))
    median = sorted(runs, key=lambda f: f["requests_per_s"])[len(runs) // 2]
    each = [
        {
            "requests_per_s": f["requests_per_s"],
            "latency_p50": f["latency_seconds"]["p50"],
            "latency_p95": f["latency_seconds"]["p95"],
        }
        for f in runs
    ]
    return {**median, "runs": each}


def figures(rows: list[dict], wall: float) -> dict:
    ok = [r for r in rows if r.get("status") == 200 and "summary" in r]

    def timing(r, k):
        return r["summary"]["timings"][k]

    overhead = [r["latency"] - timing(r, "llm_seconds") for r in ok]
    unqueued = [r["latency"] - timing(r, "llm_seconds") - timing(r, "queue_seconds") for r in ok]
    server = [timing(r, "request_seconds") - timing(r, "llm_seconds") for r in ok]
    server_unqueued = [s - timing(r, "queue_seconds") for s, r in zip(server, ok)]
    streamed = [r for r in ok if r["stream"]]
    return {
        "requests": len(rows),
        "ok": len(ok),
        "errors": dict(Counter(str(r.get("status")) for r in rows if r.get("status") != 200)),
        "wall_seconds": round(wall, 2),
        "requests_per_s": round(len(ok) / wall, 2),
        "latency_seconds": stats([r["latency"] for r in ok]),
        "overhead_seconds": stats(overhead),
        "overhead_without_queue_seconds": stats(unqueued),
        "server_overhead_seconds": stats(server),
        "server_overhead_without_queue_seconds": stats(server_unqueued),
        "queue_seconds": stats([timing(r, "queue_seconds") for r in ok]),
        "turn_non_llm_seconds": stats([timing(r, "overhead_seconds") for r in ok]),
        "llm_seconds": stats([timing(r, "llm_seconds") for r in ok]),
        "llm_calls_per_turn": round(statistics.fmean(r["summary"]["usage"]["llm_calls"] for r in ok), 2)
        if ok
        else None,
        "time_to_first_draft_seconds": stats([r["first_draft"] for r in streamed if "first_draft" in r]),
        "time_to_checked_answer_seconds": stats([r["first_answer"] for r in streamed if "first_answer" in r]),
        "outcomes": dict(sorted(Counter(r["summary"]["outcome"] for r in ok).items())),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--turns", type=int, default=4, help="turns per session (each with the session's history)")
    ap.add_argument("--workers", type=int, default=1, help="serve.workers (keep 1 for the embedded model)")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds one request may take")
    ap.add_argument("--repeat", type=int, default=3, help="runs of the load (figures: the median run)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "serve_load.json"))
    ap.add_argument("overrides", nargs="*", help="Hydra overrides for augmenter serve, e.g. llm=local")
    args = ap.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None  # other processes on the cores skew the figures
    port = free_port()
    log = Path(args.out).with_suffix(".server.log")
    log.parent.mkdir(parents=True, exist_ok=True)
    proc = start_server(args.overrides, args.workers, port, log)
    url = f"http://127.0.0.1:{port}"
    try:
        asyncio.run(wait_ready(url, proc, timeout=600))
        measured = asyncio.run(run(args, url))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
    result = {
        "command": "python bench/serve_load.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}",
        "load_average_at_start": None if load is None else round(load, 2),
        "server": f"augmenter serve {'llm=fake ' if not any(o.startswith('llm=') for o in args.overrides) else ''}"
        f"serve.workers={args.workers} " + " ".join(args.overrides),
        "sessions": args.sessions,
        "turns_per_session": args.turns,
        **measured,
    }
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    log.unlink(missing_ok=True)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
