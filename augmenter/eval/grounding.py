"""Grounded precision of sent responses (FActScore-like): split each response into claims, judge each against the
turn's gold knowledge with a verifier, and count the responses that carry a claim the gold knowledge does not
support, the "I don't know" replies and the claims per response.

`augmenter ground <run or sample dir> [--verifier fast|llm|combined]` writes `grounding-<verifier>.json` into each
run directory (per turn and summed up); `augmenter report` shows it beside KF1.
"""

from __future__ import annotations

import json
from pathlib import Path
from statistics import mean
from typing import Any

from tqdm import tqdm

from augmenter.eval.runner import failure, read_records
from augmenter.memory import Verdict
from augmenter.storage import write_atomic
from augmenter.verification.evidence import units
from augmenter.verification.splitter import is_abstention, is_claim, split_sentences


def _gold_units(record: dict, knowledge_base=None) -> list[str]:
    """The gold snippets as the claims utility sees evidence ("[entity] text", long ones cut into sentences); from
    the records' gold texts when the knowledge base is not at hand."""
    ids = record.get("gold_ids") or []
    if knowledge_base is not None and ids:
        snippets = [knowledge_base.by_id[i] for i in ids if i in knowledge_base.by_id]
        if snippets:
            return [u.text for u in units(snippets)]
    return list(record.get("gold_knowledge") or [])


def ground_record(record: dict, verifier, knowledge_base=None) -> dict[str, Any]:
    response = record.get("response") or ""
    outcome = record.get("outcome") or (record.get("memory") or {}).get("outcome")
    sentences = split_sentences(response)
    claims = [] if outcome == "abstained" else [s for s in sentences if is_claim(s)]
    idk = outcome == "abstained" or (not claims and any(is_abstention(s) for s in sentences))
    gold = _gold_units(record, knowledge_base)
    q = (record.get("memory") or {}).get("q", "")
    judged = []
    for claim in claims:
        j = verifier.judge(claim, gold, context=q)
        judged.append({"claim": claim, "verdict": j.verdict.value, "p_supported": round(j.p_supported, 4)})
    bad = [c for c in judged if c["verdict"] != Verdict.SUPPORTED.value]
    return {
        "dialogue_id": record["dialogue_id"],
        "claims": judged,
        "unsupported": len(bad),
        "refuted": sum(c["verdict"] == Verdict.REFUTED.value for c in judged),
        "idk": idk,
        "outcome": outcome,
    }


def summarize_grounding(turns: list[dict]) -> dict[str, Any]:
    if not turns:
        return {"turns": 0}
    claims = sum(len(t["claims"]) for t in turns)
    return {
        "turns": len(turns),
        "unsupported_response_rate": 100.0 * mean(t["unsupported"] > 0 for t in turns),
        "refuted_response_rate": 100.0 * mean(t["refuted"] > 0 for t in turns),
        "claims_per_response": claims / len(turns),
        "supported_claim_share": 100.0 * (1 - sum(t["unsupported"] for t in turns) / claims) if claims else None,
        "idk_rate": 100.0 * mean(bool(t["idk"]) for t in turns),
    }


def ground_run(run_dir: Path, verifier, verifier_name: str, knowledge_base=None, progress: bool = True) -> dict:
    """Judge every record of a run (resumable: turns already in the file are kept) and write the result."""
    records = [r for r in read_records(run_dir / "records.jsonl") if failure(r) is None]  # failed turns: not judged
    out = run_dir / f"grounding-{verifier_name}.json"
    previous: dict[str, dict] = {}
    if out.exists():
        try:
            previous = {t["dialogue_id"]: t for t in json.loads(out.read_text(encoding="utf-8"))["per_turn"]}
        except (json.JSONDecodeError, KeyError, TypeError):
            previous = {}
    turns = []
    for record in tqdm(records, desc=f"grounding {run_dir.name}", unit="turn", disable=not progress):
        old = previous.get(record["dialogue_id"])
        turns.append(
            old
            if old is not None and old.get("response") == record.get("response")
            else {**ground_record(record, verifier, knowledge_base), "response": record.get("response")}
        )
    result = {"run": run_dir.name, "verifier": verifier_name, **summarize_grounding(turns), "per_turn": turns}
    write_atomic(out, json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    return result


def load_grounding(run_dir: Path, verifier_name: str | None = None) -> dict | None:
    """A run's grounding result (that of `verifier_name`, else the best available: combined, llm, fast)."""
    for name in [verifier_name] if verifier_name else ["combined", "llm", "fast"]:
        path = run_dir / f"grounding-{name}.json"
        if path.exists():
            try:
                return json.loads(path.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                return None
    return None
