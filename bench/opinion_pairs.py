"""A labelled set of (question, review sentence) pairs: does the sentence praise, complain about, or not speak of what
the user asks? It measures and fits the opinion gatherer's stance on the question, which the
clause labels of bench/labels/stance/ (general sentiment, no question) cannot.

The pairs come from DSTC11 dev turns apart from the 200 scored turns and the 60 labelled ones (and from every
dialogue those belong to): turns whose gold knowledge is reviews of one entity, each with the entity's review
sentences that the relevance model scores at least 0.15 (at most 8) plus the gold ones, shuffled.

    python bench/opinion_pairs.py sheet [--turns 70]      # bench/labels/opinions/sheet.jsonl (+ sheet.md)
    # two labellers: bench/labels/opinions/labels-1.jsonl, labels-2.jsonl; disputes to a third: labels-3.jsonl
    python bench/opinion_pairs.py disputes                 # bench/labels/opinions/disputes.jsonl
    python bench/opinion_pairs.py settle                   # bench/labels/opinions/settled.jsonl and agreement
    python bench/opinion_pairs.py evaluate [--llm local]   # the judges against the labels:
                                                           # bench/results/opinion_pairs*.json

`evaluate` measures the opinion gatherer's two ways of telling a sentence's stance on the question, as they ship:
the stored clause classifier (no LLM) and `ReviewJudge` (the LLM's label probabilities; its `min_related` threshold
chosen on training folds, 5 folds by dialogue), its yes/no pass on whether a sentence speaks to exactly what
was asked (`ReviewJudge.about`; `min_about` chosen on the training folds for F0.5), and the seconds per sentence;
judgments are cached in
runs/bench/opinion_pairs/ (resumable).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np

from augmenter.audit import dialogue_key
from augmenter.audit.labels import cohen_kappa
from augmenter.knowledge.base import load_dstc11
from augmenter.knowledge.linker import EntityLinker, strip_names
from augmenter.prompts.engine import PromptTemplate
from augmenter.reviews.opinions import relevance_features
from augmenter.storage import read_jsonl, write_atomic
from augmenter.verification.model import StoredModel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from fit_opinions import training_turns

OUT = ROOT / "bench" / "labels" / "opinions"
STANCES = ("praise", "complaint", "mixed", "unrelated")


def pool(data_root: Path, kb):
    """Review questions about one entity, in dialogues apart from every held-out turn's."""
    turns, held = training_turns(data_root, kb)
    held_dialogues = {dialogue_key(t.history, t.q) for t in held}
    out = []
    for t in turns:
        entities = {(g.domain, g.entity_id) for g in t.gold}
        if (
            len(entities) == 1
            and any(g.doc_type == "review" for g in t.gold)
            and dialogue_key(t.history, t.q) not in held_dialogues
        ):
            out.append(t)
    return out


