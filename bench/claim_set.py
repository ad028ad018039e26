"""The labelled claim set of DSTC11 dev answers: answers of four systems with two models on 60
dev turns apart from the 200 the experiments are scored on, labelled claim by claim by two blind labellers each under
bench/labels/rules.md, disagreements settled by a third.

    # 1. the answers (8 runs: LLM only, + BM25, the paper's system, the claims system; 0.5B and 1.5B)
    S="eval.limit=60 eval.seed=1 eval.exclude={limit:200,seed:0}"
    G=table2_llm_only,table2_bm25,table2_bm25_feedback,claims_bm25
    augmenter grid --only $G $S eval.out_dir=runs/claim-set/0.5b
    augmenter grid --only $G $S eval.out_dir=runs/claim-set/1.5b llm=local
    # 1b. (a later round) answers of systems an earlier round labelled, as records: controls to mix in
    python bench/claim_set.py controls --from dstc11-dev --systems bm25-1.5b,claims-1.5b --out runs/claim-set/controls
    # 2. the items (answers shuffled per item, the key apart) and the sheets
    python bench/claim_set.py items --round dstc11-dev
    python bench/claim_set.py render --round dstc11-dev          # rebuilds the sheets from items.jsonl alone
    # 3. labels from two labellers (labels/labeller-1.jsonl, labeller-2.jsonl): the disputes for the third
    python bench/claim_set.py disputes --round dstc11-dev
    # 4. the third labeller's labels (labels/labeller-3.jsonl): the settled set, agreement and per-system figures
    python bench/claim_set.py settle --round dstc11-dev

Round 2 (`dstc11-dev-r2`): the checked system (experiment grounded_bm25) on the same 60 turns with
each model, beside two round-1 systems' answers as controls (labellers stay blind to which answers are new; the two
rounds' labels of the controls measure their agreement), labelled by new labellers with the same brief:

    augmenter eval experiment=grounded_bm25 $S eval.out_dir=runs/claim-set/1.5b
    augmenter eval experiment=grounded_bm25 $S eval.out_dir=runs/claim-set/0.5b llm=local_small \
        consolidator.opinions.stance=model consolidator.opinions.min_p=0.3 consolidator.opinions.max_sentences=6
    python bench/claim_set.py controls --from dstc11-dev --systems bm25-1.5b,claims-1.5b --out runs/claim-set/controls
    python bench/claim_set.py items --round dstc11-dev-r2 --per-sheet 10 --runs grounded-1.5b=runs/claim-set/1.5b/\
dstc11-dev-n60-seed1-minus-n200-seed0/grounded_bm25/records.jsonl,grounded-0.5b=runs/claim-set/0.5b/\
dstc11-dev-n60-seed1-minus-n200-seed0/grounded_bm25/records.jsonl,dstc11-dev:bm25-1.5b=runs/claim-set/controls/\
dstc11-dev-bm25-1.5b.jsonl,dstc11-dev:claims-1.5b=runs/claim-set/controls/dstc11-dev-claims-1.5b.jsonl

(the 0.5B model judges review sentences badly, 60% of their sides right: bench/results/opinion_pairs-local_small.json,
so its run keeps the stored classifier.)

A change to a labelled system is labelled where its answers changed (round `dstc11-dev-default-v2`): `changed` keeps
the records of the turns where two runs sent different answers, and those go on the sheets side by side:

    python bench/claim_set.py changed --before runs/e2e/1.5b/dstc11-dev-n200-seed0/grounded_bm25_classifier/\
records.jsonl --after runs/e2e-v2/1.5b/dstc11-dev-n200-seed0/grounded_bm25_classifier/records.jsonl \
        --out runs/claim-set/default-v2                            # -> before.jsonl, after.jsonl

A round labelled in parts as its answers arrive (items built from the turns answered so far, then from the rest):
`merge --round R --parts R-a,R-b` numbers the parts' items on from each other into R (items, key, labels, ranks),
where `settle --round R` reports them as one round.

Everything lives in bench/labels/<round>/: items.jsonl (the answers, no system), key.json (answer -> systems; never
given to a labeller), sheets/ (what labellers read), labels/ (their files), settled.jsonl, report.json and report.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from math import sqrt
from pathlib import Path

from augmenter.audit import build_items, read_labels, settle, write_sheets
from augmenter.audit.labels import agreement, disagree, read_ranks, write_labels
from augmenter.audit.sheets import Answer, Item, read_items
from augmenter.knowledge.base import load_dstc11
from augmenter.storage import write_atomic

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "bench" / "labels"
SAMPLE = "dstc11-dev-n60-seed1-minus-n200-seed0"
SYSTEMS = {
    "llm_only": "table2_llm_only",
    "bm25": "table2_bm25",
    "paper": "table2_bm25_feedback",
    "claims": "claims_bm25",
}


def default_runs(out: str = "runs/claim-set") -> dict[str, Path]:
    return {
        f"{system}-{model}": ROOT / out / model / SAMPLE / run / "records.jsonl"
        for model in ("0.5b", "1.5b")
        for system, run in SYSTEMS.items()
    }


def knowledge(data_root: str):
    root = Path(data_root) / "dstc11-track5"
    return load_dstc11(root / "knowledge.json")


def load_items(directory: Path) -> list[Item]:
    key = json.loads((directory / "key.json").read_text())
    items = []
    for row in read_items(directory / "items.jsonl"):
        answers = [Answer(a["rid"], a["text"], key[str(row["item"])][a["rid"]]) for a in row["answers"]]
        items.append(Item(**{**row, "answers": answers}))
    return items


def write_controls(source: str, systems: list[str], out: Path) -> dict[str, Path]:
    """Records (as an eval writes them, enough for `build_items`) of `systems`' answers in an earlier round, so a
    new round can show them beside new answers: labellers stay blind to which answers are new, and the earlier
    labels of these answers measure how the two rounds' labellers agree."""
    items = load_items(LABELS / source)
    paths = {}
    for system in systems:
        rows = []
        for item in items:
            answer = next((a for a in item.answers if system in a.systems), None)
            if answer is None:
                continue
            rows.append(
                {
                    "dialogue_id": item.dialogue_id,
                    "status": "ok",
                    "error": None,
                    "response": answer.text,
                    "outcome": None,
                    "citations": [],
                    "references": [],
                    "gold_knowledge": [],
                    "gold_ids": item.gold_ids,
                    "metrics": {},
                    "cost": {},
                    "memory": {
                        "q": item.q,
                        "h_q": item.history,
                        "entities": [{"domain": d, "entity_id": e} for d, e in item.entities],
                    },
                }
            )
        if not rows:
            sys.exit(f"{source} has no answer of {system!r} (its systems: see {LABELS / source / 'key.json'})")
        path = out / f"{source}-{system}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, "".join(json.dumps(r) + "\n" for r in rows))
        paths[f"{source}:{system}"] = path
    return paths


