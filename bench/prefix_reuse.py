"""Prefix reuse: prompt tokens llama.cpp actually evaluates, and wall time per turn.

    python bench/prefix_reuse.py --label after --turns 20
    python bench/prefix_reuse.py --label after_exact --turns 20 +llm.kv_reuse=exact
    python bench/prefix_reuse.py --label after_off --turns 20 +llm.kv_reuse=off +llm.n_batch=64
    PYTHONPATH=/path/to/old/checkout python bench/prefix_reuse.py --label before --turns 20   # the old commit
    python bench/prefix_reuse.py --compare before,after,after_exact,after_off

Runs the paper's system (table2_bm25_feedback) and self-ask (fig4_self_ask) on the same seeded DSTC11 dev turns
with the embedded model, LLM cache off, one process, and reads llama.cpp's own counters (prompt tokens evaluated
and their time, `llama_perf_context`) around every turn, so it measures any checkout of augmenter. `--compare`
prints, per system, the change in evaluated tokens and time per turn between labels, and whether the responses
are identical (greedy decoding). Results go to bench/results/prefix_reuse.json with the commands.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "prefix_reuse.json"
SYSTEMS = ("table2_bm25_feedback", "fig4_self_ask")


def _turns(data_root: str, n: int, seed: int, knowledge):
    """The eval sample's first `n` turns as (q, history), through whichever loader this checkout has."""
    split = Path(data_root) / "dstc11-track5" / "dev"
    try:
        from augmenter.tasks.dstc11 import load_turns

        return [(t.q, t.history) for t in load_turns(split, knowledge, True, n, seed)]
    except ImportError:  # an older checkout
        from augmenter.tasks.dstc11 import load_instances

        return [(t.q, t.history) for t in load_instances(split, knowledge_seeking_only=True, limit=n, seed=seed)]


def _llama(agent):
    """The llama_cpp.Llama inside the agent's LLM wrappers."""
    todo = [agent.executor.llm]
    while todo:
        llm = todo.pop()
        if getattr(llm, "_llm", None) is not None and hasattr(llm._llm, "_ctx"):
            return llm._llm
        todo += [x for x in (getattr(llm, "llm", None), *getattr(llm, "backends", ())) if x is not None]
    raise SystemExit("no llama.cpp model found: run with the embedded model (llm=local)")


def _perf(llama) -> tuple[int, float]:
    import llama_cpp

    data = llama_cpp.llama_perf_context(llama._ctx.ctx)
    return int(data.n_p_eval), float(data.t_p_eval_ms) / 1000.0


def measure(system: str, args, overrides: list[str]) -> dict:
    from augmenter.config import build_agent, compose, instantiate

    cfg = compose(
        "eval", [f"experiment={system}", "llm_cache.enabled=false", f"data_root={args.data_root}", *overrides]
    )
    agent = build_agent(cfg)
    turns = _turns(args.data_root, args.turns, args.seed, instantiate(cfg.knowledge, "knowledge"))
    agent.respond("Hello, is this the hotel desk?")  # load the model and warm the cache, untimed
    rows = []
    for q, history in turns:
        llama = _llama(agent)
        tokens, seconds = _perf(llama)
        start = time.perf_counter()
        mem = agent.respond(q, history)
        wall = time.perf_counter() - start
        after_tokens, after_seconds = _perf(llama)
        rows.append(
            {
                "wall_seconds": round(wall, 3),
                "prompt_tokens": mem.prompt_tokens,
                "prompt_tokens_evaluated": after_tokens - tokens,
                "prompt_eval_seconds": round(after_seconds - seconds, 3),
                "llm_calls": mem.llm_calls,
                "response": mem.response,
            }
        )
        print(json.dumps({k: v for k, v in rows[-1].items() if k != "response"}), flush=True)

    def mean(key):
        return round(statistics.mean(r[key] for r in rows), 3)

    return {
        "turns": len(rows),
        "wall_seconds_per_turn": mean("wall_seconds"),
        "prompt_tokens_per_turn": mean("prompt_tokens"),
        "prompt_tokens_evaluated_per_turn": mean("prompt_tokens_evaluated"),
        "prompt_eval_seconds_per_turn": mean("prompt_eval_seconds"),
        "llm_calls_per_turn": mean("llm_calls"),
        "rows": rows,
    }


def compare(results: dict, labels: list[str]) -> dict:
    base, out = labels[0], {}
    for label in labels[1:]:
        for system in SYSTEMS:
            a, b = results["runs"].get(base, {}).get(system), results["runs"].get(label, {}).get(system)
            if not a or not b:
                continue

            def change(key, a=a, b=b):
                return round(100.0 * (b[key] - a[key]) / a[key], 1) if a[key] else None

            same = [x["response"] == y["response"] for x, y in zip(a["rows"], b["rows"])]
            out[f"{label} vs {base}: {system}"] = {
                "wall_seconds_per_turn": [a["wall_seconds_per_turn"], b["wall_seconds_per_turn"]],
                "wall_change_percent": change("wall_seconds_per_turn"),
                "prompt_tokens_evaluated_per_turn": [
                    a["prompt_tokens_evaluated_per_turn"],
                    b["prompt_tokens_evaluated_per_turn"],
                ],
                "evaluated_change_percent": change("prompt_tokens_evaluated_per_turn"),
                "prompt_eval_seconds_change_percent": change("prompt_eval_seconds_per_turn"),
                "identical_responses": f"{sum(same)} of {len(same)}",
            }
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--label", help="name of this measurement (e.g. before, after)")
    ap.add_argument("--turns", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--compare", help="labels to compare, the first is the baseline")
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("overrides", nargs="*", help="Hydra overrides for every system, e.g. +llm.kv_reuse=exact")
    args = ap.parse_args()
    results = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {"runs": {}, "commands": {}}
    if args.compare:
        results["comparison"] = compare(results, args.compare.split(","))
        print(json.dumps(results["comparison"], indent=1))
    else:
        import augmenter

        runs = results["runs"].setdefault(args.label, {})
        results["commands"][args.label] = {
            "command": ("PYTHONPATH=<old checkout> " if "PYTHONPATH" in os.environ else "")
            + "python bench/prefix_reuse.py "
            + " ".join(shlex.quote(a) for a in sys.argv[1:]),
            "augmenter": str(Path(augmenter.__file__).parent),
        }
        for system in args.systems.split(","):
            runs[system] = measure(system, args, args.overrides)
            summary = {k: v for k, v in runs[system].items() if k != "rows"}
            print(system, json.dumps(summary), flush=True)
            OUT.parent.mkdir(parents=True, exist_ok=True)
            OUT.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    OUT.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
