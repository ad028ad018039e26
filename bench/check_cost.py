"""What checking costs: seconds per turn of the checked system against the same model answering
unchecked from the same evidence, and seconds per claim of each verifier, with the embedded model on 2 cores.

    python bench/check_cost.py turns --mode checked   [--turns 30] [overrides]   # one process per mode:
    python bench/check_cost.py turns --mode unchecked [--turns 30] [overrides]   #   each its own model and caches
    python bench/check_cost.py verifiers [--claims 60]                            # after the checked run
    python bench/check_cost.py report                                             # -> bench/results/check_cost.json

`checked` is experiment grounded_bm25 as it ships (the opinion judge, one draft, the claims and answers checks, the
reply in the knowledge's own words when the draft fails); `unchecked` is the same configuration with a policy that
consolidates, drafts and sends (no check). Both run the same seeded DSTC11 dev turns (apart from the 200 scored ones
and the 60 labelled ones), the LLM cache off: every figure is a real model call. `verifiers` times each verifier
(fast, llm, combined) on the claims of the checked run's drafts, each with the evidence the claims utility gives it.
Per-turn rows are kept in runs/bench/check_cost/ (resumable); the summary quotes medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from tqdm import tqdm

from augmenter.config import build_agent, compose
from augmenter.memory import Action
from augmenter.storage import write_atomic

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "runs" / "bench" / "check_cost"
EXPERIMENT = [
    "task=dstc11",
    "prompt=assistant",
    "utility=grounded",
    "verifier=fast",
    "policy=llm_augmenter",
    "consolidator.opinions.stance=llm",
    "consolidator.opinions.min_p=0.15",
    "consolidator.opinions.max_sentences=8",
    "agent.max_llm_calls=1",
    "llm_cache.enabled=false",
]


def unchecked(memory):
    """Consolidate, draft, send: the same evidence and prompt, no check."""
    if not memory.consolidated:
        return Action.CONSOLIDATE_KNOWLEDGE
    return Action.SEND if memory.has_candidate else Action.CALL_LLM


def sample(cfg, turns: int):
    from omegaconf import OmegaConf

    from augmenter.config import build_task
    from augmenter.eval.runner import sample_turns

    ev = OmegaConf.create(
        {
            "limit": turns,
            "seed": 3,
            "exclude": [{"limit": 200, "seed": 0}, {"limit": 60, "seed": 1, "exclude": {"limit": 200, "seed": 0}}],
        }
    )
    with_eval = compose("eval", [f"data_root={cfg.data_root}", "llm=fake"])
    return sample_turns(build_task(with_eval), ev)


def run_turns(args) -> None:
    plain = ["executor.unsupported=best"] if args.mode == "unchecked" else []  # the draft is sent as it is
    cfg = compose("chat", [f"data_root={args.data_root}", *EXPERIMENT, *plain, *args.overrides])
    start = time.perf_counter()
    agent = build_agent(cfg, policy=unchecked if args.mode == "unchecked" else None)
    load = time.perf_counter() - start
    out = RUNS / f"{args.mode}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    done = {json.loads(line)["turn"] for line in out.read_text().splitlines()} if out.exists() else set()
    turns = sample(cfg, args.turns)
    agent.respond("Is there free parking at the Acorn Guest House?")  # warm-up: encoder and model loaded, not timed
    with open(out, "a", encoding="utf-8") as sink:
        for turn in tqdm([t for t in turns if t.id not in done], desc=args.mode, unit="turn"):
            start = time.perf_counter()
            mem = agent.respond(turn.q, turn.history)
            seconds = time.perf_counter() - start
            by_action: dict[str, float] = {}
            for record in mem.trace:
                by_action[record.action.value] = by_action.get(record.action.value, 0.0) + record.seconds
            claims = [c.claim for checks in mem.checks[:1] for c in checks]
            sink.write(
                json.dumps(
                    {
                        "turn": turn.id,
                        "seconds": seconds,
                        "by_action": by_action,
                        "llm_calls": mem.llm_calls,
                        "outcome": mem.outcome,
                        "claims": claims,
                        "q": turn.q,
                        "history": [u.model_dump() for u in turn.history],
                        "model_load_seconds": load,
                    }
                )
                + "\n"
            )
            sink.flush()


def time_verifiers(args) -> None:
    from augmenter.memory import Utterance, WorkingMemory
    from augmenter.verification import CombinedVerifier, FastVerifier, LLMVerifier

    rows = [json.loads(line) for line in (RUNS / "checked.jsonl").read_text().splitlines()]
    cfg = compose("chat", [f"data_root={args.data_root}", *EXPERIMENT])
    agent = build_agent(cfg)
    utility = agent.executor.utility.base
    llm, prompts = agent.executor.llm, agent.executor.prompts
    verifiers = {"fast": FastVerifier(), "llm": LLMVerifier(llm, prompts), "combined": CombinedVerifier(llm, prompts)}
    cases = []
    for row in rows:
        if not row["claims"]:
            continue
        mem = WorkingMemory(q=row["q"], h_q=[Utterance(**u) for u in row["history"]])
        agent.executor.observe(mem)
        _, mem.e = agent.executor.consolidator.search(mem.q, mem.h_q, mem.entities)
        for claim in row["claims"]:
            cases.append((claim, [u.text for u, _ in utility.finder.find(claim, mem)], mem.q))
        if len(cases) >= args.claims:
            break
    cases = cases[: args.claims]
    verifiers["fast"].judge(*cases[0])  # the encoder loaded and warmed up
    llm.complete([{"role": "user", "content": "Hello"}])  # the model loaded
    out = {}
    for name, verifier in verifiers.items():
        times = []
        for claim, evidence, context in tqdm(cases, desc=name, unit="claim"):
            start = time.perf_counter()
            verifier.judge(claim, evidence, context)
            times.append(time.perf_counter() - start)
        out[name] = {
            "claims": len(times),
            "ms_per_claim_median": round(1000 * statistics.median(times), 1),
            "ms_per_claim_mean": round(1000 * statistics.mean(times), 1),
        }
    write_atomic(RUNS / "verifiers.json", json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


def report(_args) -> None:
    rows = {
        m: [json.loads(line) for line in (RUNS / f"{m}.jsonl").read_text().splitlines()]
        for m in ("checked", "unchecked")
    }
    common = set.intersection(*({r["turn"] for r in rs} for rs in rows.values()))

    def med(xs):
        return round(statistics.median(xs), 2) if xs else None

    summary = {}
    for mode, rs in rows.items():
        rs = [r for r in rs if r["turn"] in common]
        actions = sorted({a for r in rs for a in r["by_action"]})
        summary[mode] = {
            "turns": len(rs),
            "seconds_per_turn_median": med([r["seconds"] for r in rs]),
            "seconds_per_turn_mean": round(statistics.mean(r["seconds"] for r in rs), 2),
            "llm_calls_mean": round(statistics.mean(r["llm_calls"] for r in rs), 2),
            "seconds_by_action_median": {a: med([r["by_action"].get(a, 0.0) for r in rs]) for a in actions},
            "outcomes": {o: sum(r["outcome"] == o for r in rs) for o in sorted({r["outcome"] for r in rs})},
        }
    checked = {r["turn"]: r for r in rows["checked"]}
    ratios = [checked[r["turn"]]["seconds"] / r["seconds"] for r in rows["unchecked"] if r["turn"] in common]
    check_ms = [
        1000 * (r["by_action"].get("verify_utility", 0.0)) / max(1, len(r["claims"]))
        for r in rows["checked"]
        if r["claims"]
    ]
    summary["checked_over_unchecked_median_ratio"] = round(statistics.median(ratios), 3)
    summary["check_ms_per_claim_median"] = round(statistics.median(check_ms), 1) if check_ms else None
    verifiers = RUNS / "verifiers.json"
    if verifiers.exists():
        summary["verifiers"] = json.loads(verifiers.read_text())
    summary["commands"] = [f"python bench/check_cost.py turns --mode {m}" for m in ("checked", "unchecked")] + [
        "python bench/check_cost.py verifiers",
        "python bench/check_cost.py report",
    ]
    write_atomic(ROOT / "bench" / "results" / "check_cost.json", json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", choices=("turns", "verifiers", "report"))
    ap.add_argument("--mode", choices=("checked", "unchecked"), default="checked")
    ap.add_argument("--turns", type=int, default=30)
    ap.add_argument("--claims", type=int, default=60)
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    {"turns": run_turns, "verifiers": time_verifiers, "report": report}[args.step](args)


if __name__ == "__main__":
    sys.exit(main())
