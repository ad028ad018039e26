"""Labels read back and settled: each labeller's JSON Lines file (one object per answer, as the rules say), the
claims two labellers split alike matched up, agreement (Cohen's kappa on the matched claims' labels and on "the
answer is flawed"), and the settled set: the first labeller's labels where the two agree, the third's where not."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from augmenter.errors import InputError
from augmenter.storage import read_jsonl, write_atomic
from augmenter.verification.lexical import content_words

LABELS = ("S", "C", "U")  # supported, contradicted, unsupported
ANSWERS = ("yes", "partly", "no")  # does the answer answer what was asked
FLAGS = ("off_topic", "dodge", "idk", "idk_wrong", "self_contradiction", "loop", "wrong_entity")
_RID = re.compile(r"^R\d+$")

Key = tuple[int, str]  # (item, response id)


@dataclass
class ClaimLabel:
    text: str
    label: str  # S | C | U
    why: str = ""


@dataclass
class AnswerLabel:
    claims: list[ClaimLabel] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    answers: str | None = None  # yes | partly | no (the rules' extension; None in rounds before it)
    natural: int | None = None  # 1-3

    @property
    def flawed(self) -> bool:
        """A contradicted or unsupported claim (the audit's "flawed answer")."""
        return any(c.label != "S" for c in self.claims)

    @property
    def contradicted(self) -> bool:
        return any(c.label == "C" for c in self.claims)

    @property
    def misses_the_question(self) -> bool:
        """Off-topic, or "I don't know" although the knowledge answers it."""
        return bool({"off_topic", "idk_wrong"} & set(self.flags))

    def to_json(self) -> dict:
        out = {
            "claims": [{"text": c.text, "label": c.label, "why": c.why} for c in self.claims],
            "flags": list(self.flags),
        }
        return {**out, **{k: v for k, v in (("answers", self.answers), ("natural", self.natural)) if v is not None}}


def parse_label(row: dict, where: str) -> tuple[Key, AnswerLabel]:
    """One line of a labeller's file; InputError naming `where` when it is not in the rules' format."""
    item, rid = row.get("item"), row.get("response")
    if isinstance(item, str) and item.isdigit():
        item = int(item)
    if not isinstance(item, int) or isinstance(item, bool):
        raise InputError(f"{where}: 'item' must be an item number, got {item!r}")
    if not isinstance(rid, str) or not _RID.match(rid):
        raise InputError(f"{where}: 'response' must be R1, R2, ..., got {rid!r}")
    claims = row.get("claims")
    if not isinstance(claims, list):
        raise InputError(f"{where}: 'claims' must be a list (empty for an answer without claims)")
    parsed = []
    for j, c in enumerate(claims, 1):
        if not isinstance(c, dict) or not isinstance(c.get("text"), str) or not c["text"].strip():
            raise InputError(f"{where}: claim {j} needs a 'text'")
        label = str(c.get("label", "")).strip().upper()
        if label not in LABELS:
            raise InputError(f"{where}: claim {j} has label {c.get('label')!r}; labels: {', '.join(LABELS)}")
        parsed.append(ClaimLabel(c["text"].strip(), label, str(c.get("why") or "")))
    flags = row.get("flags") or []
    if not isinstance(flags, list) or any(f not in FLAGS for f in flags):
        raise InputError(f"{where}: 'flags' must be a list of {', '.join(FLAGS)}, got {flags!r}")
    answers, natural = row.get("answers"), row.get("natural")
    if answers is not None and answers not in ANSWERS:
        raise InputError(f"{where}: 'answers' must be one of {', '.join(ANSWERS)}, got {answers!r}")
    if natural is not None and natural not in (1, 2, 3):
        raise InputError(f"{where}: 'natural' must be 1, 2 or 3, got {natural!r}")
    return (item, rid), AnswerLabel(parsed, sorted(set(flags)), answers, natural)


def read_ranks(path: str | Path) -> dict[int, list[list[str]]]:
    """A labeller's ranks ({"item": i, "rank": ["R2", "R1=R3"]} per line): item -> the answers best first, each
    place a list of tied answers."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"ranks file not found: {path}")

    def bad(n: int, why: str):
        raise InputError(f"{path}:{n}: {why}")

    out = {}
    for n, row in read_jsonl(path, bad):
        rank = row.get("rank")
        if not isinstance(row.get("item"), int) or not isinstance(rank, list) or not rank:
            bad(n, "each line needs an 'item' number and a 'rank' list")
        places = [str(place).replace(" ", "").split("=") for place in rank]
        if any(not _RID.match(r) for place in places for r in place):
            bad(n, f"ranks name answers R1, R2, ...; got {rank!r}")
        out[row["item"]] = places
    return out


def read_labels(path: str | Path, expected: Iterable[Key] | None = None) -> dict[Key, AnswerLabel]:
    """A labeller's file: (item, response) -> label. With `expected`, every expected answer must be labelled and
    nothing else (InputError listing what is missing or extra)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"labels file not found: {path}")

    def bad(n: int, why: str):
        raise InputError(f"{path}:{n}: {why}")

    out: dict[Key, AnswerLabel] = {}
    for n, row in read_jsonl(path, bad):
        key, label = parse_label(row, f"{path}:{n}")
        if key in out:
            raise InputError(f"{path}:{n}: item {key[0]} {key[1]} is labelled twice")
        out[key] = label
    if expected is not None:
        want = set(expected)
        missing, extra = sorted(want - set(out)), sorted(set(out) - want)
        if missing or extra:

            def show(keys):
                return ", ".join(f"{i}/{r}" for i, r in keys[:8]) + (" ..." if len(keys) > 8 else "")

            raise InputError(
                f"{path}: "
                + "; ".join(
                    filter(
                        None,
                        [
                            f"{len(missing)} answer(s) not labelled ({show(missing)})" if missing else "",
                            f"{len(extra)} not on the sheets ({show(extra)})" if extra else "",
                        ],
                    )
                )
            )
    return out


