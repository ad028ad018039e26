"""Labelling sheets from eval runs: one item per turn that every run answered, its answers from all runs shuffled
(seeded) under neutral names R1, R2, ... (identical answers shown once), with the dialogue, the gold snippets and
the whole knowledge of the entities involved. The key (which system wrote which answer) is written apart and never
shown to a labeller."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from augmenter.audit.folds import dialogue_key
from augmenter.errors import InputError
from augmenter.eval.records import failure, read_records
from augmenter.knowledge.base import KnowledgeBase
from augmenter.storage import read_jsonl, write_atomic
from augmenter.tasks.base import seeded_sample


@dataclass
class Answer:
    rid: str  # R1, R2, ... within its item
    text: str
    systems: list[str] = field(default_factory=list)  # the key: never written to a sheet


@dataclass
class Item:
    item: int
    dialogue_id: str
    dialogue: str  # dialogue_key: items of one dialogue share it (folds)
    q: str
    history: list[dict]  # [{speaker, text}]
    gold_ids: list[str]
    entities: list[list]  # [[domain, entity_id], ...]: whose whole knowledge the sheet shows
    answers: list[Answer]

    def public(self) -> dict:
        """The item without the key (what a labeller may see)."""
        d = asdict(self)
        d["answers"] = [{"rid": a.rid, "text": a.text} for a in self.answers]
        return d


def _entity_of(snippet_id: str) -> tuple | None:
    parts = snippet_id.split(":")
    if len(parts) < 2:
        return None
    return parts[0], int(parts[1]) if parts[1].isdigit() else parts[1]


def _normal(text: str) -> str:
    return " ".join(text.split())


def build_items(
    runs: Mapping[str, str | Path], seed: int = 0, max_entities: int = 4, limit: int | None = None
) -> list[Item]:
    """Items of the turns every run answered (status ok), by dialogue id; `runs`: system name -> records.jsonl;
    `limit`: a seeded sample of that many of those turns (the same for every system). Entities shown: the gold
    knowledge's, then the ones linked in the turn (up to `max_entities`)."""
    if len(runs) < 2:
        raise InputError("a side-by-side sheet needs at least two runs")
    by_system: dict[str, dict[str, dict]] = {}
    for system, path in runs.items():
        records = [r for r in read_records(Path(path)) if failure(r) is None]
        if not records:
            raise InputError(f"{path}: no answered turns (run the eval first)")
        by_system[system] = {r["dialogue_id"]: r for r in records}
    common = set.intersection(*(set(recs) for recs in by_system.values()))
    if not common:
        raise InputError("the runs answered no turn in common: were they run on the same sample?")
    rng = random.Random(seed)
    items = []
    chosen = seeded_sample(sorted(common, key=lambda d: (len(d), d)), limit, seed)
    for n, did in enumerate(chosen, start=1):
        first = next(iter(by_system.values()))[did]
        memory = first.get("memory") or {}
        history = [{"speaker": u["speaker"], "text": u["text"]} for u in memory.get("h_q", [])]
        entities: list[tuple] = []
        for sid in first.get("gold_ids", []):
            ent = _entity_of(sid)
            if ent and ent not in entities:
                entities.append(ent)
        for recs in by_system.values():
            for m in (recs[did].get("memory") or {}).get("entities", []):
                ent = (m.get("domain"), m.get("entity_id"))
                if ent not in entities:
                    entities.append(ent)
        texts: dict[str, list[str]] = {}
        for system in sorted(by_system):
            texts.setdefault(_normal(by_system[system][did]["response"]), []).append(system)
        shuffled = list(texts.items())
        rng.shuffle(shuffled)
        answers = [Answer(f"R{i}", text, systems) for i, (text, systems) in enumerate(shuffled, start=1)]
        items.append(
            Item(
                n,
                did,
                dialogue_key(history, memory.get("q", "")),
                memory.get("q", ""),
                history,
                list(first.get("gold_ids", [])),
                [list(e) for e in entities[:max_entities]],
                answers,
            )
        )
    return items


def entity_knowledge(kb: KnowledgeBase, domain, entity_id) -> str:
    """An entity's whole knowledge as a labeller reads it: its FAQs, then each review whole (its sentences in order)."""
    rows = [kb.snippets[i] for i in kb.rows_of(domain, entity_id)]
    if not rows:
        return f"(no knowledge found for {domain} {entity_id})"
    name = rows[0].entity_name or str(entity_id)
    faqs = [s for s in rows if s.doc_type == "faq"]
    reviews: dict = {}
    for s in rows:
        if s.doc_type == "review":
            reviews.setdefault(s.doc_id, []).append(s)
    lines = [f"### {name} ({domain})", "FAQs:"]
    lines += [f"- {s.text}" for s in faqs] or ["- (none)"]
    lines.append("Reviews:")
    for doc_id, sentences in sorted(reviews.items(), key=lambda kv: kv[0]):
        text = " ".join(s.text for s in sorted(sentences, key=lambda s: s.sent_id or 0))
        lines.append(f"- Review {doc_id}: {text}")
    if not reviews:
        lines.append("- (none)")
    return "\n".join(lines)


def render_item(item: Item, kb: KnowledgeBase) -> str:
    speaker = {"U": "U", "S": "S"}
    lines = [f"## Item {item.item}", "", "Dialogue (the last turns; the user's question last):"]
    lines += [f"{speaker.get(u['speaker'], u['speaker'])}: {u['text']}" for u in item.history[-8:]]
    lines += [f"U: {item.q}", "", "Gold snippets a human answer used:"]
    lines += [f"- {kb.by_id[sid].render()}" for sid in item.gold_ids if sid in kb.by_id] or ["- (none)"]
    lines.append("")
    lines += [entity_knowledge(kb, d, e) + "\n" for d, e in item.entities]
    lines.append("Answers to label:")
    lines += [f"{a.rid}: {a.text}" for a in item.answers]
    return "\n".join(lines) + "\n"


def write_sheets(items: Sequence[Item], kb: KnowledgeBase, out: str | Path, per_sheet: int = 10) -> list[Path]:
    """`sheet-NN.md` (what labellers see), `items.jsonl` (the items without the key) and `key.json` (item -> answer
    -> systems) into `out`; returns the sheet paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    sheets = []
    for start in range(0, len(items), per_sheet):
        chunk = items[start : start + per_sheet]
        path = out / f"sheet-{start // per_sheet + 1:02d}.md"
        head = (
            f"# Labelling sheet {start // per_sheet + 1:02d}: items {chunk[0].item}-{chunk[-1].item}\n\n"
            "Label every answer of every item under the labelling rules (rules.md). Answers are in random "
            "order and come from different systems; identical answers are shown once.\n\n"
        )
        write_atomic(path, head + "\n".join(render_item(item, kb) for item in chunk))
        sheets.append(path)
    write_atomic(out / "items.jsonl", "".join(json.dumps(i.public(), ensure_ascii=False) + "\n" for i in items))
    key = {str(i.item): {a.rid: a.systems for a in i.answers} for i in items}
    write_atomic(out / "key.json", json.dumps(key, indent=1, sort_keys=True) + "\n")
    return sheets


def read_items(path: str | Path) -> list[dict]:
    """`items.jsonl` back (each item's public fields)."""

    def bad(n: int, why: str):
        raise InputError(f"{path}:{n}: {why}")

    return [row for _, row in read_jsonl(Path(path), bad)]
