"""The Working Memory as a policy observes it: a short text and five numbers, over the actions in a fixed order.

Shared by the gymnasium environment (its observation space) and the T5 policy (which reads a memory the same
way in `augmenter chat`), so neither imports the other and the policies need no gymnasium.
"""

from __future__ import annotations

import string

import numpy as np

from augmenter.memory.state import Action, Verdict, WorkingMemory

ACTIONS: list[Action] = list(Action)
CHARSET = "".join(c for c in string.printable if c not in "\x0b\x0c")
_ALLOWED = set(CHARSET)
N_FEATURES = 5


def observation_text(mem: WorkingMemory, max_chars: int = 2048) -> str:
    """The Working Memory in a few labelled lines, newest information last (the first snippet and each candidate
    clipped, so that a policy reading the text's start still sees the candidates); printable ASCII only
    (anything else becomes "?"), at most `max_chars` characters."""
    lines = [f"user: {mem.q}"]
    if mem.h_q:
        lines.append(f"before: {mem.h_q[-1].text}")
    lines.append(f"entities: {', '.join(e.name for e in mem.entities) or 'none'}")
    if mem.needs_knowledge is not None:
        lines.append(f"llm says it needs knowledge: {'yes' if mem.needs_knowledge else 'no'}")

    def clip(text, n):
        return text if len(text) <= n else text[: n - 3] + "..."

    lines.append(f"evidence: {len(mem.e)} snippets" + (f"; first: {clip(mem.e[0].text, 200)}" if mem.e else ""))
    for i, candidate in enumerate(mem.o):
        score = f" (utility {mem.u[i]:.2f})" if i < len(mem.u) else " (not verified)"
        counts = mem.verdict_counts(i)
        if any(counts.values()):
            score += (
                f" (claims: {counts[Verdict.SUPPORTED]} supported, {counts[Verdict.REFUTED]} refuted, "
                f"{counts[Verdict.NOT_ENOUGH_INFO]} not in the knowledge)"
            )
        lines.append(f"candidate {i + 1}{score}: {clip(candidate, 300)}")
    if mem.feedback:
        lines.append(f"feedback: {mem.feedback}")
    text = "".join(c if c in _ALLOWED else "?" for c in "\n".join(lines))
    return text[:max_chars]


def observation_features(mem: WorkingMemory, max_llm_calls: int) -> np.ndarray:
    """[has evidence, has candidate, last utility (-1 before any), LLM calls so far / the budget, a knowledge-base
    entity is mentioned (the linker's state-tracking, done before the first decision)], each in [-1, 1]."""
    features = np.array(
        [
            float(mem.has_evidence),
            float(mem.has_candidate),
            mem.u[-1] if mem.u else -1.0,
            min(1.0, mem.llm_calls / max_llm_calls),
            float(bool(mem.entities)),
        ],
        dtype=np.float32,
    )
    return np.clip(features, -1.0, 1.0)
