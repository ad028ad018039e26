"""What the review judge's stance pass should ask: the question ("Is there a big room available?") or its topic named
without a side ("room size"), measured on the 468 labelled (question, review sentence) pairs of bench/labels/opinions/.

Asked of the question, the 1.5B model reads a sentence on the side the question does not hope for ("The rooms are
on the smaller side" for "Is there a big room?") as praise or as off the question, so the other side of mixed reviews
goes missing and a one-sided verdict follows. Per way of asking (`question`; `topic`, prompt `review_stance_topic`;
`either`: a sentence counts on each side either pass puts it, the topic's side where they disagree), it reports
among the sentences put on a side (P(related) >= 0.85) the recall of each side's labelled sentences and the precision
of the side given, and per turn (70) the sides counted against the labelled ones (as bench/about_by.py, stance
pass alone: no about-pass).

    python bench/stance_by.py [--llm local]   # -> bench/results/stance_by.json; judgments cached (resumable) in
                                              #    runs/bench/stance_by/<llm>-<prompts hash>.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import defaultdict
from pathlib import Path

from augmenter.reviews.judge import praise_or_complaint

sys.path.insert(0, str(Path(__file__).resolve().parent))
from about_by import sides_per_turn  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "bench" / "labels" / "opinions" / "settled.jsonl"
WAYS = ("question", "topic", "either")
MIN_RELATED = 0.85


def judge_all(rows: list[dict], llm_name: str) -> dict[str, dict]:
    """Per pair: the stance distribution asked of the question and of the topic (cached)."""
    from tqdm import tqdm

    from augmenter.config import build_llm, compose
    from augmenter.prompts.engine import PromptTemplate
    from augmenter.reviews.judge import ReviewJudge

    names = ("review_stance", "review_stance_topic", "review_topic")
    digest = hashlib.sha256("".join(PromptTemplate.source(n) for n in names).encode()).hexdigest()[:10]
    cache = ROOT / "runs" / "bench" / "stance_by" / f"{llm_name}-{digest}.jsonl"
    cache.parent.mkdir(parents=True, exist_ok=True)
    done = {}
    if cache.exists():
        done = {json.loads(line)["pair"]: json.loads(line) for line in cache.read_text().splitlines() if line.strip()}
    by_question = defaultdict(list)
    for r in rows:
        if r["pair"] not in done:
            by_question[r["question"]].append(r)
    if by_question:
        llm = build_llm(compose("chat", [f"llm={llm_name}", "llm_cache.enabled=false"]))
        judge = ReviewJudge(llm, stance_by="either")
        with open(cache, "a", encoding="utf-8") as sink:
            for question, todo in tqdm(by_question.items(), desc="questions", unit="q"):
                topic = judge.topic(question)
                asked = [judge.distribution(question, r["sentence"]) for r in todo]
                on_topic = [judge.topic_distribution(question, r["sentence"]) for r in todo]
                for r, q, t in zip(todo, asked, on_topic):
                    done[r["pair"]] = {"pair": r["pair"], "question": q, "topic": t, "topic_named": topic}
                    sink.write(json.dumps(done[r["pair"]]) + "\n")
                sink.flush()
    return done


def sides_of(d: dict) -> set[str]:
    """The side a distribution puts a sentence on (empty below MIN_RELATED)."""
    if 1 - d["unrelated"] < MIN_RELATED:
        return set()
    return {praise_or_complaint(d)}


def counted(j: dict, way: str) -> set[str]:
    q, t = sides_of(j["question"]), sides_of(j["topic"])
    return q if way == "question" else t if way == "topic" else (t or q)


def report(rows: list[dict], judged: dict[str, dict], llm_name: str) -> dict:
    label = [{"mixed": "complaint"}.get(r["stance"], r["stance"]) for r in rows]
    out: dict = {
        "command": "python bench/stance_by.py --llm " + llm_name,
        "pairs": len(rows),
        "labelled": {s: label.count(s) for s in ("praise", "complaint", "unrelated")},
    }
    for way in WAYS:
        given = [counted(judged[r["pair"]], way) for r in rows]
        out[way] = {"sentences": side_figures(rows, given), "turns": turn_sides(rows, judged, way)}
    out["topics (first 10 questions)"] = dict(
        list({r["question"]: judged[r["pair"]]["topic_named"] for r in rows}.items())[:10]
    )
    return out


def side_figures(rows: list[dict], given: list[set[str]]) -> dict:
    """Per side: the recall of its labelled sentences and the precision of those put on it (`given`: each pair's
    sides), with how many put on it are labelled the other side or unrelated."""
    label = [{"mixed": "complaint"}.get(r["stance"], r["stance"]) for r in rows]
    out = {}
    for s in ("praise", "complaint"):
        put = [i for i, g in enumerate(given) if s in g]
        right = sum(label[i] == s for i in put)
        out[s] = {
            "recall": round(right / max(1, label.count(s)), 3),
            "precision": round(right / max(1, len(put)), 3),
            "put": len(put),
            "of the other side": sum(label[i] not in (s, "unrelated") for i in put),
            "unrelated": sum(label[i] == "unrelated" for i in put),
        }
    return out


def turn_sides(rows: list[dict], judged: dict[str, dict], way: str) -> dict[str, int]:
    """Per turn: the sides its sentences are put on against the sides its labelled sentences take."""
    return sides_per_turn(rows, lambda pairs: set().union(*(counted(judged[r["pair"]], way) for r in pairs)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--llm", default="local", help="the LLM config (default: the embedded 1.5B model)")
    args = ap.parse_args()
    rows = [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]
    result = report(rows, judge_all(rows, args.llm), args.llm)
    path = ROOT / "bench" / "results" / "stance_by.json"
    path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    json.dump({k: result[k] for k in WAYS}, sys.stdout, indent=1)
    print(f"\n-> {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
