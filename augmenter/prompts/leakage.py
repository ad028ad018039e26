"""Few-shot leakage: when an answer copies the prompt's few-shot examples instead of the turn's own knowledge.

A small model that cannot answer from the evidence often falls back on the examples in its prompt (e.g. "located
in the North", copied from a few-shot example, as the answer to a question the evidence does not answer). A
response leaks when it contains, and the turn's own text (`allowed`: its query, history and evidence) does not:

- a few-shot entity: a name in brackets (`[ALPHA HOTEL]`) in a few-shot user message, or a capitalised
  multi-word name ("Alpha Hotel", "The Nirala") in a few-shot assistant answer;
- a few-shot phrase: a word n-gram (5 words by default, within one sentence, after `normalize_answer`: lower
  case, no punctuation, no articles) of a few-shot assistant answer (the example's reply, and the "Assistant:"
  lines of the example's context). N-grams that the instruction also contains are not counted: the prompt asks
  for them (e.g. its "I don't have that information").

Copying a name or a phrase that is in the turn's own evidence is grounding, not leakage; so is an n-gram all of
whose words the turn's own text has ("Alpha Hotel is located in..." when the evidence names Alpha Hotel and says
"It is located in..."). Phrases shorter than n words ("in the north" is "in north" once normalised) are caught
only through the names around them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from augmenter.prompts.engine import PromptTemplate
from augmenter.text import normalize_answer
from augmenter.verification.splitter import split_sentences

_BRACKETED = re.compile(r"\[([^\[\]\n]{2,60})\]")
# two or more capitalised words in a row ("Alpha Hotel", "The Nirala", "EXAMPLE PLACE"), on one line
_CAPITALISED = re.compile(r"\b[A-Z][\w'’&-]*(?:[ \t]+(?:of[ \t]+|and[ \t]+|&[ \t]+)?[A-Z][\w'’&-]*)+")
_ASSISTANT_LINE = re.compile(r"^[ \t]*Assistant:[ \t]*(.+)$", re.MULTILINE)


_SENTENCE_END = re.compile(r"[.!?;:]+(?=\s|$)|\n")  # not the point of "4.50"


def _words(text: str) -> list[str]:
    return normalize_answer(text).split()


def _sentences(text: str) -> list[list[str]]:
    """The normalised words of each sentence (n-grams do not run across sentences)."""
    return [words for part in _SENTENCE_END.split(text) if (words := _words(part))]


def _ngrams(words: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def _text_ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    return {gram for words in _sentences(text) for gram in _ngrams(words, n)}


def _contains(words: Sequence[str], phrase: Sequence[str]) -> bool:
    n = len(phrase)
    return n > 0 and any(tuple(words[i : i + n]) == tuple(phrase) for i in range(len(words) - n + 1))


def fewshot_answers(prompt: PromptTemplate) -> list[str]:
    """The assistant text of the few-shot examples: each reply, and the "Assistant:" lines of each example's
    context (the example dialogue's earlier replies)."""
    texts = []
    for shot in prompt.few_shot:
        texts += _ASSISTANT_LINE.findall(str(shot.get("user", "")))
        texts.append(str(shot.get("assistant", "")))
    return [t.strip() for t in texts if t.strip()]


def fewshot_entities(prompt: PromptTemplate) -> list[str]:
    """The names the few-shot examples use: bracketed names in their user messages and capitalised multi-word
    names in their answers, each once (by normalised form), in order of appearance."""
    names: dict[tuple[str, ...], str] = {}
    candidates = [m for shot in prompt.few_shot for m in _BRACKETED.findall(str(shot.get("user", "")))]
    candidates += [m for text in fewshot_answers(prompt) for m in _CAPITALISED.findall(text)]
    for name in candidates:
        key = tuple(_words(name))
        if key and key not in names and len(" ".join(key)) >= 3:
            names[key] = name.strip()
    return list(names.values())


def fewshot_phrases(prompt: PromptTemplate, n: int = 5) -> set[tuple[str, ...]]:
    """The normalised word n-grams of the few-shot answers, less those the instruction contains."""
    phrases = set()
    for text in fewshot_answers(prompt):
        phrases |= _text_ngrams(text, n)
    return phrases - _text_ngrams(prompt.instruction, n)


def fewshot_leaks(response: str, prompt: PromptTemplate, allowed: str = "", n: int = 5) -> list[str]:
    """What `response` copies from the few-shot examples of `prompt` that `allowed` (the turn's own query,
    history and evidence) does not contain: few-shot entity names (as the prompt writes them), then copied
    phrases (maximal runs of leaked n-grams, normalised). Empty: no leak."""
    said, own = _words(response), _words(allowed)
    leaks = []
    for name in fewshot_entities(prompt):
        key = _words(name)
        if _contains(said, key) and not _contains(own, key):
            leaks.append(name)
    own_grams, own_words = _text_ngrams(allowed, n), set(own)
    phrases = fewshot_phrases(prompt, n)
    for words in _sentences(response):
        spans: list[list[int]] = []  # overlapping or adjacent leaked n-grams make one copied phrase
        for i in range(len(words) - n + 1):
            gram = tuple(words[i : i + n])
            if gram in phrases and gram not in own_grams and not own_words.issuperset(gram):
                if spans and i <= spans[-1][1]:
                    spans[-1][1] = i + n
                else:
                    spans.append([i, i + n])
        leaks += [" ".join(words[a:b]) for a, b in spans if " ".join(words[a:b]) not in leaks]
    return leaks


def allowed_text(memory: Any, system_turns: bool = True) -> str:
    """The turn's own text from a Working Memory (the object or its JSON dump): q, h_q, the evidence (entity
    names included) and any given knowledge. `system_turns=False` leaves out the assistant's turns of h_q: in a
    live session they are the agent's own earlier replies, which may be leaks themselves (in a data set's
    dialogue they are human-written, and count)."""
    if hasattr(memory, "model_dump"):
        memory = memory.model_dump(mode="json")
    parts = [str(memory.get("q") or "")]
    parts += [str(t.get("text") or "") for t in memory.get("h_q") or [] if system_turns or t.get("speaker") != "S"]
    for snippet in [*(memory.get("e") or []), *(memory.get("given") or [])]:
        parts += [str(snippet.get("entity_name") or ""), str(snippet.get("text") or "")]
        parts += [str(c) for c in snippet.get("context") or []]
    return "\n".join(p for p in parts if p)


def drop_fewshot_leaks(text: str, prompt: PromptTemplate, allowed: str = "", n: int = 5) -> tuple[str, list[str]]:
    """`text` without its sentences that copy few-shot content (`fewshot_leaks`), and what they copied. Empty
    text when every sentence leaks, or when a leak spans sentences so that no sentence alone shows it."""
    leaks = fewshot_leaks(text, prompt, allowed, n)
    if not leaks:
        return text, []
    kept = [s for s in split_sentences(text) if not fewshot_leaks(s, prompt, allowed, n)]
    rest = " ".join(kept)
    return ("" if fewshot_leaks(rest, prompt, allowed, n) else rest), leaks
