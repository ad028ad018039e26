"""OTT-QA dev (the paper's Wiki QA, section 4): questions, the 789 dev tables and their 20,191 linked passages.

Layout (`../shared/data/ott-qa`): `released_data/dev.json` (question, table_id, answer-text),
`dev_tables_tok/<table_id>.json` (title, header, data: rows of [cell text, [links]]), and
`dev_request_tok/<table_id>.json` ({link: passage text}). The knowledge source here is the dev tables and their
linked passages, not the 400K-table open corpus (which is not available).
"""

from __future__ import annotations

import json
from pathlib import Path

from augmenter.errors import InputError
from augmenter.knowledge.chainer import TableTextCorpus
from augmenter.knowledge.tables import Cell, Table
from augmenter.settings import Positive
from augmenter.storage import json_error
from augmenter.tasks.base import Turn, seeded_sample


def _read(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"OTT-QA file not found: {path}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON: {json_error(exc)}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def load_tables(root: str | Path, table_ids: set[str] | None = None) -> dict[str, Table]:
    folder = Path(root) / "dev_tables_tok"
    if not folder.is_dir():
        raise InputError(f"OTT-QA tables not found: {folder}")
    tables = {}
    for path in sorted(folder.glob("*.json")):
        if table_ids is not None and path.stem not in table_ids:
            continue
        raw = _read(path)
        header = [h[0] for h in raw["header"]]
        rows = [[Cell(c[0], list(c[1])) for c in row] for row in raw["data"]]
        tables[path.stem] = Table(path.stem, raw.get("title", path.stem), header, rows)
    return tables


def load_passages(root: str | Path, table_ids: set[str] | None = None) -> dict[str, str]:
    """Every linked passage, by link (the same page linked from two tables is one passage)."""
    folder = Path(root) / "dev_request_tok"
    if not folder.is_dir():
        raise InputError(f"OTT-QA passages not found: {folder}")
    passages: dict[str, str] = {}
    for path in sorted(folder.glob("*.json")):
        if table_ids is None or path.stem in table_ids:
            passages.update(_read(path))
    return passages


def load_questions(root: str | Path, limit: int | None = None, seed: int | None = 0) -> list[Turn]:
    """The dev questions as turns (no history; `references`: the answer), in file order; optionally a seeded
    sample of `limit`."""
    raw = _read(Path(root) / "released_data" / "dev.json")
    return seeded_sample(
        [
            Turn(q["question_id"], q["question"], references=[q["answer-text"]], labels=[{"table_id": q["table_id"]}])
            for q in raw
        ],
        limit,
        seed,
    )


def load_corpus(root: str | Path, max_passage_chars: Positive = 600) -> TableTextCorpus:
    """Every dev table's rows and every linked passage, as one retrieval corpus (`knowledge=ottqa`)."""
    tables = load_tables(root)
    return TableTextCorpus(tables, load_passages(root, set(tables)), max_passage_chars=max_passage_chars)
