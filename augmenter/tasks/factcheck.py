"""Labelled claim-verification data (does the evidence support the claim?), read in the published formats:

- WikiBio GPT-3 hallucination (SelfCheckGPT): 238 GPT-3 biographies, 1,908 sentences; factual iff "accurate"
  (major_inaccurate and minor_inaccurate are non-factual, as SelfCheckGPT and CEG count them); the evidence is
  the Wikipedia bio.
- FELM (`eval/all.jsonl`, the release with `ref_contents`): one item per response segment of one domain; the
  evidence is the scraped text of the reference links (a list of page texts; `[]` when the row has none).
- HaluEval QA: each sampled row gives two items, the right answer (factual) and the hallucinated one, with the
  row's knowledge as evidence.

Items of one `group` (a bio, a FELM response, a HaluEval row) must stay in one cross-validation fold.

Each set is also a `ClaimSet` (`claim_set(name, data_root)`): the fact-check task's side of the task protocol, its
claims a seeded sample of whole groups drawn with the one sampling helper (`augmenter.tasks.base.seeded_sample`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from augmenter.errors import InputError
from augmenter.storage import read_jsonl
from augmenter.tasks.base import seeded_sample

WIKIBIO_FILE = "wikibio_gpt3_hallucination.jsonl"
FELM_FILE = Path("eval") / "all.jsonl"
HALUEVAL_QA_FILE = "dataset_halueval_qa.jsonl"


@dataclass
class LabelledClaim:
    id: str  # stable, e.g. "wikibio:12:3"
    claim: str  # the sentence / segment / answer to verify
    evidence: list[str] = field(default_factory=list)  # raw evidence passage(s) as the data set gives them
    factual: bool = True  # True = accurate / supported
    group: str = ""  # items of one group stay in one CV fold
    context: str = ""  # the question / prompt the claim answers, "" if none
    dataset: str = ""


def _file(root: str | Path, name: str | Path, what: str) -> Path:
    root = Path(root)
    path = root / name
    if not path.is_file():
        # Accept the file itself as root too.
        if root.is_file() and root.name == Path(name).name:
            return root
        raise InputError(f"{what} file not found: {path} (give the data set's folder as root)")
    return path


def _jsonl(path: Path, required: tuple[str, ...]) -> list[dict]:
    """The file's rows; a line that is not a JSON object with the `required` fields is an InputError."""

    def bad(n: int, why: str):
        raise InputError(f"{path}:{n}: {why}")

    rows = []
    for n, row in read_jsonl(path, bad):
        missing = [k for k in required if k not in row]
        if missing:
            bad(n, f"missing field(s) {', '.join(missing)}")
        rows.append(row)
    if not rows:
        raise InputError(f"{path}: no rows")
    return rows


def load_wikibio(root: str | Path) -> list[LabelledClaim]:
    """One item per GPT-3 sentence of `wikibio_gpt3_hallucination.jsonl`; factual iff annotated "accurate"."""
    path = _file(root, WIKIBIO_FILE, "WikiBio GPT-3 hallucination")
    rows = _jsonl(path, ("gpt3_sentences", "annotation", "wiki_bio_text"))
    items = []
    for b, row in enumerate(rows):
        sents, labels = row["gpt3_sentences"], row["annotation"]
        if not isinstance(sents, list) or not isinstance(labels, list) or len(sents) != len(labels):
            raise InputError(f"{path}: row {b}: gpt3_sentences and annotation must be lists of the same length")
        for i, (sent, label) in enumerate(zip(sents, labels)):
            if label not in ("accurate", "minor_inaccurate", "major_inaccurate"):
                raise InputError(f"{path}: row {b}: unknown annotation {label!r}")
            items.append(
                LabelledClaim(
                    id=f"wikibio:{b}:{i}",
                    claim=sent,
                    evidence=[row["wiki_bio_text"]],
                    factual=label == "accurate",
                    group=f"wikibio:{b}",
                    dataset="wikibio",
                )
            )
    return items


def _felm_evidence(value, path: Path, index) -> list[str]:
    # all.jsonl has a list of page texts, or "" for rows without references.
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v for v in value if v.strip()]
    raise InputError(f"{path}: row index {index}: ref_contents must be a string or a list of strings")


