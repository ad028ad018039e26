"""Recall@k of DSTC11's gold knowledge snippets for the consolidator's retrieval settings.

    python bench/retrieval_recall.py --turns 400
    python bench/retrieval_recall.py --sample 200 --seed 0   # the turns `augmenter eval` scores by default

Over the first `--turns` knowledge-seeking DSTC11 dev instances (or a seeded sample of them): how often the linker
finds a gold entity, and the mean share of gold snippets in the top k, with and without entity focus and history
in the query.
Writes bench/results/retrieval_recall.json with the command.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from augmenter.knowledge import BM25sRetriever, KnowledgeConsolidator, load_dstc11
from augmenter.tasks.dstc11 import load_turns

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--turns", type=int, default=400)
    ap.add_argument("--sample", type=int, default=None, help="a seeded sample of this many turns instead")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "retrieval_recall.json"))
    args = ap.parse_args()
    root = Path(args.data_root) / "dstc11-track5"
    kb = load_dstc11(root / "knowledge.json", root / "entity_mapping.json")
    if args.sample:
        instances = load_turns(root / "dev", knowledge_seeking_only=True, limit=args.sample, seed=args.seed)
    else:
        instances = load_turns(root / "dev", knowledge_seeking_only=True)[: args.turns]
    rows = []
    retriever = BM25sRetriever()
    for focus in (True, False):
        for history_turns in (0, 1, 2):
            kc = KnowledgeConsolidator(
                kb, retriever, k=args.k, history_turns=history_turns, focus_entities=focus, opinions=False
            )
            recall = linked = 0.0
            for inst in instances:
                entities = kc.link(inst.q, inst.history)
                if focus and history_turns:  # the query with history text even when an entity is linked
                    _, evidence = kc.retrieve(kc.query(inst.q, inst.history), [], entities)
                else:
                    _, evidence = kc.retrieve(inst.q, inst.history, entities)
                gold = {s.id for s in kb.gold(inst.labels)}
                recall += len(gold & {s.id for s in evidence}) / max(1, len(gold))
                linked += any(
                    (m.domain, m.entity_id) == (r["domain"], r["entity_id"]) for m in entities for r in inst.labels
                )
            rows.append(
                {
                    "focus_entities": focus,
                    "history_turns": history_turns,
                    f"recall@{args.k}": recall / len(instances),
                    "gold_entity_linked": linked / len(instances),
                }
            )
    result = {
        "command": "python bench/retrieval_recall.py " + " ".join(sys.argv[1:]),
        "turns": len(instances),
        "rows": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
