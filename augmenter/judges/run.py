"""`augmenter judge`: every judge over the conversations of several systems, resumably.

Systems come from `augmenter converse` runs (one dialogue per conversation) or from `augmenter eval` runs (one
dialogue per turn: the last utterances of its history, the user's message and the system's reply; the gold reply
is the ground truth, and `human=True` adds it as a system of its own, "human", a known ordering to check a judge
against). Every judgment goes to `<out>/judgments.jsonl` as soon as it is made; a rerun skips what is judged and
retries failed calls (an unparseable answer is a judgment: it is kept and counted, not retried).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from tqdm import tqdm

from augmenter.errors import InputError
from augmenter.eval.resume import check_config
from augmenter.eval.runner import run_lock
from augmenter.judges.base import FAILED, OK, PARTIAL, UNPARSED, Dialogue, Judge
from augmenter.redact import redact_data
from augmenter.storage import read_jsonl, write_atomic

log = logging.getLogger(__name__)
HUMAN = "human"


def _read(path: Path) -> list[dict]:
    bad: list[int] = []
    rows = [row for _, row in read_jsonl(path, lambda n, why: bad.append(n))]
    if bad:
        log.warning("%s: skipped %d unreadable line(s) (line %s)", path, len(bad), ", ".join(map(str, bad[:5])))
    return rows


def _pairs(utterances) -> list[tuple[str, str]]:
    """(speaker, text) of each {speaker, text} in a record's list (anything else is left out)."""
    if not isinstance(utterances, list):
        return []
    return [(str(u.get("speaker")), str(u["text"])) for u in utterances if isinstance(u, dict) and "text" in u]


def dialogues_from_converse(rows: Iterable[dict], system: str) -> list[Dialogue]:
    """The ok conversations of an `augmenter converse` run."""
    return [
        Dialogue(
            str(r["conversation_id"]),
            system,
            _pairs(r.get("utterances")),
            len(_pairs(r.get("opening"))),
            _pairs(r.get("ground_truth")),
        )
        for r in rows
        if r.get("status") == "ok"
    ]


def human_conversations(dialogues: Iterable[Dialogue]) -> list[Dialogue]:
    """The human dialogues that simulated conversations continue (DSTC11's: real users and wizards), as the
    system "human": the same opening, then what the humans said; only those that go on past the opening."""
    return [
        Dialogue(d.id, HUMAN, list(d.ground_truth), d.human)
        for d in dialogues  # no truth: it is the truth
        if len(d.ground_truth) > d.human
    ]


def dialogues_from_eval(rows: Iterable[dict], system: str, history: int = 4, human: bool = False) -> list[Dialogue]:
    """The ok turns of an `augmenter eval` run as short dialogues: the last `history` utterances before the turn,
    the user's message, then the reply (the gold reply when `human`); the gold reply is the ground truth."""
    out = []
    for r in rows:
        if r.get("status", "ok") != "ok" or not isinstance(r.get("memory"), dict):
            continue
        before = _pairs(r["memory"].get("h_q"))[-history:] if history > 0 else []
        prefix = [*before, ("U", str(r["memory"].get("q", "")))]
        refs = r.get("references")
        gold = refs[0] if isinstance(refs, list) and refs and isinstance(refs[0], str) else None
        reply = gold if human else r.get("response")
        if not isinstance(reply, str) or not reply.strip():
            continue
        truth = [*prefix, ("S", str(gold))] if gold and not human else []
        out.append(Dialogue(str(r["dialogue_id"]), system, [*prefix, ("S", str(reply))], len(prefix), truth))
    return out