def write_changed(before: Path, after: Path, out: Path) -> int:
    """The records of the turns where `after` sent another answer than `before`, as before.jsonl and after.jsonl."""
    runs = [
        {json.loads(line)["dialogue_id"]: line for line in path.read_text().splitlines() if line.strip()}
        for path in (before, after)
    ]
    answer = lambda run, turn: json.loads(run[turn])["response"]  # noqa: E731
    turns = [t for t in runs[0] if t in runs[1] and answer(runs[0], t) != answer(runs[1], t)]
    out.mkdir(parents=True, exist_ok=True)
    for name, records in zip(("before", "after"), runs):
        write_atomic(out / f"{name}.jsonl", "".join(records[t] + "\n" for t in turns))
    return len(turns)


def wilson(k: int, n: int, z: float = 1.96) -> list[float]:
    if n == 0:
        return [0.0, 0.0]
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [max(0.0, round(100 * (centre - half), 1)), min(100.0, round(100 * (centre + half), 1))]


def per_system(items: list[Item], settled: dict) -> dict[str, dict]:
    """Per system: answers, flawed (a C or U claim), contradicted, off-topic or wrong "I don't know", "I don't know"."""
    out: dict[str, dict] = {}
    for item in items:
        for answer in item.answers:
            label = settled.get((item.item, answer.rid))
            if label is None:
                continue
            for system in answer.systems:
                row = out.setdefault(
                    system, {"answers": 0, "flawed": 0, "contradicted": 0, "misses_question": 0, "idk": 0, "claims": 0}
                )
                row["answers"] += 1
                row["flawed"] += label.flawed
                row["contradicted"] += label.contradicted
                row["misses_question"] += label.misses_the_question
                row["idk"] += "idk" in label.flags
                row["claims"] += len(label.claims)
    for row in out.values():
        n = row["answers"]
        for k in ("flawed", "contradicted", "misses_question", "idk"):
            row[f"{k}_percent"] = round(100 * row[k] / n, 1) if n else None
            row[f"{k}_ci95"] = wilson(row[k], n)
    return dict(sorted(out.items()))


