"""Concurrent turns: wall time of `augmenter eval` at eval.concurrency=N against a server.

    python bench/concurrency.py --turns 200 --delay 1.0 --levels 1,4,16

Starts a local OpenAI-compatible server (its own process and thread pool) whose every answer takes `--delay` seconds, as
a remote model server would, and runs the same eval (`--experiment`, DSTC11 dev, `--turns` turns, no LLM cache) at each
concurrency level, each into its own run directory, after an untimed 2-turn warm-up. Reports wall time, turns/s, the
speed-up over the first level (of the whole run, and of its turns alone: the closing summary, corpus metrics with
BERTScore, takes the same time at every level and is timed apart), and whether the records are identical to the first
level's apart from timings. With `--server URL` it runs against an existing server instead (e.g. llama.cpp's
`llama-server --parallel 16`).
Results go to bench/results/concurrency.json with the command; `docs/RESULTS.md` quotes them.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import shlex
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from compare_records import without_timings

from augmenter.config import build_evaluator, compose
from augmenter.eval.runner import read_records, summarize


class SlowServer(ThreadingHTTPServer):
    """POST /v1/chat/completions: after `delay` seconds, a reply that depends on the prompt (so a mixed-up turn
    would show in the records); counts requests and the most in flight at once."""

    daemon_threads = True

    def __init__(self, delay: float):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.delay, self.lock, self.in_flight, self.most, self.requests = delay, threading.Lock(), 0, 0, 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = 1 << 16  # headers and body in one write (unbuffered, a kept-alive reply waits ~40 ms on Nagle)

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        srv: SlowServer = self.server
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        with srv.lock:
            srv.requests += 1
            srv.in_flight += 1
            srv.most = max(srv.most, srv.in_flight)
        try:
            time.sleep(srv.delay)
            words = " ".join(str(m.get("content", "")) for m in body.get("messages", [])).split()
            text = f"Yes. The place has what you ask about; your message had {len(words)} words."
            data = json.dumps(
                {
                    "id": "x",
                    "object": "chat.completion",
                    "model": body.get("model", "m"),
                    "choices": [
                        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
                    ],
                    "usage": {"prompt_tokens": len(words), "completion_tokens": 14},
                }
            ).encode()
        finally:
            with srv.lock:
                srv.in_flight -= 1
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _serve(delay: float, replies, asks) -> None:
    """The server's own process (as a real server is: its threads do not share the eval's interpreter). It puts
    its port on `replies`, then for each message on `asks` the most requests in flight since the last one."""
    server = SlowServer(delay)
    replies.put(server.server_address[1])
    threading.Thread(target=_report, args=(server, replies, asks), daemon=True).start()
    server.serve_forever()


def _report(server: SlowServer, replies, asks) -> None:
    while True:
        asks.get()
        replies.put(server.most)
        server.most = 0


def run(level: int, base_url: str, args, out_dir: Path) -> dict:
    overrides = [
        f"experiment={args.experiment}",
        f"eval.limit={args.turns}",
        f"eval.out_dir={out_dir}",
        f"name=n{level}",
        f"eval.concurrency={level}",
        "eval.progress=false",
        "llm_cache.enabled=false",
        "llm=openai",
        f"llm.base_url={base_url}",
        f"llm.model={args.model}",
        f"data_root={args.data_root}",
    ]
    evaluator = build_evaluator(compose("eval", overrides))
    start = time.perf_counter()
    summary = evaluator.run()
    wall = time.perf_counter() - start
    records = read_records(evaluator.records_path)
    start = time.perf_counter()
    summarize(records)  # the run's closing summary (corpus metrics, BERTScore): the same at every level
    closing = time.perf_counter() - start
    records = [without_timings(r) for r in records]
    return {
        "concurrency": level,
        "wall_seconds": round(wall, 2),
        "summary_seconds": round(closing, 2),
        "turns_wall_seconds": round(wall - closing, 2),
        "turns": summary["ok"] + summary["failed"],
        "failed": summary["failed"],
        "turns_per_second": round((summary["ok"] + summary["failed"]) / wall, 3),
        "llm_calls_per_turn": round(summary.get("cost", {}).get("llm_calls", 0.0), 3),
        "_records": records,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--delay", type=float, default=1.0, help="seconds the local server takes per answer")
    ap.add_argument("--levels", default="1,4,16")
    ap.add_argument("--experiment", default="table2_bm25_feedback")
    ap.add_argument("--server", default=None, help="an existing OpenAI-compatible base URL instead of the local one")
    ap.add_argument("--model", default="slow-server")
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "concurrency.json"))
    args = ap.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "unused-by-the-local-server")
    server = None
    if args.server is None:
        replies, asks = multiprocessing.Queue(), multiprocessing.Queue()
        server = multiprocessing.Process(target=_serve, args=(args.delay, replies, asks), daemon=True)
        server.start()
        base_url = f"http://127.0.0.1:{replies.get(timeout=30)}/v1"
    else:
        base_url = args.server
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        warm = argparse.Namespace(**{**vars(args), "turns": 2})  # load the knowledge, index and metrics once, untimed
        run(1, base_url, warm, Path(tmp) / "warm-up")
        if server is not None:
            asks.put("reset")
            replies.get(timeout=30)
        for level in (int(x) for x in args.levels.split(",")):
            row = run(level, base_url, args, Path(tmp))
            row["identical_to_first"] = row["_records"] == rows[0]["_records"] if rows else True
            row["speedup"] = round(rows[0]["wall_seconds"] / row["wall_seconds"], 2) if rows else 1.0
            row["turns_speedup"] = round(rows[0]["turns_wall_seconds"] / row["turns_wall_seconds"], 2) if rows else 1.0
            if server is not None:
                asks.put("most")
                row["most_requests_in_flight"] = replies.get(timeout=30)
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "_records"}), flush=True)
    if server is not None:
        server.terminate()
    result = {
        "command": "python bench/concurrency.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        "server": args.server or f"local, {args.delay} s per answer",
        "experiment": args.experiment,
        "machine": f"{os.cpu_count()} cores, {platform.machine()}, python {platform.python_version()}",
        "levels": [{k: v for k, v in row.items() if k != "_records"} for row in rows],
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
