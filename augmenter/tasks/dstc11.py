"""DSTC11 Track 5 instances in the published format: `<split>/logs.json` + `<split>/labels.json`."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from augmenter.errors import InputError
from augmenter.memory import Utterance


@dataclass
class Instance:
    """One partial dialogue ending in a user turn, with its labels."""

    index: int  # position in logs.json: the dialogue id
    history: list[Utterance]
    q: str
    target: bool  # knowledge-seeking?
    knowledge: list[dict] = field(default_factory=list)  # gold snippet references
    response: Optional[str] = None  # gold response


def load_instances(split_dir: str | Path, knowledge_seeking_only: bool = False, limit: Optional[int] = None,
                   seed: Optional[int] = None) -> list[Instance]:
    """Read a split; optionally keep knowledge-seeking turns only, and a seeded sample of `limit` of them."""
    split_dir = Path(split_dir)
    try:
        logs = json.loads((split_dir / "logs.json").read_text(encoding="utf-8"))
        labels = json.loads((split_dir / "labels.json").read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InputError(f"DSTC11 split not found: {exc.filename}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{split_dir}: logs.json/labels.json are not valid JSON ({exc})") from None
    if len(logs) != len(labels):
        raise InputError(f"{split_dir}: {len(logs)} logs but {len(labels)} labels")
    out = []
    for i, (log, label) in enumerate(zip(logs, labels)):
        if knowledge_seeking_only and not label.get("target"):
            continue
        turns = [Utterance(speaker=t["speaker"], text=t["text"]) for t in log]
        out.append(Instance(i, turns[:-1], turns[-1].text, bool(label.get("target")),
                            label.get("knowledge", []), label.get("response")))
    if limit is not None and limit < len(out):
        out = sorted(random.Random(seed).sample(out, limit), key=lambda x: x.index)
    return out