def sheet(args) -> None:
    kb = load_dstc11(Path(args.data_root) / "dstc11-track5" / "knowledge.json")
    relevance = StoredModel.from_json(
        (ROOT / "augmenter" / "knowledge" / "models" / "aspect.json").read_text(), "relevance model"
    )
    linker = EntityLinker(kb.entities)
    turns = pool(Path(args.data_root), kb)
    seen, chosen = set(), []
    for t in random.Random(args.seed).sample(turns, len(turns)):  # one turn per dialogue
        key = dialogue_key(t.history, t.q)
        if key not in seen:
            seen.add(key)
            chosen.append(t)
        if len(chosen) == args.turns:
            break
    rows = []
    for n, t in enumerate(chosen, 1):
        domain, entity_id = t.gold[0].domain, t.gold[0].entity_id
        reviews = [kb.snippets[i] for i in kb.rows_of(domain, entity_id) if kb.snippets[i].doc_type == "review"]
        query = strip_names(t.q, [m.surface for m in linker.link(t.q, t.history)]) or t.q
        p = np.atleast_1d(relevance.predict_proba(relevance_features(query, [s.text for s in reviews])))
        gold = {g.id for g in t.gold}
        keep = [i for i in np.argsort(-p, kind="stable") if p[i] >= 0.15][:8]
        keep += [i for i, s in enumerate(reviews) if s.id in gold and i not in keep]
        order = random.Random(f"{args.seed}:{n}").sample(keep, len(keep))
        last = t.history[-1].text if t.history else ""
        for i in order:
            s = reviews[int(i)]
            rows.append(
                {
                    "pair": f"{n}:{s.id}",
                    "turn": t.id,
                    "dialogue": dialogue_key(t.history, t.q),
                    "entity": s.entity_name,
                    "previous": last,
                    "question": t.q,
                    "sentence": s.text,
                    "relevance": round(float(p[int(i)]), 4),
                    "gold": s.id in gold,
                }
            )
    OUT.mkdir(parents=True, exist_ok=True)
    public = [{k: r[k] for k in ("pair", "entity", "previous", "question", "sentence")} for r in rows]
    write_atomic(OUT / "pairs.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    write_atomic(OUT / "sheet.jsonl", "".join(json.dumps(r) + "\n" for r in public))
    print(f"{len(rows)} pairs from {len(chosen)} turns -> {OUT / 'sheet.jsonl'}")


def read_labels(path: Path, expected: set[str]) -> dict[str, str]:
    out = {}
    for n, row in read_jsonl(path, lambda n, why: sys.exit(f"{path}:{n}: {why}")):
        if row.get("pair") not in expected or row.get("stance") not in STANCES:
            sys.exit(f"{path}:{n}: needs a 'pair' of the sheet and a 'stance' in {', '.join(STANCES)}")
        out[row["pair"]] = row["stance"]
    return out


def _labels(n: int) -> dict[str, str]:
    expected = {json.loads(line)["pair"] for line in (OUT / "sheet.jsonl").read_text().splitlines()}
    return read_labels(OUT / f"labels-{n}.jsonl", expected)


def disputes(_args) -> None:
    one, two = _labels(1), _labels(2)
    rows = [json.loads(line) for line in (OUT / "sheet.jsonl").read_text().splitlines()]
    missing = [r["pair"] for r in rows if r["pair"] not in one or r["pair"] not in two]
    if missing:
        sys.exit(f"{len(missing)} pair(s) not labelled by both (first: {missing[0]})")
    out = [r for r in rows if one[r["pair"]] != two[r["pair"]]]
    write_atomic(OUT / "disputes.jsonl", "".join(json.dumps(r) + "\n" for r in out))
    print(f"{len(out)} of {len(rows)} pairs disputed -> {OUT / 'disputes.jsonl'}")


def settle(_args) -> None:
    one, two = _labels(1), _labels(2)
    third = read_labels(OUT / "labels-3.jsonl", {p for p in one if one[p] != two.get(p)})
    pairs = [json.loads(line) for line in (OUT / "pairs.jsonl").read_text().splitlines()]
    settled = []
    for r in pairs:
        a, b = one[r["pair"]], two[r["pair"]]
        if a != b and r["pair"] not in third:
            sys.exit(f"pair {r['pair']} is disputed and the third labeller has not settled it")
        settled.append({**r, "stance": a if a == b else third[r["pair"]]})
    write_atomic(OUT / "settled.jsonl", "".join(json.dumps(r) + "\n" for r in settled))
    keys = [r["pair"] for r in pairs]
    counts = {s: sum(r["stance"] == s for r in settled) for s in STANCES}
    report = {
        "pairs": len(settled),
        "turns": len({r["turn"] for r in settled}),
        "stances": counts,
        "disputed": sum(one[k] != two[k] for k in keys),
        "kappa": round(cohen_kappa([one[k] for k in keys], [two[k] for k in keys]), 3),
    }
    write_atomic(OUT / "report.json", json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))


def _classifier_stances(rows) -> list[str]:
    from augmenter.reviews.opinions import OpinionGatherer

    gatherer = OpinionGatherer.__new__(OpinionGatherer)  # only its classifier: no knowledge base needed
    from augmenter.reviews.opinions import StanceModel

    gatherer.stance = StanceModel.load()
    return [gatherer._classified(r["question"], [_snippet(r)])[0] for r in rows]


def _snippet(row):
    from augmenter.memory import Snippet

    return Snippet(id=row["pair"], text=row["sentence"])


