"""Shows a turn's Working Memory: actions taken, evidence, each candidate with its score and feedback.

Every piece of user, knowledge and model text goes through `safe` (no markup, no control sequences).
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from augmenter.cli.safe_text import one_line, safe
from augmenter.memory import WorkingMemory


def _detail(r) -> str:
    detail = r.note or ""
    if r.action.value == "consolidate_knowledge" and "query" in r.inputs:
        entities = r.inputs.get("entities")
        detail = f"query: {r.inputs['query']!r}" + (f" entities: {', '.join(entities)}" if entities else "")
    elif r.action.value == "verify_utility":
        detail = f"score {r.outputs.get('score', 0):.3f} → " + ("feedback" if r.outputs.get("feedback") else "pass")
    elif r.action.value == "ask_need_knowledge":
        detail = f"needs knowledge: {r.outputs.get('needs_knowledge')}"
    return f"(policy chose {r.requested.value}) {detail}" if r.requested else detail


def show_trace(mem: WorkingMemory, console: Console) -> None:
    actions = Table(title="actions", show_edge=False, pad_edge=False)
    for col in ("#", "action", "detail", "ms", "LLM calls", "tokens in/out"):
        actions.add_column(col, justify="right" if col in ("#", "ms", "LLM calls") else "left", no_wrap=col != "detail")
    for i, r in enumerate(mem.trace, 1):
        actions.add_row(
            str(i),
            r.action.value,
            safe(_detail(r)),
            f"{1000 * (r.seconds + r.policy_seconds):.0f}",
            str(r.llm_calls),
            f"{r.prompt_tokens}/{r.completion_tokens}" if r.llm_calls else "",
        )
    console.print(actions)
    if mem.entities:
        names = ", ".join(f"{m.name} ({'q' if m.in_query else 'h_q'})" for m in mem.entities)
        console.print(safe(("entities: ", "bold"), names))
    if mem.e:
        console.print(safe(("evidence e:", "bold")))
        for s in mem.e:
            score = f" (retrieval score {s.score})" if s.score is not None else ""
            console.print(safe("  ", (s.id + score, "dim"), " ", s.render()))
    for i, cand in enumerate(mem.o):
        verdict = ""
        if i < len(mem.u):
            verdict = f"u={mem.u[i]:.3f} " + (f"f={mem.f[i]!r}" if mem.f[i] else "pass")
        console.print(safe((f"candidate {i + 1}: ", "bold"), cand, "  ", (verdict, "cyan")))
        for check in mem.checks[i] if i < len(mem.checks) else []:
            where = f" <- {check.evidence[0].id}" if check.evidence else ""
            why = f" ({check.reason})" if check.reason else ""
            console.print(
                safe("    ", (check.verdict.value, "magenta"), f" p={check.p_supported:.2f} ", check.claim, why, where)
            )
    for w in mem.warnings:
        console.print(safe(("warning: ", "yellow"), one_line(w)))
    s = mem.summary()
    console.print(
        f"[dim]{s['llm_calls']} LLM calls, {s['prompt_tokens']} prompt + {s['completion_tokens']} completion "
        f"tokens, {s['wall_seconds']:.2f} s ({1000 * s['non_llm_seconds']:.1f} ms outside the LLM)[/dim]"
    )


OUTCOME_NOTES = {
    "partial": "no candidate was fully supported: only its supported claims are shown",
    "quoted": "the knowledge's own words, quoted: no draft of the model was sent",
    "abstained": "nothing found answers it for sure: augmenter says so instead of guessing",
}


def show_sources(mem: WorkingMemory, console: Console) -> None:
    """The sources under the answer: each numbered snippet, and which claims cite it."""
    if mem.outcome in OUTCOME_NOTES:
        console.print(safe(("  (" + OUTCOME_NOTES[mem.outcome] + ")", "yellow")))
    sources, claims = mem.sources()
    if not sources:
        return
    console.print(safe(("  sources:", "bold")))
    for n, ref in enumerate(sources, 1):
        if ref.location is not None:  # a document's passage: the file, the page, the headings, then the quote
            console.print(safe("  ", (f"[{n}] {ref.location.label()}:", "dim"), f' "{ref.quote}"'))
        else:
            console.print(safe("  ", (f"[{n}] {ref.id}", "dim"), " ", ref.text))
    for claim, numbers in claims:
        console.print(safe(("  " + "".join(f"[{n}]" for n in numbers) + " " + claim, "dim")))