def load_systems(paths: Sequence[Path], human: bool = False, history: int = 4) -> dict[str, list[Dialogue]]:
    """{system: dialogues} from run directories (or sample directories: every run inside); the run's directory
    name is the system's name. `human`: add the gold replies of the first eval run as the system "human"."""
    runs: list[Path] = []
    for path in map(Path, paths):
        if (path / "records.jsonl").is_file():
            runs.append(path)
        elif path.is_dir():
            runs += sorted(p for p in path.iterdir() if (p / "records.jsonl").is_file())
        else:
            raise InputError(f"not a run or sample directory: {path}")
    if not runs:
        raise InputError("no runs with records.jsonl found")
    systems: dict[str, list[Dialogue]] = {}
    for run in runs:
        name = run.name if run.name not in systems else f"{run.parent.name}/{run.name}"
        rows = _read(run / "records.jsonl")
        if any("conversation_id" in r for r in rows):
            systems[name] = dialogues_from_converse([r for r in rows if "conversation_id" in r], name)
            if human and HUMAN not in systems:
                systems[HUMAN] = human_conversations(systems[name])
        else:
            rows = [r for r in rows if isinstance(r.get("dialogue_id"), str)]
            systems[name] = dialogues_from_eval(rows, name, history)
            if human and HUMAN not in systems:
                systems[HUMAN] = dialogues_from_eval(rows, HUMAN, history, human=True)
    if human and not systems.get(HUMAN):
        raise InputError(
            "human replies come from eval runs (their gold replies) or from conversations with a human "
            "continuation (DSTC11 openings): none was given"
        )
    return systems


def known_orderings(texts: Sequence[str], systems: Sequence[str], human: bool = False) -> list[tuple[str, str]]:
    """(better, worse) pairs from 'BETTER>WORSE' texts, checked against the systems' names; with `human`, the human
    gold replies above every other system come first."""
    pairs = [(HUMAN, s) for s in systems if s != HUMAN] if human else []
    for text in texts:
        better, sep, worse = (part.strip() for part in str(text).partition(">"))
        if not sep or not better or not worse or ">" in worse or better == worse:
            raise InputError(f"judge.known: {text!r} is not 'BETTER>WORSE' (two different system names)")
        unknown = [name for name in (better, worse) if name not in systems]
        if unknown:
            raise InputError(
                f"judge.known: no system {', '.join(map(repr, unknown))} among the runs given; "
                f"systems: {', '.join(systems)}"
            )
        if (better, worse) not in pairs:
            pairs.append((better, worse))
    return pairs


def first_dialogues(systems: dict[str, list[Dialogue]], limit: int | None) -> dict[str, list[Dialogue]]:
    """Only the first `limit` dialogue ids (in the order they first appear: for eval runs their seeded sample's)
    in every system: a smaller judging budget; raising it later keeps what is judged. None: all."""
    if limit is None:
        return systems
    if limit < 1:
        raise InputError(f"judge.limit must be at least 1 (or null for all), got {limit}")
    order = list(dict.fromkeys(d.id for ds in systems.values() for d in ds))
    keep = set(order[:limit])
    return {name: [d for d in ds if d.id in keep] for name, ds in systems.items()}


def _valid(record: dict) -> bool:
    """Whether a stored judgment has what the results read (a damaged one is asked again)."""
    return (
        isinstance(record.get("key"), str)
        and isinstance(record.get("pair"), str)
        and isinstance(record.get("dialogue_id"), str)
        and isinstance(record.get("judge"), str)
        and isinstance(record.get("verdict"), dict)
        and isinstance(record.get("systems"), list)
        and record.get("order") in (0, 1)
        and type(record.get("seed")) is int
        and record.get("status") in (OK, UNPARSED, PARTIAL, FAILED)
    )


@dataclass
class Task:
    """One question to a judge: its dialogues in the order shown, `pair` (the question without the order), the
    order (0 as planned, 1 swapped) and the sampling seed."""

    judge: str
    dialogues: tuple[Dialogue, ...]
    pair: str
    order: int
    seed: int

    @property
    def key(self) -> str:
        return f"{self.pair}|{self.order}|{self.seed}"