def load_felm(root: str | Path, domain: str = "wk") -> list[LabelledClaim]:
    """One item per segment of the FELM responses of `domain` (wk, science, math, reasoning, writing_rec), from
    `eval/all.jsonl`; evidence = the row's `ref_contents` (empty list when there are none)."""
    path = _file(root, FELM_FILE, "FELM (eval/all.jsonl)")
    rows = _jsonl(path, ("index", "domain", "prompt", "segmented_response", "labels", "ref_contents"))
    domains = sorted({r["domain"] for r in rows})
    if domain not in domains:
        raise InputError(f"{path}: no rows with domain {domain!r} (domains: {', '.join(domains)})")
    items = []
    for row in rows:
        if row["domain"] != domain:
            continue
        index, segs, labels = row["index"], row["segmented_response"], row["labels"]
        if not isinstance(segs, list) or not isinstance(labels, list) or len(segs) != len(labels):
            raise InputError(
                f"{path}: row index {index}: segmented_response and labels must be lists of the same length"
            )
        evidence = _felm_evidence(row["ref_contents"], path, index)
        for i, (seg, label) in enumerate(zip(segs, labels)):
            if not isinstance(label, bool):
                raise InputError(f"{path}: row index {index}: label {label!r} is not true/false")
            items.append(
                LabelledClaim(
                    id=f"felm:{domain}:{index}:{i}",
                    claim=seg,
                    evidence=list(evidence),
                    factual=label,
                    group=f"felm:{index}",
                    context=row["prompt"],
                    dataset=f"felm-{domain}",
                )
            )
    return items


def _halueval_rows(root: str | Path) -> tuple[Path, list[dict]]:
    path = _file(root, HALUEVAL_QA_FILE, "HaluEval QA")
    return path, _jsonl(path, ("knowledge", "question", "right_answer", "hallucinated_answer"))


def _halueval_sample(n_rows: int, n: int, seed: int) -> list[int]:
    if n > n_rows:
        raise InputError(f"HaluEval QA has {n_rows} rows; cannot sample n={n}")
    return seeded_sample(range(n_rows), n, seed)


def _halueval_items(rows: list[dict], indices: Sequence[int]) -> list[LabelledClaim]:
    items = []
    for r in indices:
        row = rows[r]
        for kind, answer, factual in (
            ("right", row["right_answer"], True),
            ("hallucinated", row["hallucinated_answer"], False),
        ):
            items.append(
                LabelledClaim(
                    id=f"halueval:{r}:{kind}",
                    claim=answer,
                    evidence=[row["knowledge"]],
                    factual=factual,
                    group=f"halueval:{r}",
                    context=row["question"],
                    dataset="halueval-qa",
                )
            )
    return items


def load_halueval_qa(root: str | Path, n: int = 2000, seed: int = 0) -> list[LabelledClaim]:
    """A seeded sample of `n` HaluEval QA rows (sorted row indices), two items each: the right answer
    (factual) then the hallucinated one, evidence = [knowledge], context = question."""
    _, rows = _halueval_rows(root)
    return _halueval_items(rows, _halueval_sample(len(rows), n, seed))


def halueval_rest(root: str | Path, n: int = 2000, seed: int = 0, limit: int | None = None) -> list[LabelledClaim]:
    """Items of the HaluEval QA rows NOT in `load_halueval_qa(root, n, seed)`'s sample (a disjoint training
    pool), in row order; `limit` caps the number of rows (so 2 * limit items)."""
    _, rows = _halueval_rows(root)
    taken = set(_halueval_sample(len(rows), n, seed))
    rest = [r for r in range(len(rows)) if r not in taken]
    if limit is not None:
        rest = rest[:limit]
    return _halueval_items(rows, rest)


@runtime_checkable
class ClaimSet(Protocol):
    """A set of labelled claims: the fact-check task. `claims(limit, seed)`: a seeded sample of `limit` whole groups
    (bios, responses, rows; None: all), in their original order."""

    name: str

    def claims(self, limit: int | None = None, seed: int | None = 0) -> list[LabelledClaim]: ...


class PublishedClaimSet:
    """A published set read whole by `load(root)` and sampled by group."""

    def __init__(self, name: str, root: str | Path, load: Callable[[str | Path], list[LabelledClaim]]):
        self.name, self.root, self._load = name, root, load

    def claims(self, limit: int | None = None, seed: int | None = 0) -> list[LabelledClaim]:
        items = self._load(self.root)
        groups = list(dict.fromkeys(it.group for it in items))
        chosen = set(seeded_sample(groups, limit, seed))
        return [it for it in items if it.group in chosen]


def _halueval_all(root: str | Path) -> list[LabelledClaim]:
    _, rows = _halueval_rows(root)
    return _halueval_items(rows, range(len(rows)))


CLAIM_SETS = {
    "wikibio": ("wikibio-gpt3-hallucination", load_wikibio),
    "felm": ("felm", load_felm),
    "halueval": ("halueval", _halueval_all),
}


def claim_set(name: str, data_root: str | Path) -> ClaimSet:
    """The published claim set `name` (wikibio, felm: its world-knowledge domain, halueval: QA) under `data_root`."""
    if name not in CLAIM_SETS:
        raise InputError(f"unknown claim set {name!r} (known: {', '.join(CLAIM_SETS)})")
    folder, load = CLAIM_SETS[name]
    return PublishedClaimSet(name, Path(data_root) / folder, load)