def _overlap(a: str, b: str) -> float:
    wa, wb = set(content_words(a)), set(content_words(b))
    if not wa or not wb:
        return float(a.strip().lower() == b.strip().lower())
    return len(wa & wb) / min(len(wa), len(wb))


def align_claims(a: Sequence[ClaimLabel], b: Sequence[ClaimLabel], threshold: float = 0.6) -> list[tuple[int, int]]:
    """Pairs (i, j) of claims that two labellers split alike: greedily the pairs with the highest content-word
    overlap (shared words over the shorter claim's), at least `threshold`, each claim used once."""
    scored = sorted(
        ((_overlap(x.text, y.text), i, j) for i, x in enumerate(a) for j, y in enumerate(b)),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    used_a, used_b, pairs = set(), set(), []
    for score, i, j in scored:
        if score < threshold:
            break
        if i not in used_a and j not in used_b:
            used_a.add(i)
            used_b.add(j)
            pairs.append((i, j))
    return sorted(pairs)


def cohen_kappa(x: Sequence, y: Sequence) -> float | None:
    """Cohen's kappa of two labellings of the same items (None when there are none; 1.0 when both use one label
    throughout and agree)."""
    if len(x) != len(y):
        raise ValueError(f"{len(x)} labels against {len(y)}")
    n = len(x)
    if n == 0:
        return None
    observed = sum(a == b for a, b in zip(x, y)) / n
    cats = set(x) | set(y)
    expected = sum((sum(a == c for a in x) / n) * (sum(b == c for b in y) / n) for c in cats)
    if expected >= 1.0:
        return 1.0 if observed == 1.0 else 0.0
    return (observed - expected) / (1.0 - expected)


def disagree(a: AnswerLabel, b: AnswerLabel) -> list[str]:
    """Why two labellings of one answer need a third labeller (empty: they agree): the answer flawed for one only,
    a matched claim labelled differently, or one says off-topic / wrong "I don't know" and the other not."""
    why = []
    if a.flawed != b.flawed:
        why.append("flawed for one labeller only")
    for i, j in align_claims(a.claims, b.claims):
        if a.claims[i].label != b.claims[j].label:
            why.append(f"claim labelled {a.claims[i].label} and {b.claims[j].label}: {a.claims[i].text!r}")
    for flag in ("off_topic", "idk_wrong"):
        if (flag in a.flags) != (flag in b.flags):
            why.append(f"{flag} for one labeller only")
    if a.answers is not None and b.answers is not None and a.answers != b.answers:
        why.append(f"answers {a.answers} and {b.answers}")
    return why


@dataclass
class Agreement:
    answers: int
    disputed: int
    flawed_kappa: float | None
    claims_a: int
    claims_b: int
    matched: int
    claim_kappa: float | None  # S / C / U on the matched claims
    claim_kappa_binary: float | None  # S against C or U

    def to_json(self) -> dict:
        def r(v):
            return None if v is None else round(v, 3)

        return {
            "answers": self.answers,
            "disputed": self.disputed,
            "flawed_kappa": r(self.flawed_kappa),
            "claims_labeller_1": self.claims_a,
            "claims_labeller_2": self.claims_b,
            "claims_matched": self.matched,
            "claim_kappa": r(self.claim_kappa),
            "claim_kappa_supported_vs_not": r(self.claim_kappa_binary),
        }


def agreement(first: Mapping[Key, AnswerLabel], second: Mapping[Key, AnswerLabel]) -> Agreement:
    """Agreement of two labellers over the answers both labelled."""
    keys = sorted(set(first) & set(second))
    la, lb, ca, cb = [], [], 0, 0
    for key in keys:
        a, b = first[key], second[key]
        ca, cb = ca + len(a.claims), cb + len(b.claims)
        for i, j in align_claims(a.claims, b.claims):
            la.append(a.claims[i].label)
            lb.append(b.claims[j].label)

    def binary(labels):
        return [lab == "S" for lab in labels]

    return Agreement(
        len(keys),
        sum(bool(disagree(first[k], second[k])) for k in keys),
        cohen_kappa([first[k].flawed for k in keys], [second[k].flawed for k in keys]),
        ca,
        cb,
        len(la),
        cohen_kappa(la, lb),
        cohen_kappa(binary(la), binary(lb)),
    )


def settle(
    first: Mapping[Key, AnswerLabel], second: Mapping[Key, AnswerLabel], third: Mapping[Key, AnswerLabel]
) -> tuple[dict[Key, AnswerLabel], list[Key]]:
    """The settled labels: the first labeller's where the two agree, the third's where they disagree. Returns them
    and the disputed answers the third has not labelled yet (settle again once they are)."""
    settled, waiting = {}, []
    for key in sorted(set(first) | set(second)):
        if key not in first or key not in second:
            waiting.append(key)
        elif not disagree(first[key], second[key]):
            settled[key] = first[key]
        elif key in third:
            settled[key] = third[key]
        else:
            waiting.append(key)
    return settled, waiting


def write_labels(path: str | Path, labels: Mapping[Key, AnswerLabel]) -> None:
    rows = [
        json.dumps({"item": i, "response": r, **labels[(i, r)].to_json()}, ensure_ascii=False) + "\n"
        for i, r in sorted(labels)
    ]
    write_atomic(path, "".join(rows))
