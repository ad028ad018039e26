"""Faults: `augmenter eval` over 1,000 DSTC11 turns against a fault-injecting server.

    python bench/faults.py --turns 1000 --seed 0

The fault server (tests/fault_server.py) gives each turn a fault plan, drawn at random from the user's question
(so every LLM call of a turn, and its retries, follow the same plan):
- ok (no fault);
- transient: the turn's first 1-2 requests fail (500, 429 with Retry-After, connection reset, a hang past the
  per-attempt timeout, or a 401 echoing the key), then the server answers: a retry (or, after a 401, which stops
  the eval at once, the rerun that resumes it) can save the turn;
- permanent: every request of the turn fails (500, invalid JSON, an HTML page, no `choices`, empty `choices`,
  empty content);
- odd but valid replies: 50 kB of text, rich/HTML markup, terminal escape codes.
The eval runs as a user runs it, in a subprocess (`augmenter eval ... llm=openai`), and is rerun until it
finishes (a 401 stops it; the rerun resumes and retries the failed turns once more). Then the records are
checked against the plans:
- crashes: a run whose exit code is not 0 or 2 (one-line error), or a traceback on its stderr;
- failed turns scored as answers: a turn whose every request failed but whose record is not `failed`, or whose
  response is not the server's text; summary.json must score exactly the ok turns;
- secrets: the API key (set to a recognisable fake) anywhere in the run directory, the LLM cache or the output;
- saveable turns not answered: a turn with a transient plan whose record is not ok.
Results: bench/results/faults.json (with the command); `docs/RESULTS.md` quotes them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from augmenter.storage import content_hash

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fault_server import ESCAPES, HUGE, MARKUP, FaultServer

KEY = "sk-faultbench-" + "k3y" * 8  # a fake key in OpenAI's format: it must never be written anywhere
REPLY = "The hotel offers free parking and a heated pool for all guests."
PLANS = {  # plan: (weight, mode, failing requests of the turn: None = all; 0 = none, every reply in this mode)
    "ok": (40, "ok", 0),
    "500_once": (6, "500", 1),
    "500_twice": (4, "500", 2),
    "429_once": (6, "429", 1),
    "reset_once": (5, "reset", 1),
    "hang_once": (3, "hang", 1),
    "auth_once": (1, "auth", 1),
    "500_always": (4, "500", None),
    "invalid_json": (4, "invalid_json", None),
    "html": (4, "html", None),
    "no_choices": (4, "no_choices", None),
    "empty_choices": (4, "empty_choices", None),
    "empty_content": (4, "empty_content", None),
    "huge": (3, "huge", 0),
    "markup": (4, "markup", 0),
    "escapes": (4, "escapes", 0),
}
TEXT = {"huge": HUGE, "markup": MARKUP, "escapes": ESCAPES}
_USER_LINE = re.compile(r"^User: (.*)$", re.MULTILINE)


class Planner:
    """Maps a request to its turn's plan (by the turn's question) and counts the turn's requests."""

    def __init__(self, seed: int):
        self.seed = seed
        self.seen: Counter = Counter()
        self.lock = threading.Lock()

    def plan_of(self, question: str) -> str:
        rng = random.Random(content_hash(f"{self.seed}|{question}", 64))
        names = list(PLANS)
        return rng.choices(names, weights=[PLANS[n][0] for n in names])[0]

    def __call__(self, request: dict) -> str:
        messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
        lines = _USER_LINE.findall(str(messages[-1].get("content", ""))) if messages else []
        question = lines[-1].strip() if lines else ""
        plan = self.plan_of(question)
        _, mode, failing = PLANS[plan]
        with self.lock:
            self.seen[question] += 1
            number = self.seen[question]
        if failing is None or failing == 0 or number <= failing:
            return mode
        return "ok"


