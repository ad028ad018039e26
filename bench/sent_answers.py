"""End to end on the 200 scored DSTC11 dev turns: per system, KF1, LLM calls, seconds per turn,
outcomes, and the share of sent answers judged flawed twice: by the shipped check against the whole knowledge of the
entities involved, and (when a labelled round exists) by blind labellers.

    python bench/sent_answers.py [--runs runs/e2e] [--labels dstc11-dev-e2e]   # -> bench/results/sent_answers.json
    python bench/sent_answers.py --runs runs/e2e-v2 --labels dstc11-dev-e2e,dstc11-dev-default-v2 --tag default-v2

The check: each sent answer's claims (its sentences that state something) judged as the grounded utility judges a
claim (fast verifier, containment, the balance of reviews), against every FAQ and review sentence of the gold and
linked entities; an answer is flagged when a claim is not supported or the answers check fails it. The labels: the
round's settled labels of the answers of each system (bench/claim_set.py), found by the answer's text on the item's
turn (a run that was not on the sheets is labelled where it sent an answer that was; later rounds, comma-separated,
label answers the first did not show, on the first round's turns), with the share about another place than the one
asked (`wrong_entity`), and of the labelled flawed answers, the share the check flags (the safety net, target >=
90%), beside the share of the labelled clean ones it flags.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from tqdm import tqdm

from augmenter.audit.labels import read_labels
from augmenter.config import build_agent, compose
from augmenter.eval.records import failure, read_records
from augmenter.memory import EntityMention, Utterance, WorkingMemory
from augmenter.storage import write_atomic

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from claim_set import LABELS, load_items, wilson

SAMPLE = "dstc11-dev-n200-seed0"


def runs(root: Path, sample: str = SAMPLE) -> dict[str, Path]:
    """system-model -> records.jsonl of every run under root/<model>/<sample>/<system>/."""
    return {
        f"{path.parent.name}-{path.parents[2].name}": path for path in sorted(root.glob(f"*/{sample}/*/records.jsonl"))
    }


def _normal(text: str) -> str:
    return " ".join(text.split())


def checked(records: list[dict], agent) -> list[bool]:
    """Whether the shipped check flags each sent answer against the whole knowledge of its entities."""
    utility = agent.executor.utility
    kb = agent.executor.consolidator.kb
    flags = []
    for r in tqdm(records, desc="check", unit="answer", leave=False):
        memory = r.get("memory") or {}
        entities = {(m["domain"], m["entity_id"]) for m in memory.get("entities", [])}
        entities |= {tuple(i.split(":")[:2]) for i in r.get("gold_ids", [])}
        evidence = [kb.snippets[i] for d, e in entities for i in kb.rows_of(d, int(e) if str(e).isdigit() else e)]
        mem = WorkingMemory(
            q=memory.get("q", ""),
            h_q=[Utterance(**u) for u in memory.get("h_q", [])],
            e=evidence,
            consolidated=True,
            given=evidence,
            entities=[EntityMention(**m) for m in memory.get("entities", [])],
        )
        flags.append(not utility(mem, r["response"]).passed)
    return flags


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", default=str(ROOT / "runs" / "e2e"))
    ap.add_argument("--sample", default=SAMPLE, help="the runs' sample folder")
    ap.add_argument("--labels", default="dstc11-dev-e2e", help="the labelled rounds of these answers (if any)")
    ap.add_argument("--tag", help="write sent_answers-TAG.json")
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    args = ap.parse_args()
    agent = build_agent(compose("chat", ["task=dstc11", f"data_root={args.data_root}", "llm=fake", "utility=grounded"]))
    rounds = [LABELS / name for name in args.labels.split(",") if (LABELS / name / "settled.jsonl").exists()]
    turns = {item.dialogue_id for item in load_items(rounds[0])} if rounds else set()
    label_of = {}  # (turn, the answer's text) -> its settled label, the first round's first
    for directory in rounds:
        settled = read_labels(directory / "settled.jsonl")
        for item in load_items(directory):
            for a in item.answers:
                label_of.setdefault((item.dialogue_id, _normal(a.text)), settled[(item.item, a.rid)])
    out = {}
    for system, path in runs(Path(args.runs), args.sample).items():
        records = read_records(path)
        ok = [r for r in records if failure(r) is None]
        summary_path = path.parent / "summary.json"
        summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
        flags = checked(ok, agent)
        flag_of = {r["dialogue_id"]: f for r, f in zip(ok, flags)}
        row = {
            "turns": len(records),
            "answered_ok": len(ok),
            "KF1": round(summary.get("metrics", {}).get("KF1", float("nan")), 2),
            "llm_calls_per_turn": round(statistics.mean(r["cost"].get("llm_calls", 0) for r in ok), 2),
            "seconds_per_turn_median": round(statistics.median(r["cost"].get("turn_seconds") or 0.0 for r in ok), 2),
            "outcomes": {
                o: sum(r.get("outcome") == o for r in ok) for o in ("answered", "quoted", "partial", "abstained")
            },
            "flagged_by_the_check_percent": round(100 * sum(flags) / len(flags), 1),
        }
        sent = {r["dialogue_id"]: _normal(r["response"]) for r in ok}
        mine = [(turn, label_of[(turn, sent[turn])]) for turn in sorted(turns) if (turn, sent.get(turn)) in label_of]
        if mine:
            labels = [label for _, label in mine]
            n = len(labels)
            for name, test in (
                ("flawed", lambda x: x.flawed),
                ("contradicted", lambda x: x.contradicted),
                ("misses_question", lambda x: x.misses_the_question),
                ("wrong_place", lambda x: "wrong_entity" in x.flags),
                ("idk", lambda x: "idk" in x.flags),
            ):
                k = sum(test(x) for x in labels)
                row[f"labelled_{name}_percent"] = round(100 * k / n, 1)
                row[f"labelled_{name}_ci95"] = wilson(k, n)
            row["labelled_answers"] = n
            flagged = [(flag_of[turn], label.flawed) for turn, label in mine]
            bad = [f for f, flawed in flagged if flawed]
            good = [f for f, flawed in flagged if not flawed]
            row["check_flags_labelled_flawed_percent"] = round(100 * sum(bad) / len(bad), 1) if bad else None
            row["check_flags_labelled_clean_percent"] = round(100 * sum(good) / len(good), 1) if good else None
        out[system] = row
    result = {"command": "python bench/sent_answers.py " + " ".join(sys.argv[1:]), "systems": out}
    name = "sent_answers" + ("" if args.sample == SAMPLE else f"-{args.sample}") + (f"-{args.tag}" if args.tag else "")
    write_atomic(ROOT / "bench" / "results" / f"{name}.json", json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
