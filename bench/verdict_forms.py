"""The labelled verdict answers by the form of the reply: how often each form is flawed, direct, and how natural it
reads. The form is read off the answer's first words: the Yes and a quote ("Yes, a guest wrote: ..."), the fixed
sentence ("A guest speaks well of it.", "... of the place on the view."), the same opened with Yes or No,
"divided", the model's written Yes or No, another written sentence (apart where the question asks yes or no), a
quote alone, "I don't know".

    python bench/verdict_forms.py dstc11-dev-verdict10-a dstc11-dev-verdict12 dstc11-dev-verdict13
    # settled rounds under bench/labels/ (their items hold the answers' text) -> bench/results/verdict_forms.json
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

from augmenter.storage import write_atomic
from augmenter.text import is_yes_no

ROOT = Path(__file__).resolve().parents[1]
FORMS = (
    ("yes and a quote", re.compile(r"^([^.:]*: )?yes, (a|one|some) (guest|diner|reviewer)s? wrote")),
    (
        "fixed yes or no",
        re.compile(r"^([^.:]*: )?(yes|no), (a|some) \w+ (speaks?|complains?) (well of|about) (it|the [^.]*)\."),
    ),
    ("fixed sentence", re.compile(r"^([^.:]*: )?(a|some) \w+ (speaks?|complains?) (well of|about) (it|the [^.]*)\.")),
    ("divided", re.compile(r"^[^.]*divided")),
    ("written yes", re.compile(r"^([^.:]*: )?yes")),
    ("written no", re.compile(r"^([^.:]*: )?no,")),
    ("quote alone", re.compile(r"^(at [^,]*, )?(a|one) (guest|diner|reviewer)s? wrote")),
    ("i don't know", re.compile(r"^(i'm sorry|i don't)")),
)


def form(reply: str, question: str = "") -> str:
    text = reply.lower()
    found = next((name for name, pattern in FORMS if pattern.search(text)), "written other")
    return "written other, yes-or-no question" if found == "written other" and is_yes_no(question) else found


def main(rounds: list[str]) -> dict:
    stats: dict[str, Counter] = defaultdict(Counter)
    for name in rounds:
        folder = ROOT / "bench" / "labels" / name
        key = json.loads((folder / "key.json").read_text())
        texts = {
            (i["item"], a["rid"]): (a["text"], i["q"])
            for i in map(json.loads, (folder / "items.jsonl").read_text().splitlines())
            for a in i["answers"]
        }
        for label in map(json.loads, (folder / "settled.jsonl").read_text().splitlines()):
            if not any(s.startswith("verdict") for s in key[str(label["item"])][label["response"]]):
                continue
            c = stats[form(*texts[(label["item"], label["response"])])]
            c["answers"] += 1
            c["flawed"] += any(claim["label"] != "S" for claim in label["claims"])
            c["direct"] += label["answers"] == "yes"
            c["natural_sum"] += label["natural"]
    table = {
        f: {
            "answers": c["answers"],
            "flawed": c["flawed"],
            "direct": c["direct"],
            "natural": round(c["natural_sum"] / c["answers"], 2),
        }
        for f, c in sorted(stats.items(), key=lambda kv: -kv[1]["answers"])
    }
    return {"command": "python bench/verdict_forms.py " + " ".join(rounds), "forms": table}


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = main(sys.argv[1:])
    write_atomic(ROOT / "bench" / "results" / "verdict_forms.json", json.dumps(out, indent=1) + "\n")
    for f, row in out["forms"].items():
        print(f"{f:16s} {row}")
