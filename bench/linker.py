"""The entity linker against DSTC11's gold entities, with exact names only and with misspelt names read too.

    python bench/linker.py [--baseline 6147083]   # the linker of that commit beside today's

Over every knowledge-seeking DSTC11 dev turn whose gold knowledge names entities: whether the entities the linker
finds (in q, else in the latest history turn that names one) are exactly the gold ones, hold them and others, miss
them all for others ("wrong"), or are none; each turn whose links today's default linker changes from the baseline's
(`--baseline`: the linker module of an earlier commit, read with git), with its question and gold entities; and the
linker's milliseconds per turn. Writes bench/results/linker.json with the command.

The misspelling rules (one slip in a word of five letters or more, seven for a name of one word, letters only) were
set while reading this split's linker output: dev is the only DSTC11 split here, so the held-back turns judge them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import types
from collections import Counter
from pathlib import Path

from augmenter.knowledge import EntityLinker, load_dstc11
from augmenter.storage import write_atomic
from augmenter.tasks.dstc11 import load_turns

ROOT = Path(__file__).resolve().parents[1]


def outcome(gold: set, linked: set) -> str:
    if linked == gold:
        return "exact"
    if gold & linked:
        return "gold and others" if gold <= linked else "some gold"
    return "wrong" if linked else "none"


def linker_of(commit: str):
    """The EntityLinker class of augmenter/knowledge/linker.py as it was at `commit`."""
    source = subprocess.run(
        ["git", "show", f"{commit}:augmenter/knowledge/linker.py"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    module = types.ModuleType(f"linker_{commit}")
    exec(compile(source, f"{commit}:augmenter/knowledge/linker.py", "exec"), module.__dict__)
    return module.EntityLinker


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--baseline", help="a commit whose linker to measure beside today's (none: today's, exact names)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "linker.json"))
    args = ap.parse_args()
    root = Path(args.data_root) / "dstc11-track5"
    kb = load_dstc11(root / "knowledge.json", root / "entity_mapping.json")
    turns = [t for t in load_turns(root / "dev", kb, knowledge_seeking_only=True) if t.labels]
    names = {(e.domain, str(e.entity_id)): e.name for e in kb.entities}
    result = {"command": "python " + " ".join(sys.argv), "split": "dstc11-track5/dev", "turns": len(turns)}
    linkers = {
        "exact names": lambda: EntityLinker(kb.entities, misspelt_names=False),
        "misspelt names (the default)": lambda: EntityLinker(kb.entities),
    }
    if args.baseline:
        linkers = {f"baseline ({args.baseline})": lambda: linker_of(args.baseline)(kb.entities), **linkers}
    links = {}
    for key, make in linkers.items():
        linker, counts, seen, started = make(), Counter(), {}, time.perf_counter()
        for t in turns:
            linked = {(m.domain, str(m.entity_id)) for m in linker.link(t.q, t.history)}
            counts[outcome({(r["domain"], str(r["entity_id"])) for r in t.labels}, linked)] += 1
            seen[t.id] = linked
        ms = 1000 * (time.perf_counter() - started) / len(turns)
        result[key] = {
            **{k: counts[k] for k in ("exact", "gold and others", "some gold", "wrong", "none")},
            "exact share": round(counts["exact"] / len(turns), 4),
            "ms per turn": round(ms, 3),
        }
        links[key] = seen
    changed = []
    first, last = list(links.values())[0], links["misspelt names (the default)"]
    for t in turns:
        before, after = first[t.id], last[t.id]
        if before != after:
            gold = {(r["domain"], str(r["entity_id"])) for r in t.labels}
            changed.append(
                {
                    "id": t.id,
                    "q": t.q,
                    "gold": sorted(names[g] for g in gold),
                    "before": sorted(names[e] for e in before),
                    "after": sorted(names[e] for e in after),
                    "from": outcome(gold, before),
                    "to": outcome(gold, after),
                }
            )
    result["changed"] = {
        "from": list(links)[0],
        "to": "misspelt names (the default)",
        "turns": len(changed),
        "outcomes": dict(Counter(f"{c['from']} -> {c['to']}" for c in changed)),
        "each": changed,
    }
    write_atomic(Path(args.out), json.dumps(result, indent=1) + "\n")
    print(
        json.dumps(
            {k: v for k, v in result.items() if k != "changed"} | {"changed": result["changed"]["outcomes"]}, indent=1
        )
    )


if __name__ == "__main__":
    main()
