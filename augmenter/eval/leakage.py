"""Few-shot leakage as a measure: the share of turns whose response copies the prompt's few-shot examples
(the detection itself is `augmenter.prompts.leakage`, which the executor also uses to drop leaking sentences)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from augmenter.prompts.engine import PromptTemplate
from augmenter.prompts.leakage import allowed_text, fewshot_entities, fewshot_leaks

__all__ = ["allowed_text", "fewshot_entities", "fewshot_leaks", "leak_rate"]


def _pair(item: Any) -> tuple[str, str]:
    """(response, allowed) from a pair, a Working Memory, or a record holding one under "memory" (an eval
    record, a line of `augmenter chat --output`)."""
    if isinstance(item, (tuple, list)) and len(item) == 2:
        return str(item[0] or ""), str(item[1] or "")
    if hasattr(item, "model_dump"):
        item = item.model_dump(mode="json")
    if isinstance(item, dict):
        memory = item.get("memory", item)
        response = item.get("response", memory.get("response")) if "memory" in item else memory.get("response")
        return str(response or ""), allowed_text(memory)
    raise TypeError(f"expected a (response, allowed) pair, a Working Memory or a record, got {type(item).__name__}")


def leak_rate(
    items: Iterable[Any], prompt: PromptTemplate, n: int = 5, max_examples: int = 10
) -> tuple[float | None, list[dict]]:
    """The share of turns whose response leaks few-shot content (None for no turns) and up to `max_examples`
    examples ({response, leaks}). `items`: (response, allowed) pairs, Working Memories or records."""
    turns = leaking = 0
    examples: list[dict] = []
    for item in items:
        response, allowed = _pair(item)
        turns += 1
        leaks = fewshot_leaks(response, prompt, allowed, n=n)
        if leaks:
            leaking += 1
            if len(examples) < max_examples:
                examples.append({"response": response, "leaks": leaks})
    return (leaking / turns if turns else None), examples