def plan(judges: dict[str, Judge], systems: dict[str, list[Dialogue]], seeds: Sequence[int]) -> list[Task]:
    """Every question: one per dialogue (UniEval, WikiChat); per conversation both orders of every two systems
    that both have it (Arena); both orders of each dialogue beside its ground truth (GTEval, `against_truth`)."""
    tasks = []
    by_id = {name: {d.id: d for d in dialogues} for name, dialogues in systems.items()}
    for name, judge in judges.items():
        questions: list[tuple[str, tuple[Dialogue, ...]]] = []
        if judge.arity == 1:
            questions = [(f"{name}|{d.system}|{d.id}", (d,)) for ds in systems.values() for d in ds]
        elif getattr(judge, "against_truth", False):
            for ds in systems.values():
                for d in ds:
                    truth = d.truth()
                    length = min(len(d.utterances), len(truth.utterances)) if truth else 0
                    if length > d.human:
                        questions.append((f"{name}|{d.system}|{d.id}", (d.cut(length), truth.cut(length))))
        else:
            for a, b in combinations(sorted(systems), 2):  # one key per pair, whatever order the runs come in
                for conv in sorted(set(by_id[a]) & set(by_id[b])):
                    questions.append((f"{name}|{a}|{b}|{conv}", (by_id[a][conv], by_id[b][conv])))
        for pair, shown in questions:
            orders = [shown] if len(shown) == 1 else [shown, shown[::-1]]
            tasks += [Task(name, tuple(o), pair, i, seed) for seed in seeds for i, o in enumerate(orders)]
    return tasks


class JudgeRun:
    """Runs `judges` ({name: Judge}) over `systems` with each seed of `seeds`, into `out_dir/judgments.jsonl`.
    `fingerprint`: what makes judgments comparable (judge model, prompts, settings); records of another fingerprint
    are refused unless `restart` (which discards them). A judge with `recompute` set (the rule checks: free and
    deterministic) is judged anew on every run, so a changed check never resumes old verdicts."""

    def __init__(
        self,
        judges: dict[str, Judge],
        systems: dict[str, list[Dialogue]],
        out_dir: Path,
        seeds: Sequence[int] = (0,),
        fingerprint: dict | None = None,
        restart: bool = False,
        progress: bool = True,
    ):
        if not judges:
            raise InputError("no judge to run")
        if not seeds:
            raise InputError("judge.seeds is empty: give at least one sampling seed")
        self.judges, self.systems, self.seeds = judges, systems, list(seeds)
        self.dir, self.fingerprint = Path(out_dir), redact_data(fingerprint or {})
        self.restart, self.progress = restart, progress
        self.path = self.dir / "judgments.jsonl"

    def run(self) -> list[dict]:
        """Every judgment of the plan (old and new), in plan order."""
        with run_lock(self.dir, "judge.out"):
            check_config(
                self.dir, self.path, self.fingerprint, self.restart, "give another judge.out or set judge.restart=true"
            )
            tasks = plan(self.judges, self.systems, self.seeds)
            rows = _read(self.path) if self.path.exists() else []
            done = {r["key"]: r for r in rows if _valid(r)}
            todo = [
                t
                for t in tasks
                if t.key not in done
                or done[t.key].get("status") == FAILED
                or getattr(self.judges[t.judge], "recompute", False)
            ]
            failed = 0
            bar = tqdm(
                total=len(tasks),
                initial=len(tasks) - len(todo),
                desc="judging",
                unit="judgment",
                disable=not self.progress,
                dynamic_ncols=True,
            )
            try:
                with bar, open(self.path, "a", encoding="utf-8") as sink:
                    for task in todo:
                        record = self._judge(task)
                        sink.write(json.dumps(record, ensure_ascii=False) + "\n")
                        sink.flush()
                        done[task.key] = record
                        failed += record["status"] == FAILED
                        bar.set_postfix({"judge": task.judge, "failed": failed})
                        bar.update()
            finally:  # one line per question, this plan's first; other judges' and seeds' judgments are kept
                planned = {t.key for t in tasks}
                rows = [done[t.key] for t in tasks if t.key in done]
                rest = [r for k, r in done.items() if k not in planned]
                write_atomic(self.path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows + rest))
            return rows

    def _judge(self, task: Task) -> dict:
        judgment = self.judges[task.judge].judge(task.dialogues, seed=task.seed)
        return redact_data(
            {
                "key": task.key,
                "pair": task.pair,
                "order": task.order,
                "seed": task.seed,
                "dialogue_id": task.dialogues[0].id,
                "systems": [d.system for d in task.dialogues],
                **judgment.to_dict(),
            }
        )