def helpfulness(items: list[Item], settled: dict, labellers: list[dict], ranks: list[dict]) -> dict[str, dict]:
    """Per system, under the rules' extension: the settled "answers" (yes / partly / no), off-topic and
    wrong-place flags, "natural" averaged over the two labellers, and the share of turns each labeller ranked
    its answer first (ties count), averaged."""
    out: dict[str, dict] = {}
    for item in items:
        for answer in item.answers:
            key = (item.item, answer.rid)
            label = settled.get(key)
            if label is None or label.answers is None:
                continue
            natural = [lab[key].natural for lab in labellers if key in lab and lab[key].natural is not None]
            first = [answer.rid in r[item.item][0] for r in ranks if item.item in r]
            for system in answer.systems:
                row = out.setdefault(
                    system,
                    {
                        "answers": 0,
                        "answers_yes": 0,
                        "answers_partly": 0,
                        "answers_no": 0,
                        "off_topic": 0,
                        "wrong_entity": 0,
                        "natural": [],
                        "ranked_first": [],
                    },
                )
                row["answers"] += 1
                row[f"answers_{label.answers}"] += 1
                row["off_topic"] += "off_topic" in label.flags
                row["wrong_entity"] += "wrong_entity" in label.flags
                row["natural"] += natural
                row["ranked_first"] += first
    for row in out.values():
        row["natural"] = round(statistics.mean(row["natural"]), 2) if row["natural"] else None
        row["ranked_first_percent"] = (
            round(100 * statistics.mean(row.pop("ranked_first")), 1) if row["ranked_first"] else None
        )
    return dict(sorted(out.items()))


def knowledge_f1(items: list[Item], kb) -> dict[str, float]:
    """Per system, the mean KF1 (%) of its answers against each turn's gold knowledge: a side figure (it rewards
    quoting and says nothing of whether an answer answers)."""
    from augmenter.eval.metrics import kf1

    scores: dict[str, list[float]] = {}
    for item in items:
        gold = [kb.by_id[g].text for g in item.gold_ids if g in kb.by_id]
        for answer in item.answers:
            for system in answer.systems:
                scores.setdefault(system, []).append(kf1(answer.text, gold))
    return {system: round(statistics.mean(v), 1) for system, v in sorted(scores.items())}


def head_to_head(items: list[Item], ranks: list[dict]) -> dict[str, float]:
    """ "A over B": the share of turns where the labellers ranked A's answer above B's (a tie, or one answer for
    both, counts a half), averaged over the labellers' ranks."""
    wins: dict[tuple, list] = {}
    for item in items:
        systems = sorted({s for a in item.answers for s in a.systems})
        for r in ranks:
            if item.item not in r:
                continue
            place = {rid: n for n, tied in enumerate(r[item.item]) for rid in tied}
            at = {s: place.get(a.rid) for a in item.answers for s in a.systems}
            for a in systems:
                for b in systems:
                    if a != b and at[a] is not None and at[b] is not None:
                        wins.setdefault((a, b), []).append(1.0 if at[a] < at[b] else 0.5 if at[a] == at[b] else 0.0)
    return {f"{a} over {b}": round(100 * statistics.mean(v), 1) for (a, b), v in sorted(wins.items())}


MERGED = (
    "labels/labeller-1.jsonl",
    "labels/labeller-2.jsonl",
    "labels/labeller-3.jsonl",
    "labels/ranks-1.jsonl",
    "labels/ranks-2.jsonl",
)


