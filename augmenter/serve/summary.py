"""A turn's Working Memory as the `augmenter` field of a reply: evidence, candidates with their scores, feedback
and claims, the sources and citations of the answer, each action with its timing, and the turn's usage. Every
string is passed through `redact`."""

from __future__ import annotations

from typing import Any

from augmenter.memory import ActionRecord, EvidenceRef, WorkingMemory
from augmenter.redact import redact_data


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(float(value), digits)


def _detail(record: ActionRecord) -> str:
    """One line on what an action did (its note when it has one)."""
    action, inputs, outputs = record.action.value, record.inputs, record.outputs
    if action == "consolidate_knowledge" and "query" in inputs:
        entities = inputs.get("entities") or []
        detail = f"query: {inputs['query']!r}" + (f"; entities: {', '.join(entities)}" if entities else "")
    elif action == "verify_utility":
        detail = f"score {outputs.get('score', 0):.3f}: " + ("feedback" if outputs.get("feedback") else "pass")
    elif action == "ask_need_knowledge":
        detail = f"needs knowledge: {outputs.get('needs_knowledge')}"
    elif action == "send":
        detail = f"outcome: {outputs.get('outcome')}"
    else:
        detail = ""
    note = record.note or ""
    detail = "; ".join(part for part in (detail, note) if part)
    return f"(policy chose {record.requested.value}) {detail}" if record.requested else detail


def action_summary(record: ActionRecord, step: int) -> dict[str, Any]:
    """One action of the trace: what, a line of detail, milliseconds, LLM calls and tokens."""
    return redact_data(
        {
            "step": step,
            "action": record.action.value,
            "detail": _detail(record),
            "ms": round(1000 * (record.seconds + record.policy_seconds), 1),
            "llm_calls": record.llm_calls,
            "prompt_tokens": record.prompt_tokens,
            "completion_tokens": record.completion_tokens,
        }
    )


def _candidates(mem: WorkingMemory) -> list[dict[str, Any]]:
    out = []
    for i, text in enumerate(mem.o):
        verified = i < len(mem.u)
        checks = mem.checks[i] if i < len(mem.checks) else []
        out.append(
            {
                "index": i,
                "text": text,
                "score": _round(mem.u[i]) if verified else None,
                "feedback": mem.f[i] if verified else None,
                "passed": (mem.f[i] is None) if verified else None,
                "sent": i == mem.sent_index,
                "claims": [
                    {
                        "claim": c.claim,
                        "verdict": c.verdict.value,
                        "p_supported": _round(c.p_supported, 3),
                        "evidence": [ref.id for ref in c.evidence],
                        "reason": c.reason,
                    }
                    for c in checks
                ],
            }
        )
    return out


def _source(n: int, ref: EvidenceRef) -> dict[str, Any]:
    """A numbered source; a document's passage also names its file, page and headings (`where`), the sentence
    quoted (`quote`) and the whole passage it was quoted from (`passage`)."""
    out: dict[str, Any] = {"n": n, "id": ref.id, "text": ref.text}
    if ref.location is not None:
        out.update(where=ref.location.label(), location=ref.location.model_dump(), quote=ref.quote, passage=ref.passage)
    return out


def usage(mem: WorkingMemory) -> dict[str, int]:
    """The turn's real LLM cost: every call (responses, checks, queries), its tokens; cached calls among them."""
    return {
        "prompt_tokens": mem.prompt_tokens,
        "completion_tokens": mem.completion_tokens,
        "total_tokens": mem.prompt_tokens + mem.completion_tokens,
        "llm_calls": mem.llm_calls,
        "cached_llm_calls": sum(r.llm_cached_calls for r in mem.trace),
    }


def turn_summary(mem: WorkingMemory, queue_seconds: float = 0.0, request_seconds: float | None = None) -> dict:
    """The `augmenter` field of a reply (see the module docstring). Timings: queued for an agent, the turn, its LLM
    and non-LLM parts, and the whole request on the server up to this summary (reading and checking it included)."""
    sources, claims = mem.sources()
    llm_seconds = sum(r.llm_seconds for r in mem.trace)
    return redact_data(
        {
            "outcome": mem.outcome,
            "response": mem.response,
            "entities": [m.name for m in mem.entities],
            "evidence": [
                {
                    "id": s.id,
                    "text": s.render(),
                    "score": _round(s.score),
                    **({"where": s.location.label()} if s.location is not None else {}),
                }
                for s in mem.e
            ],
            "candidates": _candidates(mem),
            "sources": [_source(n, ref) for n, ref in enumerate(sources, 1)],
            "cited_claims": [{"claim": claim, "sources": numbers} for claim, numbers in claims],
            "citations": mem.citation_records(),
            "actions": [action_summary(r, i) for i, r in enumerate(mem.trace, 1)],
            "warnings": list(mem.warnings),
            "timings": {
                "queue_seconds": _round(queue_seconds),
                "turn_seconds": _round(mem.wall_seconds),
                "llm_seconds": _round(llm_seconds),
                "overhead_seconds": _round(mem.non_llm_seconds),
                "request_seconds": _round(request_seconds),
            },
            "usage": usage(mem),
        }
    )