def run_eval(args, srv: FaultServer, out_dir: Path, cache: Path) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "augmenter.cli.main",
        "eval",
        "experiment=table2_bm25_feedback",
        f"eval.limit={args.turns}",
        f"eval.seed={args.seed}",
        f"eval.out_dir={out_dir}",
        "name=faults",
        "eval.progress=false",
        "eval.max_failed=0.99",
        f"data_root={args.data_root}",
        "llm=openai",
        f"llm.base_url={srv.base_url}",
        f"llm.model={srv.model}",
        "llm.max_retries=2",
        "llm.timeout=1",
        "llm.deadline=4",
        "llm_guard.max_consecutive_failures=1000000",
        "llm_cache.enabled=true",
        f"llm_cache.dir={cache}",
    ]
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    return {
        "rc": proc.returncode,
        "seconds": round(time.perf_counter() - start, 1),
        "stdout": proc.stdout,
        "stderr": proc.stderr,
        "traceback": "Traceback (most recent call last)" in proc.stderr,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=20, help="reruns at most (each 401 stops a run)")
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "faults.json"))
    args = ap.parse_args()

    planner = Planner(args.seed)
    work = Path(tempfile.mkdtemp(prefix="augmenter-faults-"))
    out_dir, cache = work / "runs", work / "cache"
    rounds = []
    with FaultServer(reply=REPLY, hang_seconds=3.0, retry_after="0") as srv:
        srv.planner = planner
        for _ in range(args.rounds):
            rounds.append(run_eval(args, srv, out_dir, cache))
            print(
                f"round {len(rounds)}: exit {rounds[-1]['rc']} in {rounds[-1]['seconds']} s; "
                f"{rounds[-1]['stderr'].strip().splitlines()[-1:] or ''}",
                flush=True,
            )
            if not (rounds[-1]["rc"] == 2 and "401" in rounds[-1]["stderr"]):
                break  # finished, or stopped for a reason other than a 401 (which a rerun gets past)
        requests = srv.requests

    run = next(out_dir.glob("*/faults"))
    records = [json.loads(line) for line in (run / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    plans = Counter()
    misscored, unsaved, wrong_text = [], [], []
    for record in records:
        plan = planner.plan_of(record["memory"]["q"])
        plans[plan] += 1
        _, mode, failing = PLANS[plan]
        status = record.get("status", "ok")
        if failing is None and status != "failed":
            misscored.append({"plan": plan, "status": status, "response": record["response"][:120]})
        if failing is not None and status != "ok":
            unsaved.append({"plan": plan, "status": status, "error": record.get("error")})
        if status == "ok" and record["response"] != TEXT.get(mode, REPLY):
            wrong_text.append({"plan": plan, "response": record["response"][:120]})
    ok = sum(1 for r in records if r.get("status", "ok") == "ok")
    blobs = [p.read_bytes() for p in work.rglob("*") if p.is_file()]
    blobs += [(r["stdout"] + r["stderr"]).encode() for r in rounds]
    secrets = sum(blob.count(KEY.encode()) for blob in blobs)
    result = {
        "command": "python bench/faults.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}",
        "turns": len(records),
        "plans": dict(sorted(plans.items())),
        "server_requests": requests,
        "rounds": [
            {k: r[k] for k in ("rc", "seconds", "traceback")}
            | {"last_line": (r["stderr"].strip().splitlines() or [""])[-1][:300]}
            for r in rounds
        ],
        "crashes": sum(1 for r in rounds if r["rc"] not in (0, 2) or r["traceback"]),
        "failed_turns_scored_as_answers": len(misscored) + len(wrong_text) + int(summary.get("ok") != ok),
        "summary_scored_turns": summary.get("ok"),
        "ok_records": ok,
        "failed_records": sum(1 for r in records if r.get("status") == "failed"),
        "secrets_written": secrets,
        "answerable_turns": sum(n for p, n in plans.items() if PLANS[p][2] is not None),
        "retry_saveable_turns": sum(n for p, n in plans.items() if PLANS[p][2]),  # a fault first, then an answer
        "saveable_turns_not_answered": len(unsaved),
        "examples": {"misscored": misscored[:5], "wrong_text": wrong_text[:5], "unsaved": unsaved[:5]},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if k not in ("examples", "rounds")}, indent=1))


if __name__ == "__main__":
    main()
