"""DSTC7 Track 2 (news chat, the paper's Table 1), small: the instances that have both a Reddit conversation
context (`cmr_processed/{test,dev}.full`) and a grounding fact (`human_eval/dstc7-task2-context.tsv`), with
the human-eval multi-reference gold responses (158 of the 162 have at least one, and only those can be
scored). The fact is the turn's knowledge."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from augmenter.errors import InputError
from augmenter.knowledge.base import KnowledgeBase
from augmenter.memory import Snippet, Utterance
from augmenter.tasks.base import Turn, seeded_sample


def _tsv(path: Path) -> list[list[str]]:
    csv.field_size_limit(sys.maxsize)
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            return list(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    except FileNotFoundError:
        raise InputError(f"DSTC7 file not found: {path}") from None


def _turns(context: str) -> list[str]:
    turns = [t.strip() for t in context.split(" EOS ")]
    return [t for t in turns if t and t != "START"]


def load_turns(root: str | Path, limit: int | None = None, seed: int | None = None) -> list[Turn]:
    """The turns with context and fact (their `gold`), in file order; optionally a seeded sample of `limit`."""
    root = Path(root)
    facts = {row[0]: row[2] for row in _tsv(root / "human_eval" / "dstc7-task2-context.tsv")[1:] if len(row) >= 3}
    refs = {
        row[0]: [r.strip() for r in row[1:] if r.strip()]
        for row in _tsv(root / "human_eval" / "dstc7-task2-gold_responses.tsv")[1:]
    }
    out = []
    for split in ("test", "dev"):
        for row in _tsv(root / "cmr_processed" / f"{split}.full"):
            if len(row) < 6 or row[0] not in facts or not refs.get(row[0]):  # 4 of the 162 have no reference
                continue
            turns = _turns(row[5])
            if not turns:
                continue
            # the last context turn is the one to answer; speakers alternate backwards from it
            history = [
                Utterance(speaker="U" if (len(turns) - 1 - i) % 2 == 0 else "S", text=t)
                for i, t in enumerate(turns[:-1])
            ]
            fact = Snippet(id=f"dstc7:{row[0][:12]}", text=facts[row[0]], doc_type="fact")
            out.append(Turn(row[0], turns[-1], history, refs[row[0]], [fact]))
    if not out:
        raise InputError(f"{root}: no DSTC7 instance has both a context and a fact")
    return seeded_sample(out, limit, seed)


def load_facts(root: str | Path) -> KnowledgeBase:
    """The grounding facts as a knowledge base (for retrieval over them instead of giving each turn its own)."""
    return KnowledgeBase([x.gold[0] for x in load_turns(root)], [], source=str(root))
