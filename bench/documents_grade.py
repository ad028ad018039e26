"""Blind grading of answers over documents, under ../shared/documents-grading.md.

    python bench/documents_grade.py sheets --round NAME --split report --runs new=report-default old=report-baseline
    python bench/documents_grade.py disputes --round NAME      # after two graders per sheet: what a third settles
    python bench/documents_grade.py report --round NAME         # after the third: the figures per system

`sheets` puts, per question, the replies of every run (bench/results/documents_qa/<split>-<tag>.jsonl) under neutral
names R1, R2, ... shuffled with a fixed seed (identical replies shown once), with the question, its reference
answer, where the answer lives and the documents' folder, on sheets of `--per-sheet` questions
(bench/labels/documents/<round>/sheets/); which run wrote which reply is kept in key.json, never on a sheet.
Graders write one JSON line per reply to labels/sheet-NN.<grader>.jsonl:
`{"item": "httpx-04", "response": "R2", "grade": "RIGHT", "flags": ["long"], "why": "..."}`.
`disputes` lists the replies whose two grades differ (disputes.jsonl); a third grader's lines go to
labels/sheet-NN.third.jsonl. `report` settles each reply (the two graders' grade when they agree, else the
third's), and writes report.json and report.md: per run and kind the count of each grade with 95% Wilson intervals,
answerable right (RIGHT / answerable), unanswerable refused (REFUSED_OK / unanswerable), WRONG and INVENTED counts,
form flags, Cohen's kappa between the first two graders, and the time per question from the run's summary.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from documents_qa import DOCSETS, RESULTS, load_questions

LABELS = ROOT / "bench" / "labels" / "documents"
ANSWERABLE = ("RIGHT", "RIGHT_NOCITE", "PARTIAL", "WRONG", "REFUSED", "QUOTE_ANSWERS")
UNANSWERABLE = ("REFUSED_OK", "INVENTED")
FLAGS = ("markup", "cut", "leak", "long")


def wilson(k: int, n: int, z: float = 1.96) -> list[float]:
    if n == 0:
        return [0.0, 0.0]
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(max(0.0, 100 * (centre - half)), 1), round(min(100.0, 100 * (centre + half)), 1)]


def kappa(x: list[str], y: list[str]) -> float | None:
    if not x:
        return None
    labels = set(x) | set(y)
    observed = sum(a == b for a, b in zip(x, y)) / len(x)
    expected = sum((x.count(lab) / len(x)) * (y.count(lab) / len(y)) for lab in labels)
    return round((observed - expected) / (1 - expected), 3) if expected < 1 else 1.0


def _cited(row: dict) -> str:
    return "; ".join(f"{path}" + (f", page {page}" if page else "") for path, page in row["cited"]) or "(none)"


def render(question: dict, replies: list[tuple[str, dict]], folder: Path) -> str:
    where = "; ".join(
        f"{s['file']}"
        + (f", page {s['page']}" if s.get("page") else "")
        + (f" (section: {s['heading']})" if s.get("heading") else "")
        for s in question["sources"]
    )
    lines = [
        f"## {question['id']}",
        "",
        f"- Question: {question['question']}",
        f"- Kind: {question['kind']}",
        f"- Reference answer: {question['answer']}",
        f"- Where the answer lives: {where or '(nowhere: unanswerable)'}",
        f"- Documents folder: {folder.relative_to(ROOT)}",
        "",
    ]
    for rid, row in replies:
        lines += [f"### {rid}", "", "```text", row["reply"] or "", "```", "", f"Cited: {_cited(row)}", ""]
    return "\n".join(lines)


def sheets(args) -> None:
    runs = dict(r.split("=", 1) for r in args.runs)
    rows = {
        name: {
            json.loads(line)["id"]: json.loads(line)
            for line in (RESULTS / f"{args.split}-{tag}.jsonl").read_text().splitlines()
        }
        for name, tag in runs.items()
    }
    questions = [q for q in load_questions(args.split, []) if all(q["id"] in r for r in rows.values())]
    rng = random.Random(args.seed)
    rng.shuffle(questions)
    out = LABELS / args.round
    (out / "sheets").mkdir(parents=True, exist_ok=True)
    (out / "labels").mkdir(exist_ok=True)
    key, items = {}, []
    for n in range(0, len(questions), args.per_sheet):
        part = questions[n : n + args.per_sheet]
        blocks = []
        for q in part:
            texts: dict[str, list[str]] = {}
            for name in runs:
                texts.setdefault(rows[name][q["id"]]["reply"] or "", []).append(name)
            order = list(texts.items())
            rng.shuffle(order)
            replies = []
            for i, (_text, names) in enumerate(order, 1):
                rid = f"R{i}"
                key[f"{q['id']}/{rid}"] = names
                replies.append((rid, rows[names[0]][q["id"]]))
            items.append({"item": q["id"], "sheet": n // args.per_sheet + 1, "responses": [r for r, _ in replies]})
            blocks.append(render(q, replies, DOCSETS / args.split / q["set"]))
        sheet = out / "sheets" / f"sheet-{n // args.per_sheet + 1:02d}.md"
        sheet.write_text(f"# Sheet {n // args.per_sheet + 1:02d}\n\n" + "\n".join(blocks))
    (out / "key.json").write_text(json.dumps({"runs": runs, "key": key}, indent=1))
    (out / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    print(f"{len(questions)} questions on {math.ceil(len(questions) / args.per_sheet)} sheets in {out}")


def _labels(path: Path) -> dict[tuple[str, str], dict]:
    out = {}
    for line in path.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            out[(row["item"], row["response"])] = row
    return out


def graded(round_dir: Path) -> tuple[dict, dict, list]:
    """(the first two graders' labels by (item, response), the third's, the sheets' items)."""
    items = [json.loads(line) for line in (round_dir / "items.jsonl").read_text().splitlines()]
    first, third = {}, {}
    for sheet in sorted({i["sheet"] for i in items}):
        files = sorted(
            p for p in (round_dir / "labels").glob(f"sheet-{sheet:02d}.*.jsonl") if not p.name.endswith(".third.jsonl")
        )
        if len(files) < 2:
            raise SystemExit(f"sheet {sheet:02d}: {len(files)} grader file(s) in {round_dir / 'labels'}, need two")
        a, b = _labels(files[0]), _labels(files[1])
        for k in a.keys() | b.keys():
            first[k] = (a.get(k), b.get(k))
        extra = round_dir / "labels" / f"sheet-{sheet:02d}.third.jsonl"
        if extra.exists():
            third.update(_labels(extra))
    return first, third, items


def disputes(args) -> None:
    round_dir = LABELS / args.round
    first, _, items = graded(round_dir)
    out = []
    for (item, rid), (a, b) in sorted(first.items()):
        if a is None or b is None or a["grade"] != b["grade"]:
            out.append(
                {
                    "item": item,
                    "response": rid,
                    "sheet": next(i["sheet"] for i in items if i["item"] == item),
                    "grades": [a and a["grade"], b and b["grade"]],
                    "whys": [a and a.get("why"), b and b.get("why")],
                }
            )
    (round_dir / "disputes.jsonl").write_text("".join(json.dumps(d) + "\n" for d in out))
    print(f"{len(out)} disputes of {len(first)} replies: {round_dir / 'disputes.jsonl'}")


def report(args) -> None:
    round_dir = LABELS / args.round
    first, third, items = graded(round_dir)
    meta = json.loads((round_dir / "key.json").read_text())
    kinds = {q["id"]: q["kind"] for q in load_questions(args.split, [])}
    settled, unsettled = {}, []
    for k, (a, b) in first.items():
        if a is not None and b is not None and a["grade"] == b["grade"]:
            settled[k] = {"grade": a["grade"], "flags": sorted(set(a.get("flags", [])) & set(b.get("flags", [])))}
        elif k in third:
            settled[k] = {"grade": third[k]["grade"], "flags": third[k].get("flags", [])}
        else:
            unsettled.append(k)
    pairs = [(a["grade"], b["grade"]) for a, b in first.values() if a and b]
    result = {
        "round": args.round,
        "replies": len(first),
        "unsettled": len(unsettled),
        "kappa": kappa([p[0] for p in pairs], [p[1] for p in pairs]),
        "agreement": round(sum(x == y for x, y in pairs) / len(pairs), 3) if pairs else None,
        "runs": {},
    }
    for name, tag in meta["runs"].items():
        grades: dict[str, Counter] = {"single": Counter(), "cross": Counter(), "unanswerable": Counter()}
        flags = Counter()
        for item in items:
            rid = next((r for r in item["responses"] if name in meta["key"][f"{item['item']}/{r}"]), None)
            label = settled.get((item["item"], rid))
            if label is None:
                continue
            grades[kinds[item["item"]]][label["grade"]] += 1
            flags.update(label["flags"])
        answerable = grades["single"] + grades["cross"]
        n_answerable, n_un = sum(answerable.values()), sum(grades["unanswerable"].values())
        summary_file = RESULTS / f"{args.split}-{tag}.json"
        timing = json.loads(summary_file.read_text()) if summary_file.exists() else {}
        result["runs"][name] = {
            "tag": tag,
            "grades": {k: dict(v) for k, v in grades.items()},
            "answerable_right": [answerable["RIGHT"], n_answerable, wilson(answerable["RIGHT"], n_answerable)],
            "single_right": [
                grades["single"]["RIGHT"],
                sum(grades["single"].values()),
                wilson(grades["single"]["RIGHT"], sum(grades["single"].values())),
            ],
            "cross_right": [
                grades["cross"]["RIGHT"],
                sum(grades["cross"].values()),
                wilson(grades["cross"]["RIGHT"], sum(grades["cross"].values())),
            ],
            "unanswerable_refused": [
                grades["unanswerable"]["REFUSED_OK"],
                n_un,
                wilson(grades["unanswerable"]["REFUSED_OK"], n_un),
            ],
            "wrong": answerable["WRONG"],
            "invented": grades["unanswerable"]["INVENTED"],
            "flags": dict(flags),
            "seconds_median": timing.get("seconds_median"),
            "seconds_max": timing.get("seconds_max"),
            "first_seconds": timing.get("first_seconds"),
        }
    (round_dir / "report.json").write_text(json.dumps(result, indent=1))
    lines = [
        f"# Round {args.round}",
        "",
        f"{result['replies']} replies graded by two graders each, "
        f"{len(third)} disputes settled by a third (kappa {result['kappa']}, agreement {result['agreement']}); "
        f"{len(unsettled)} unsettled.",
        "",
        "| run | answerable right | single | cross | unanswerable refused | WRONG | INVENTED "
        "| s/question (median, max, first) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in result["runs"].items():

        def fmt(t):
            return f"{t[0]}/{t[1]} [{t[2][0]}, {t[2][1]}]"

        lines.append(
            f"| {name} | {fmt(r['answerable_right'])} | {fmt(r['single_right'])} | {fmt(r['cross_right'])} | "
            f"{fmt(r['unanswerable_refused'])} | {r['wrong']} | {r['invented']} | "
            f"{r['seconds_median']}, {r['seconds_max']}, {r['first_seconds']} |"
        )
    lines += ["", "Grades per kind:", ""]
    for name, r in result["runs"].items():
        lines.append(
            f"- {name}: " + "; ".join(f"{k}: {dict(v)}" for k, v in r["grades"].items()) + f"; flags: {r['flags']}"
        )
    (round_dir / "report.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sheets")
    s.add_argument("--round", required=True)
    s.add_argument("--split", choices=["dev", "report"], required=True)
    s.add_argument("--runs", nargs="+", required=True, help="NAME=TAG of documents_qa results")
    s.add_argument("--per-sheet", type=int, default=10)
    s.add_argument("--seed", type=int, default=0)
    d = sub.add_parser("disputes")
    d.add_argument("--round", required=True)
    r = sub.add_parser("report")
    r.add_argument("--round", required=True)
    r.add_argument("--split", choices=["dev", "report"], required=True)
    args = parser.parse_args()
    {"sheets": sheets, "disputes": disputes, "report": report}[args.command](args)


if __name__ == "__main__":
    main()