def merge(parts: list[Path], directory: Path) -> str:
    """The parts' items, key, labels and ranks as one round in `directory`, each part's items numbered on from the
    previous part's (their dialogues must differ)."""
    offset, items, key, dialogues = 0, [], {}, set()
    lines: dict[str, list[str]] = {name: [] for name in MERGED}
    for part in parts:
        part_items = [json.loads(line) for line in (part / "items.jsonl").read_text().splitlines() if line.strip()]
        if clash := dialogues & {i["dialogue_id"] for i in part_items}:
            sys.exit(f"{part.name}: dialogue {sorted(clash)[0]} is in an earlier part too")
        dialogues |= {i["dialogue_id"] for i in part_items}
        items += [{**i, "item": i["item"] + offset} for i in part_items]
        key.update({str(int(n) + offset): v for n, v in json.loads((part / "key.json").read_text()).items()})
        for name in MERGED:
            path = part / name
            for line in path.read_text().splitlines() if path.exists() else []:
                if line.strip():
                    row = json.loads(line)
                    lines[name].append(json.dumps({**row, "item": row["item"] + offset}, ensure_ascii=False))
        offset = max(i["item"] for i in items)
    (directory / "labels").mkdir(parents=True, exist_ok=True)
    write_atomic(directory / "items.jsonl", "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items))
    write_atomic(directory / "key.json", json.dumps(key, indent=1) + "\n")
    for name, rows in lines.items():
        if rows:
            write_atomic(directory / name, "".join(row + "\n" for row in rows))
    return f"{len(items)} items from {len(parts)} parts -> {directory}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", choices=("controls", "changed", "items", "render", "disputes", "settle", "merge"))
    ap.add_argument("--parts", help="merge: the rounds labelled in parts, comma-separated, in order")
    ap.add_argument("--before", help="changed: the earlier run's records.jsonl")
    ap.add_argument("--after", help="changed: the later run's records.jsonl")
    ap.add_argument("--from", dest="source", help="controls: the earlier round")
    ap.add_argument("--systems", help="controls: its systems, comma-separated")
    ap.add_argument("--out", default="runs/claim-set/controls", help="controls, changed: where the records go")
    ap.add_argument("--round", default="dstc11-dev", help="the folder under bench/labels/")
    ap.add_argument("--runs", help="NAME=records.jsonl,... (default: the eight claim-set runs under runs/claim-set)")
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--per-sheet", type=int, default=6)
    ap.add_argument("--turns", type=int, help="items: a seeded sample of this many of the turns every run answered")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.step == "controls":
        for name, path in write_controls(args.source, args.systems.split(","), ROOT / args.out).items():
            print(f"{name}={path}")
        return
    if args.step == "changed":
        print(
            f"{write_changed(Path(args.before), Path(args.after), ROOT / args.out)} turns with another answer "
            f"-> {ROOT / args.out}/before.jsonl, after.jsonl"
        )
        return
    directory = LABELS / args.round
    directory.mkdir(parents=True, exist_ok=True)
    if args.step == "merge":
        print(merge([LABELS / part for part in args.parts.split(",")], directory))
        return
    if args.step == "items":
        runs = dict(p.split("=", 1) for p in args.runs.split(",")) if args.runs else default_runs()
        items = build_items(runs, seed=args.seed, limit=args.turns)
        write_sheets(items, knowledge(args.data_root), directory / "sheets", per_sheet=args.per_sheet)
        for name in ("items.jsonl", "key.json"):  # the key never stays beside the sheets
            (directory / "sheets" / name).replace(directory / name)
        print(
            f"{len(items)} items, {sum(len(i.answers) for i in items)} distinct answers "
            f"({sum(len(a.systems) for i in items for a in i.answers)} with duplicates) -> {directory}"
        )
        return
    items = load_items(directory)
    if args.step == "render":
        write_sheets(items, knowledge(args.data_root), directory / "sheets", per_sheet=args.per_sheet)
        for name in ("items.jsonl", "key.json"):
            (directory / "sheets" / name).unlink()
        print(f"sheets rebuilt from {directory / 'items.jsonl'}")
        return
    expected = [(i.item, a.rid) for i in items for a in i.answers]
    first, second = (read_labels(directory / "labels" / f"labeller-{n}.jsonl", expected) for n in (1, 2))
    disputed = [k for k in expected if disagree(first[k], second[k])]
    if args.step == "disputes":
        lines = ["# Disputed answers: two labellers disagree (settle each under the rules)\n"]
        for item, rid in disputed:
            lines.append(f"## Item {item}, {rid}\nWhy: {'; '.join(disagree(first[(item, rid)], second[(item, rid)]))}")
            for n, labels in ((1, first), (2, second)):
                said = json.dumps(labels[(item, rid)].to_json(), ensure_ascii=False)
                lines.append(f"Labeller {chr(64 + n)}: {said}")
            lines.append("")
        write_atomic(directory / "disputes.md", "\n".join(lines))
        print(f"{len(disputed)} of {len(expected)} answers disputed -> {directory / 'disputes.md'}")
        return
    third_path = directory / "labels" / "labeller-3.jsonl"
    third = read_labels(third_path, disputed) if third_path.exists() else {}
    settled, waiting = settle(first, second, third)
    if waiting:
        sys.exit(f"{len(waiting)} disputed answers have no third label yet ({third_path})")
    write_labels(directory / "settled.jsonl", settled)
    claims = [c for lab in settled.values() for c in lab.claims]
    report = {
        "items": len(items),
        "dialogues": len({i.dialogue for i in items}),
        "answers_distinct": len(expected),
        "answers_with_duplicates": sum(len(a.systems) for i in items for a in i.answers),
        "claims": len(claims),
        "claims_by_label": {lab: sum(c.label == lab for c in claims) for lab in "SCU"},
        "agreement": agreement(first, second).to_json(),
        "systems": per_system(items, settled),
    }
    ranks = [read_ranks(path) for path in sorted((directory / "labels").glob("ranks-[12].jsonl"))]
    helpful = helpfulness(items, settled, [first, second], ranks)
    if helpful:
        report["helpfulness"] = helpful
        report["head_to_head_percent"] = head_to_head(items, ranks)
        for system, value in knowledge_f1(items, knowledge(args.data_root)).items():
            helpful.setdefault(system, {})["kf1"] = value
    write_atomic(directory / "report.json", json.dumps(report, indent=1) + "\n")
    rows = [
        "| system | answers | flawed % [95% CI] | contradicted % | off-topic or wrong IDK % | IDK % |",
        "|---|---|---|---|---|---|",
    ]
    for system, r in report["systems"].items():
        rows.append(
            f"| {system} | {r['answers']} | {r['flawed_percent']} {r['flawed_ci95']} | "
            f"{r['contradicted_percent']} | {r['misses_question_percent']} | {r['idk_percent']} |"
        )
    if helpful:
        rows += [
            "",
            "| system | answers directly | partly | no | off-topic | wrong place | natural (1-3) | ranked "
            "first % | KF1 |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        rows += [
            f"| {system} | {r['answers_yes']}/{r['answers']} | {r['answers_partly']} | {r['answers_no']} | "
            f"{r['off_topic']} | {r['wrong_entity']} | {r['natural']} | {r['ranked_first_percent']} | "
            f"{r.get('kf1')} |"
            for system, r in helpful.items()
        ]
        rows += [
            "",
            "Ranked above the other (ties a half), % of turns: "
            + "; ".join(f"{pair} {share}" for pair, share in report["head_to_head_percent"].items()),
        ]
    agree = report["agreement"]
    text = (
        f"# Labelled claim set `{args.round}`\n\n{report['items']} items from {report['dialogues']} dialogues, "
        f"{report['answers_distinct']} distinct answers ({report['answers_with_duplicates']} with duplicates), "
        f"{report['claims']} claims (S/C/U {report['claims_by_label']}).\n\nAgreement of the two labellers: "
        f"{agree['disputed']} of {agree['answers']} answers disputed; Cohen's kappa on 'flawed' "
        f"{agree['flawed_kappa']}, on the {agree['claims_matched']} matched claims {agree['claim_kappa']} (S/C/U) "
        f"and {agree['claim_kappa_supported_vs_not']} (S vs not).\n\n" + "\n".join(rows) + "\n"
    )
    write_atomic(directory / "report.md", text)
    print(text)


if __name__ == "__main__":
    main()
