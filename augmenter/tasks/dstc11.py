"""DSTC11 Track 5 instances in the published format: `<split>/logs.json` + `<split>/labels.json`."""

from __future__ import annotations

import json
from pathlib import Path

from augmenter.errors import InputError
from augmenter.memory import Utterance
from augmenter.storage import json_error
from augmenter.tasks.base import Turn, seeded_sample


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"DSTC11 split not found: {path}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON: {json_error(exc)}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def load_turns(
    split_dir: str | Path,
    knowledge=None,
    knowledge_seeking_only: bool = False,
    limit: int | None = None,
    seed: int | None = None,
) -> list[Turn]:
    """Read a split's turns (id: the dialogue's position in logs.json; `labels`: its gold knowledge references,
    resolved into `gold` snippets when `knowledge`, the knowledge base, is given); optionally knowledge-seeking
    turns only, and a seeded sample of `limit` of them."""
    split_dir = Path(split_dir)
    logs, labels = (_read_json(split_dir / name) for name in ("logs.json", "labels.json"))
    if len(logs) != len(labels):
        raise InputError(f"{split_dir}: {len(logs)} logs but {len(labels)} labels")
    out = []
    for i, (log, label) in enumerate(zip(logs, labels)):
        if knowledge_seeking_only and not label.get("target"):
            continue
        turns = [Utterance(speaker=t["speaker"], text=t["text"]) for t in log]
        refs = label.get("knowledge", [])
        response = label.get("response")
        out.append(
            Turn(
                str(i),
                turns[-1].text,
                turns[:-1],
                [response] if response is not None else [],
                knowledge.gold(refs) if knowledge is not None else [],
                bool(label.get("target")),
                refs,
            )
        )
    return seeded_sample(out, limit, seed)
