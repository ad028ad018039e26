"""DSTC7 Track 2 (news chat, the paper's Table 1), small: the instances that have both a Reddit conversation
context (`cmr_processed/{test,dev}.full`) and a grounding fact (`human_eval/dstc7-task2-context.tsv`), with
the human-eval multi-reference gold responses (158 of the 162 have at least one, and only those can be
scored). The fact is the turn's knowledge."""

from __future__ import annotations

import csv
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from augmenter.errors import InputError
from augmenter.knowledge.base import KnowledgeBase
from augmenter.memory import Snippet, Utterance


@dataclass
class NewsInstance:
    instance_id: str
    history: list[Utterance]
    q: str
    fact: Snippet
    references: list[str]


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


def load_instances(root: str | Path, limit: Optional[int] = None, seed: Optional[int] = None) -> list[NewsInstance]:
    """The instances with context and fact, in file order; optionally a seeded sample of `limit`."""
    root = Path(root)
    facts = {row[0]: row[2] for row in _tsv(root / "human_eval" / "dstc7-task2-context.tsv")[1:] if len(row) >= 3}
    refs = {row[0]: [r.strip() for r in row[1:] if r.strip()]
            for row in _tsv(root / "human_eval" / "dstc7-task2-gold_responses.tsv")[1:]}
    out = []
    for split in ("test", "dev"):
        for row in _tsv(root / "cmr_processed" / f"{split}.full"):
            if len(row) < 6 or row[0] not in facts or not refs.get(row[0]):  # 4 of the 162 have no reference
                continue
            turns = _turns(row[5])
            if not turns:
                continue
            # the last context turn is the one to answer; speakers alternate backwards from it
            history = [Utterance(speaker="U" if (len(turns) - 1 - i) % 2 == 0 else "S", text=t)
                       for i, t in enumerate(turns[:-1])]
            fact = Snippet(id=f"dstc7:{row[0][:12]}", text=facts[row[0]], doc_type="fact")
            out.append(NewsInstance(row[0], history, turns[-1], fact, refs[row[0]]))
    if not out:
        raise InputError(f"{root}: no DSTC7 instance has both a context and a fact")
    if limit is not None and limit < len(out):
        keep = set(random.Random(seed).sample(range(len(out)), limit))
        out = [x for i, x in enumerate(out) if i in keep]
    return out


def load_facts(root: str | Path) -> KnowledgeBase:
    """The grounding facts as a knowledge base (for retrieval over them instead of giving each turn its own)."""
    return KnowledgeBase([x.fact for x in load_instances(root)], [], source=str(root))
