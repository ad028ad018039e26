"""Shows a turn's Working Memory: actions taken, evidence, each candidate with its score and feedback."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from augmenter.memory import WorkingMemory


def show_trace(mem: WorkingMemory, console: Console) -> None:
    actions = Table(title="actions", show_edge=False, pad_edge=False)
    for col in ("#", "action", "detail", "ms", "LLM calls", "tokens in/out"):
        actions.add_column(col, justify="right" if col in ("#", "ms", "LLM calls") else "left",
                           no_wrap=col != "detail")
    for i, r in enumerate(mem.trace, 1):
        detail = r.note or ""
        if r.action.value == "consolidate_knowledge" and "query" in r.inputs:
            detail = f"query: {r.inputs['query']!r}" + (f" entities: {', '.join(r.inputs['entities'])}" if r.inputs.get("entities") else "")
        elif r.action.value == "verify_utility":
            detail = f"score {r.outputs.get('score', 0):.3f}" + (" → feedback" if r.outputs.get("feedback") else " → pass")
        elif r.action.value == "ask_need_knowledge":
            detail = f"needs knowledge: {r.outputs.get('needs_knowledge')}"
        if r.requested:
            detail = f"(policy chose {r.requested.value}) {detail}"
        actions.add_row(str(i), r.action.value, escape(detail), f"{1000 * (r.seconds + r.policy_seconds):.0f}",
                        str(r.llm_calls), f"{r.prompt_tokens}/{r.completion_tokens}" if r.llm_calls else "")
    console.print(actions)
    if mem.entities:
        console.print("[bold]entities:[/bold] " + escape(", ".join(f"{m.name} ({'q' if m.in_query else 'h_q'})"
                                                                for m in mem.entities)), highlight=False)
    if mem.e:
        console.print("[bold]evidence e:[/bold]")
        for s in mem.e:
            console.print(f"  [dim]{escape(s.id)} {s.score if s.score is not None else ''}[/dim] {escape(s.render())}",
                          highlight=False)
    for i, cand in enumerate(mem.o):
        verdict = ""
        if i < len(mem.u):
            verdict = f"u={mem.u[i]:.3f} " + (f"f={mem.f[i]!r}" if mem.f[i] else "pass")
        console.print(f"[bold]candidate {i + 1}:[/bold] {escape(cand)}  [cyan]{escape(verdict)}[/cyan]", highlight=False)
        for check in (mem.checks[i] if i < len(mem.checks) else []):
            where = f" <- {escape(check.evidence[0].id)}" if check.evidence else ""
            why = f" ({escape(check.reason)})" if check.reason else ""
            console.print(f"    [magenta]{check.verdict.value}[/magenta] p={check.p_supported:.2f} "
                          f"{escape(check.claim)}{why}{where}", highlight=False)
    for w in mem.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(w)}", highlight=False)
    s = mem.summary()
    console.print(f"[dim]{s['llm_calls']} LLM calls, {s['prompt_tokens']}+{s['completion_tokens']} tokens, "
                  f"{s['wall_seconds']:.2f} s ({1000 * s['non_llm_seconds']:.1f} ms outside the LLM)[/dim]")


OUTCOME_NOTES = {
    "partial": "no candidate was fully supported: only its supported claims are shown",
    "abstained": "no candidate was supported by the knowledge: augmenter says so instead of guessing",
}


def show_sources(mem: WorkingMemory, console: Console) -> None:
    """The sources under the answer: each numbered snippet, and which claims cite it."""
    if mem.outcome in OUTCOME_NOTES:
        console.print(f"  [yellow]({OUTCOME_NOTES[mem.outcome]})[/yellow]", highlight=False)
    sources, claims = mem.sources()
    if not sources:
        return
    console.print("  [bold]sources:[/bold]", highlight=False)
    for n, ref in enumerate(sources, 1):
        console.print(f"  [dim][{n}] {escape(ref.id)}[/dim] {escape(ref.text)}", highlight=False)
    for claim, numbers in claims:
        marks = "".join(f"[{n}]" for n in numbers)
        console.print(f"  [dim]{escape(marks)} {escape(claim)}[/dim]", highlight=False)
