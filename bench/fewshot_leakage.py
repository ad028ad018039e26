"""How often answers copy the response prompt's few-shot examples, per prompt.

    python bench/fewshot_leakage.py --prompts assistant,customer_service --limit 50 [hydra overrides, e.g. llm=fake]

For each prompt, the agent (policy always_use: BM25 evidence, no feedback) answers
(a) `--limit` seeded DSTC11 dev knowledge-seeking turns (the sample `augmenter eval` draws with eval.limit and
    eval.seed), with their dialogue history, and
(b) the second demo's scripted conversation (DEMO2_SCRIPT on the demo2 knowledge base: a bakery, a bike repair
    shop, a dental clinic, a library, a museum; 4 of its 12 questions have no answer in the knowledge).
The executor's few-shot guard is on unless `executor.fewshot_guard=false` is passed; each entry also counts the
turns where the guard dropped a copied sentence from a candidate (`guard_fired_turns`, with examples).
A turn leaks when its response holds a few-shot entity or a 5-word few-shot phrase that its own query, history
and evidence do not (`augmenter.eval.leakage`; in the demo2 conversation the history's assistant turns are the
agent's own replies and do not count as the turn's text). Results go to bench/results/fewshot_leakage.json, one
entry per prompt (a later run with other prompts keeps the entries it does not redo): turns, leak share, up to 10
example leaks, the demo2 answers, and the exact command. The LLM cache is on (llm_cache.enabled=false: off), so a
rerun costs nothing and customer_service's DSTC11 turns can reuse what `augmenter eval experiment=table2_bm25`
asked; with llm=fake turn it off (the fake's cache key does not include its scripted replies).
"""

from __future__ import annotations

import argparse
import json
import platform
import shlex
import sys
import time
from pathlib import Path

from omegaconf import OmegaConf
from tqdm import tqdm

from augmenter.agent import Session
from augmenter.config import build_agent, build_llm, compose, instantiate
from augmenter.eval.leakage import allowed_text, fewshot_leaks, leak_rate
from augmenter.eval.tasks import build_task
from augmenter.knowledge.demo import DEMO2_TURNS
from augmenter.prompts import PromptTemplate
from augmenter.storage import write_atomic

ROOT = Path(__file__).resolve().parents[1]


