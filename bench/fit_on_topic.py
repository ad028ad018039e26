"""Fit the on-topic cross-encoder of the opinion gatherer (augmenter/reviews/on_topic.py) and measure it on the 468
labelled (question, review sentence) pairs of bench/labels/opinions/.

Training pairs: DSTC11 dev turns with one gold entity and gold review sentences (the positives), apart from the
200 experiment turns, the 60 of the claim set, the samples of the labelled rounds after it was first fitted
(bench/dev_samples.py's seeds 19-26: the turns its answers are labelled on) and every dialogue of the labelled
pairs; the negatives are the entity's other sentences that the stored relevance model ranks highest (8) and 4
drawn at random. The packaged MiniLM is read as a cross-encoder
(question and sentence in one input); low-rank deltas (rank 16) of its linear layers and a scoring head are fitted
for three epochs (~13 min on 2 cores), then stored as `augmenter/reviews/models/on_topic.safetensors` (float16).

On the labelled pairs: the AUC of related (praise, complaint) against unrelated sentences, and the precision and
recall of the related at thresholds; the threshold is chosen on training folds (5 by dialogue, F0.5: a quote had
better be on the question than found) and the figures reported out of fold, beside the 1.5B judge's
(bench/results/about_by.json).

    python bench/fit_on_topic.py             # -> augmenter/reviews/models/on_topic.safetensors and
                                             #    bench/results/on_topic.json
    python bench/fit_on_topic.py --evaluate  # the stored model on the labelled pairs only
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
DATA = ROOT.parent / "shared" / "data"
LABELS = ROOT / "bench" / "labels" / "opinions"
MODEL = ROOT / "augmenter" / "reviews" / "models" / "on_topic.safetensors"
RESULTS = ROOT / "bench" / "results" / "on_topic.json"
COMMAND = "python bench/fit_on_topic.py"
RANK, ALPHA, EPOCHS, LR, BATCH, SEED = 16, 32, 3, 5e-4, 32, 0
HELD_SEEDS = tuple(range(19, 27))  # the rounds after the first fit (19-22) and the refit (23-26): turns it never saw


def training_pairs(data_root: Path) -> list[dict]:
    from dev_samples import SEEDS

    from augmenter.audit import dialogue_key
    from augmenter.knowledge.base import load_dstc11
    from augmenter.reviews.opinions import _packaged, relevance_features
    from augmenter.tasks.base import seeded_sample
    from augmenter.tasks.dstc11 import load_turns
    from augmenter.verification.model import StoredModel

    kb = load_dstc11(data_root / "dstc11-track5" / "knowledge.json")
    pool = load_turns(data_root / "dstc11-track5" / "dev", kb, True)
    first = seeded_sample(pool, 200, 0)
    claim_set = seeded_sample([t for t in pool if t.id not in {h.id for h in first}], 60, 1)
    held = {t.id for t in first} | {t.id for t in claim_set}
    drawn = {t.id for t in first}  # each round's sample is drawn apart from those before it (bench/dev_samples.py)
    for seed in sorted(set(SEEDS) | set(HELD_SEEDS)):
        sample = seeded_sample([t for t in pool if t.id not in drawn], 60, seed)
        drawn |= {t.id for t in sample}
        if seed in HELD_SEEDS:
            held |= {t.id for t in sample}
    labelled = {json.loads(line)["dialogue"] for line in (LABELS / "pairs.jsonl").open()}
    relevance = StoredModel.from_json(_packaged("aspect"), "aspect")
    rng, out = random.Random(SEED), []
    for t in pool:
        key = dialogue_key(t.history, t.q)
        gold = {g.id for g in t.gold if g.doc_type == "review"}
        places = {(g.domain, g.entity_id) for g in t.gold}
        if t.id in held or key in labelled or len(places) != 1 or not gold:
            continue
        reviews = [kb.snippets[i] for i in kb.rows_of(*next(iter(places))) if kb.snippets[i].doc_type == "review"]
        p = np.atleast_1d(relevance.predict_proba(relevance_features(t.q, [s.text for s in reviews])))
        hard = [int(i) for i in np.argsort(-p, kind="stable") if reviews[i].id not in gold][:8]
        others = [i for i, s in enumerate(reviews) if s.id not in gold and i not in hard]
        negatives = hard + rng.sample(others, min(4, len(others)))
        out += [{"q": t.q, "s": s.text, "y": 1} for s in reviews if s.id in gold]
        out += [{"q": t.q, "s": reviews[i].text, "y": 0} for i in negatives]
    return out


class LoRA:
    """A linear layer plus a trained low-rank delta: y = W x + (B A x) * alpha / r."""

    @staticmethod
    def wrap(base, r: int, alpha: int):
        import torch
        from torch import nn

        class Adapted(nn.Module):
            def __init__(self):
                super().__init__()
                self.base, self.scale = base, alpha / r
                self.A = nn.Parameter(torch.randn(r, base.in_features) / r)
                self.B = nn.Parameter(torch.zeros(base.out_features, r))

            def forward(self, x):
                return self.base(x) + (x @ self.A.T @ self.B.T) * self.scale

        return Adapted()


def fit(rows: list[dict]):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from augmenter.verification.encoder import encoder_path

    torch.manual_seed(SEED)
    tok = AutoTokenizer.from_pretrained(encoder_path())
    model = AutoModelForSequenceClassification.from_pretrained(encoder_path(), num_labels=1)
    for p in model.parameters():
        p.requires_grad = False
    for layer in model.bert.encoder.layer:
        attention = layer.attention
        for parent, name in (
            (attention.self, "query"),
            (attention.self, "key"),
            (attention.self, "value"),
            (attention.output, "dense"),
            (layer.intermediate, "dense"),
            (layer.output, "dense"),
        ):
            setattr(parent, name, LoRA.wrap(getattr(parent, name), RANK, ALPHA))
    for p in [*model.bert.pooler.parameters(), *model.classifier.parameters()]:
        p.requires_grad = True
    trained = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trained, lr=LR, weight_decay=0.0)
    steps = len(rows) * EPOCHS // BATCH
    warm_then_down = lambda i: min(1.0, (i + 1) / (0.1 * steps)) * max(0.0, 1 - i / steps)  # noqa: E731
    sched = torch.optim.lr_scheduler.LambdaLR(opt, warm_then_down)
    loss_of, rng, step, t0 = torch.nn.BCEWithLogitsLoss(), random.Random(SEED), 0, time.time()
    from tqdm import tqdm

    bar = tqdm(total=steps, desc="fitting the on-topic cross-encoder")
    while step < steps:
        order = list(range(len(rows)))
        rng.shuffle(order)
        for i in range(0, len(order) - BATCH + 1, BATCH):
            if step >= steps:
                break
            batch = [rows[j] for j in order[i : i + BATCH]]
            model.train()
            enc = tok(
                [r["q"] for r in batch], [r["s"] for r in batch], truncation=True, max_length=128, padding=True,
                return_tensors="pt",
            )  # fmt: skip
            loss = loss_of(model(**enc).logits[:, 0], torch.tensor([float(r["y"]) for r in batch]))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trained, 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            step += 1
            bar.update(1)
            bar.set_postfix(loss=round(loss.item(), 3))
    bar.close()
    tensors = {}
    for name, p in model.named_parameters():
        if p.requires_grad:  # "<layer>.A", "<layer>.B" (named after the layer they adapt) and the head
            tensors[name.replace(".base", "")] = p.detach().to(torch.float16).contiguous()
    return tensors, round(time.time() - t0)


def auc(pos, neg) -> float:
    pos, neg = np.asarray(pos)[:, None], np.asarray(neg)[None]
    return round(float(((pos > neg) + 0.5 * (pos == neg)).mean()), 3)


def at(scores, related, t: float) -> dict:
    kept = scores >= t
    return {
        "precision": round(float(related[kept].mean()), 3) if kept.any() else None,
        "recall": round(float(related[kept].sum() / related.sum()), 3),
        "kept": int(kept.sum()),
    }


def evaluate() -> dict:
    from augmenter.audit import dialogue_folds
    from augmenter.reviews.on_topic import OnTopicModel

    pairs = [json.loads(line) for line in (LABELS / "pairs.jsonl").open()]
    stance = {json.loads(line)["pair"]: json.loads(line)["stance"] for line in (LABELS / "settled.jsonl").open()}
    model = OnTopicModel(str(MODEL))
    scores = np.array([model.probabilities(p["question"], [p["sentence"]])[0] for p in pairs])
    labels = [stance[p["pair"]] for p in pairs]
    related = np.array([s != "unrelated" for s in labels])
    of = {k: [x for x, s in zip(scores, labels) if s == k] for k in ("praise", "complaint", "unrelated")}
    grid = np.round(np.arange(0.05, 0.96, 0.05), 2)
    folds = np.array(dialogue_folds([p["dialogue"] for p in pairs]))

    def f05(t, rows):
        k = scores[rows] >= t
        tp = float((related[rows] & k).sum())
        p, r = tp / max(1, k.sum()), tp / max(1, related[rows].sum())
        return 1.25 * p * r / max(1e-9, 0.25 * p + r)

    chosen, kept = [], np.zeros(len(pairs), bool)
    for f in sorted(set(folds)):
        train = folds != f
        t = max(grid, key=lambda t: f05(t, train))
        chosen.append(float(t))
        kept[~train] = scores[~train] >= t
    sides = {k: round(float(kept[[s == k for s in labels]].mean()), 3) for k in ("praise", "complaint")}
    judge = json.loads((ROOT / "bench" / "results" / "about_by.json").read_text())
    return {
        "pairs": len(pairs),
        "auc": {
            "related": auc(scores[related], scores[~related]),
            "praise_vs_unrelated": auc(of["praise"], of["unrelated"]),
            "complaint_vs_unrelated": auc(of["complaint"], of["unrelated"]),
        },
        "threshold_per_fold": chosen,
        "threshold_on_all": float(max(grid, key=lambda t: f05(t, np.ones(len(pairs), bool)))),
        "cross_validated": {
            "recall_praise": sides["praise"],
            "recall_complaint": sides["complaint"],
            "precision": round(float(related[kept].mean()), 3),
            "kept": int(kept.sum()),
        },
        "at": {f"{t:.2f}": at(scores, related, t) for t in (0.3, 0.5, 0.7, 0.9)},
        "the 1.5B judge (bench/results/about_by.json)": {
            "auc_related": {way: judge[way]["auc"]["related"] for way in ("question", "topic", "either")},
            "either >= 0.85": judge["either"]["at"]["0.85"],
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--evaluate", action="store_true", help="measure the stored model only")
    ap.add_argument("--data", type=Path, default=DATA)
    args = ap.parse_args()
    out: dict = {"command": COMMAND}
    if not args.evaluate:
        from safetensors.torch import save_file

        rows = training_pairs(args.data)
        tensors, seconds = fit(rows)
        MODEL.parent.mkdir(parents=True, exist_ok=True)
        save_file(tensors, str(MODEL), metadata={"lora_scale": str(ALPHA / RANK), "command": COMMAND})
        out["training"] = {
            "pairs": len(rows),
            "positives": sum(r["y"] for r in rows),
            "rank": RANK,
            "epochs": EPOCHS,
            "seconds": seconds,
            "bytes": MODEL.stat().st_size,
        }
    elif RESULTS.exists():
        out["training"] = json.loads(RESULTS.read_text()).get("training")
    out["labelled pairs"] = evaluate()
    from augmenter.storage import write_atomic

    write_atomic(RESULTS, json.dumps(out, indent=1) + "\n")
    print(json.dumps(out["labelled pairs"], indent=1))


if __name__ == "__main__":
    main()