def evaluate(args) -> None:
    import time

    from sklearn.metrics import balanced_accuracy_score, confusion_matrix, roc_auc_score

    from augmenter.audit import dialogue_folds
    from augmenter.config import build_llm, compose
    from augmenter.reviews.judge import ReviewJudge

    rows = [json.loads(line) for line in (OUT / "settled.jsonl").read_text().splitlines()]
    cfg = compose("chat", [f"llm={args.llm}", "llm_cache.enabled=false"])
    judge = ReviewJudge(build_llm(cfg))
    import hashlib

    prompt = hashlib.sha256(PromptTemplate.source("review_stance").encode()).hexdigest()[:10]
    cache = ROOT / "runs" / "bench" / "opinion_pairs" / f"{args.llm}-{prompt}.jsonl"  # a changed prompt: judged anew
    cache.parent.mkdir(parents=True, exist_ok=True)
    lines = cache.read_text().splitlines() if cache.exists() else []
    done = {json.loads(line)["pair"]: json.loads(line) for line in lines}
    with open(cache, "a", encoding="utf-8") as sink:
        for r in rows:
            if r["pair"] not in done:
                start = time.perf_counter()
                d = judge.distribution(r["question"], r["sentence"])
                done[r["pair"]] = {"pair": r["pair"], "p": d, "seconds": time.perf_counter() - start}
                sink.write(json.dumps(done[r["pair"]]) + "\n")
                sink.flush()
    about_cache = cache.with_name(
        cache.stem
        + "-about-"
        + hashlib.sha256(PromptTemplate.source("review_about").encode()).hexdigest()[:10]
        + ".jsonl"
    )
    about = (
        {json.loads(line)["pair"]: json.loads(line)["p"] for line in about_cache.read_text().splitlines()}
        if about_cache.exists()
        else {}
    )
    with open(about_cache, "a", encoding="utf-8") as sink:
        for r in rows:
            if r["pair"] not in about:
                about[r["pair"]] = judge.about(r["question"], r["sentence"])
                sink.write(json.dumps({"pair": r["pair"], "p": about[r["pair"]]}) + "\n")
                sink.flush()
    code = {"praise": 0, "complaint": 1, "mixed": 1, "unrelated": 2}
    y = np.array([code[r["stance"]] for r in rows])
    related = y != 2
    P = np.array([[done[r["pair"]]["p"][k] for k in ("praise", "complaint", "unrelated")] for r in rows])
    p_related, side = 1 - P[:, 2], P[:, :2].argmax(1)
    relevance = np.array([r["relevance"] for r in rows])
    classifier = np.array([{"positive": 0, "negative": 1, "neutral": 2}[s] for s in _classifier_stances(rows)])
    folds = np.array(dialogue_folds([r["dialogue"] for r in rows], 5, seed=0))
    grid = np.round(np.arange(0.05, 0.96, 0.05), 2)
    pred, chosen = np.zeros(len(rows), dtype=int), []
    for f in range(5):
        train = folds != f
        best = max(
            grid,
            key=lambda t, train=train: balanced_accuracy_score(
                y[train], np.where(p_related[train] >= t, side[train], 2)
            ),
        )
        chosen.append(float(best))
        pred[~train] = np.where(p_related[~train] >= best, side[~train], 2)
    whole = max(grid, key=lambda t: balanced_accuracy_score(y, np.where(p_related >= t, side, 2)))

    def scored(p) -> dict:
        cm = confusion_matrix(y, p, labels=[0, 1, 2])
        return {
            "balanced_accuracy": round(float(balanced_accuracy_score(y, p)), 4),
            "praise_complaint_swaps": int(cm[0, 1] + cm[1, 0]),
            "confusion (rows: labelled praise, complaint or mixed, unrelated)": cm.tolist(),
        }

    from sklearn.metrics import fbeta_score

    p_about = np.array([about[r["pair"]] for r in rows])

    def f_half(y_true, flagged):
        return fbeta_score(y_true, flagged, beta=0.5, zero_division=0)

    kept_cv, chosen_about = np.zeros(len(rows), dtype=bool), []
    for f in range(5):  # min_about chosen on the training folds for F0.5: a quote had better be right than found
        train = folds != f
        best = max(grid, key=lambda t: f_half(related[train], p_about[train] >= t))
        chosen_about.append(float(best))
        kept_cv[~train] = p_about[~train] >= best
    about_result = {
        "auc_related": round(float(roc_auc_score(related, p_about)), 4),
        "min_about_per_fold": chosen_about,
        "min_about_on_all": float(max(grid, key=lambda t: f_half(related, p_about >= t))),
        "precision_cv": round(float(related[kept_cv].mean()), 4),
        "recall_cv": round(float(kept_cv[related].mean()), 4),
        "by_threshold": {
            f"{t:.2f}": {
                "precision": round(float(related[p_about >= t].mean()), 3),
                "recall": round(float((p_about >= t)[related].mean()), 3),
            }
            for t in (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
            if (p_about >= t).any()
        },
    }
    per_side, side_thresholds = {}, {}
    for code, name in ((0, "praise"), (1, "complaint")):  # among the sentences the judge puts on that side
        on = (1 - P[:, 2] >= 0.85) & (side == code)
        right = y[on] == code
        kept, chosen_side = np.zeros(int(on.sum()), dtype=bool), []
        for f in range(5):
            train = folds[on] != f
            best = max(grid, key=lambda t: f_half(right[train], p_about[on][train] >= t))
            chosen_side.append(float(best))
            kept[~train] = p_about[on][~train] >= best
        side_thresholds[code] = float(max(grid, key=lambda t: f_half(right, p_about[on] >= t)))
        per_side[name] = {
            "sentences": int(on.sum()),
            "right_side": int(right.sum()),
            "min_about_per_fold": chosen_side,
            "min_about_on_all": side_thresholds[code],
            "precision_cv": round(float(right[kept].mean()), 4) if kept.any() else None,
            "recall_cv": round(float(kept[right].mean()), 4),
        }
    selection = quote_selection(rows, y, P, p_about)
    selection["per side thresholds (praise, complaint)"] = quote_selection(
        rows, y, P, p_about, min_about=(side_thresholds[0], side_thresholds[1])
    )
    by_turn: dict = {}
    for r, label in zip(rows, y):
        by_turn.setdefault(r["turn"], []).append((label, r["relevance"]))
    result = {
        "command": "python bench/opinion_pairs.py evaluate --llm " + args.llm,
        "llm": str(cfg.llm.model),
        "pairs": len(rows),
        "related": int(related.sum()),
        "seconds_per_sentence_median": round(float(np.median([done[r["pair"]]["seconds"] for r in rows])), 3),
        "sign_accuracy_on_related": {
            "llm": round(float((side[related] == y[related]).mean()), 4),
            "classifier": round(float((classifier[related] == y[related]).mean()), 4),
        },
        "auc_related": {
            "llm_p_related": round(float(roc_auc_score(related, p_related)), 4),
            "relevance_model": round(float(roc_auc_score(related, relevance)), 4),
        },
        "llm_judge_cv": {**scored(pred), "min_related_per_fold": chosen, "min_related_on_all": float(whole)},
        "classifier_with_relevance_0.15": scored(np.where(relevance >= 0.15, classifier, 2)),
        "about (yes/no: does the sentence speak to exactly what was asked)": about_result,
        "about, per side (F0.5 on the training folds)": per_side,
        "the quote of each side (how the gatherer picks it)": selection,
        "candidates": {
            "related_below_relevance_0.15": int((related & (relevance < 0.15)).sum()),
            "turns": len(by_turn),
            "turns_with_both_sides": sum(len({lab for lab, _ in v if lab != 2}) == 2 for v in by_turn.values()),
            "turns_whose_sides_change_when_only_relevance_0.15_is_seen": sum(
                {lab for lab, _ in v if lab != 2} != {lab for lab, p in v if lab != 2 and p >= 0.15}
                for v in by_turn.values()
            ),
        },
        "note": "candidates are the sentences of relevance >= 0.15 (at most 8) plus the gold ones, so related "
        "sentences outside them are not counted; the clause classifier judges general sentiment, not the "
        "question (it has no 'unrelated': relevance decides that)",
    }
    name = "opinion_pairs" + ("" if args.llm == "local" else f"-{args.llm}")
    write_atomic(ROOT / "bench" / "results" / f"{name}.json", json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


def quote_selection(
    rows, y, P, p_about, min_p: float = 0.15, max_sentences: int = 8, min_related: float = 0.85, min_about=0.85
) -> dict:
    """The sentence a reply quotes for each side, picked as the gatherer does (candidates of relevance >= min_p, at
    most max_sentences; a side by the LLM's stance when P(related) >= min_related) by two rules: the first in
    relevance order whose P(about) >= min_about (as shipped), or the one of highest P(about) (if >= min_about; tried
    and reverted). `min_about` may be a pair, praise's and complaint's threshold (tried and reverted). Right: the
    labellers gave the quoted sentence that side on the question."""
    thresholds = min_about if isinstance(min_about, tuple) else (min_about, min_about)
    turns: dict = {}
    for i, r in enumerate(rows):
        if r["relevance"] >= min_p:
            turns.setdefault(r["turn"], []).append(i)
    out = {"first_in_relevance_order": {"right": 0, "wrong": 0}, "highest_about": {"right": 0, "wrong": 0}}
    wanted = {0: 0, 1: 1}  # side -> label code (praise 0; complaint or mixed 1)
    for members in turns.values():
        members = sorted(members, key=lambda i: -rows[i]["relevance"])[:max_sentences]
        for side in (0, 1):
            mine = [i for i in members if 1 - P[i, 2] >= min_related and int(P[i, :2].argmax()) == side]
            passing = [i for i in mine if p_about[i] >= thresholds[side]]
            if not passing:
                continue
            for rule, pick in (
                ("first_in_relevance_order", passing[0]),
                ("highest_about", max(passing, key=lambda i: p_about[i])),
            ):
                out[rule]["right" if y[pick] == wanted[side] else "wrong"] += 1
    for rule in out.values():
        rule["precision"] = round(rule["right"] / max(1, rule["right"] + rule["wrong"]), 3)
    out["turns"], out["turns_with_a_right_sentence_per_side"] = (
        len(turns),
        {
            name: sum(
                any(y[i] == code and rows[i]["relevance"] >= min_p for i in members) for members in turns.values()
            )
            for code, name in ((0, "praise"), (1, "complaint"))
        },
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", choices=("sheet", "disputes", "settle", "evaluate"))
    ap.add_argument("--llm", default="local", help="evaluate: the llm config group option (local, local_small)")
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--turns", type=int, default=70)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    {"sheet": sheet, "disputes": disputes, "settle": settle, "evaluate": evaluate}[args.step](args)


if __name__ == "__main__":
    main()