def _part(turns: list[dict], prompt) -> dict:
    share, examples = leak_rate([(t["response"], t["allowed"]) for t in turns], prompt)
    guarded = [t for t in turns if t["dropped"]]
    return {
        "turns": len(turns),
        "leaking_turns": sum(1 for t in turns if t["leaks"]),
        "leak_share": share,
        "examples": examples,
        "guard_fired_turns": len(guarded),
        "guard_examples": [{"raw": t["raw"], "dropped": t["dropped"], "response": t["response"]} for t in guarded[:10]],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--prompts",
        default="assistant,customer_service",
        help="comma-separated response prompts (packaged names or YAML paths)",
    )
    ap.add_argument("--limit", type=int, default=50, help="DSTC11 dev knowledge-seeking turns (seeded sample)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--no-demo2", action="store_true", help="skip the demo2 conversation")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "fewshot_leakage.json"))
    ap.add_argument("overrides", nargs="*", help="Hydra overrides of the chat config, e.g. llm=fake")
    args = ap.parse_args()
    command = "python bench/fewshot_leakage.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    prompts = [p.strip() for p in args.prompts.split(",") if p.strip()]
    base = ["policy=always_use", "llm_cache.enabled=true", f"data_root={args.data_root}"]
    # the DSTC11 sample: exactly the turns `augmenter eval eval.limit=N eval.seed=S` scores
    eval_cfg = compose(
        "eval", [f"data_root={args.data_root}", "task=dstc11", f"eval.limit={args.limit}", f"eval.seed={args.seed}"]
    )
    dstc11_cfg = compose("chat", [*base, "task=dstc11", *args.overrides])
    knowledge = instantiate(dstc11_cfg.knowledge, "knowledge")
    items = (
        build_task("dstc11", args.data_root, str(eval_cfg.eval.split), knowledge).turns(args.limit, args.seed)
        if args.limit > 0
        else []
    )
    llm = build_llm(dstc11_cfg)  # one model for every prompt and both parts

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    results = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    results.setdefault("prompts", {})
    results["machine"] = f"{platform.machine()}, {platform.processor() or 'cpu'}, python {platform.python_version()}"

    total = len(prompts) * (len(items) + (0 if args.no_demo2 else len(DEMO2_TURNS)))
    bar = tqdm(total=total, unit="turn", dynamic_ncols=True)
    for name in prompts:
        template = PromptTemplate.load(name)
        start = time.perf_counter()
        entry = {
            "command": command,
            "llm": OmegaConf.to_container(dstc11_cfg.llm, resolve=True),
            "policy": "always_use",
            "dstc11_sample": {"split": str(eval_cfg.eval.split), "limit": args.limit, "seed": args.seed},
        }

        def turn(mem, system_turns: bool = True, template: PromptTemplate = template) -> dict:
            allowed = allowed_text(mem, system_turns)
            response = mem.response or ""
            calls = [r for r in mem.trace if r.outputs.get("fewshot_leaks")]  # the executor's guard dropped a copy
            return {
                "q": mem.q,
                "response": response,
                "allowed": allowed,
                "leaks": fewshot_leaks(response, template, allowed),
                "dropped": [leak for r in calls for leak in r.outputs["fewshot_leaks"]],
                "raw": calls[0].outputs.get("raw", "") if calls else "",
            }

        dstc11_turns = []
        if items:
            bar.set_description(f"{name} dstc11")
            agent = build_agent(
                compose("chat", [*base, "task=dstc11", f"prompt.response={name}", *args.overrides]), llm=llm
            )
            for item in items:
                dstc11_turns.append(turn(agent.respond(item.q, item.history)))
                bar.set_postfix(leaking=sum(1 for t in dstc11_turns if t["leaks"]))
                bar.update()
            entry["dstc11"] = _part(dstc11_turns, template)
        demo2_turns = []
        if not args.no_demo2:
            bar.set_description(f"{name} demo2")
            session = Session(
                build_agent(compose("chat", [*base, "task=demo2", f"prompt.response={name}", *args.overrides]), llm=llm)
            )
            for question, kind in DEMO2_TURNS:
                # the session's earlier replies are the agent's own, not the turn's text: a leak it repeats counts
                demo2_turns.append({**turn(session.say(question), system_turns=False), "kind": kind})
                bar.update()
            entry["demo2"] = _part(demo2_turns, template)
            entry["demo2"]["answers"] = [
                {"q": t["q"], "kind": t["kind"], "response": t["response"], "leaks": t["leaks"]} for t in demo2_turns
            ]
        entry["all"] = _part(dstc11_turns + demo2_turns, template)
        entry["wall_s"] = round(time.perf_counter() - start, 2)
        results["prompts"][name] = entry
        # after every prompt, so that a killed run keeps the prompts it finished
        write_atomic(out, json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    bar.close()
    print("| prompt | DSTC11 turns | DSTC11 leak share | demo2 turns | demo2 leak share |\n|---|---|---|---|---|")
    for name in prompts:
        entry = results["prompts"][name]

        def cell(part, key, entry=entry):
            if part not in entry:
                return "-"
            value = entry[part][key]
            return f"{value:.2f}" if key == "leak_share" and value is not None else str(value)

        print(
            f"| {name} | {cell('dstc11', 'turns')} | {cell('dstc11', 'leak_share')} | {cell('demo2', 'turns')} | "
            f"{cell('demo2', 'leak_share')} |"
        )
    print(f"written to {out}")


if __name__ == "__main__":
    main()
