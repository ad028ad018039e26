"""Reading a judge model's answer. Each parser returns None for an answer without a verdict in the asked format:
nothing is guessed (a missing choice is not a tie, a missing score is not a 3)."""

from __future__ import annotations

import re

_SEP = r"\s*[:：=\-]?\s*\**\s*"  # "Choice: ", "**Choice:** ", "Choice - ", "choice="


def _answer(text: str, label: str) -> str:
    """What follows the first `label` ("Choice") up to the end of its line, a ";" or "Reason", without
    parentheses; else the answer's own first line (a model that answers without the label)."""
    found = re.search(rf"\b{label}\**{_SEP}(.*)", text, re.IGNORECASE)
    segment = found.group(1) if found else (text.strip().splitlines() or [""])[0]
    segment = re.split(r";|\breason\b", segment, maxsplit=1, flags=re.IGNORECASE)[0]
    return re.sub(r"\([^)]*\)", " ", segment)


def _one(options: list[str]) -> str | None:
    """The one option named, or None when none or several are (an echo of the format: "Yes or No")."""
    named = set(options)
    return options[0] if len(named) == 1 else None


def parse_yes_no_index(text: str, length: int) -> dict | None:
    """UniEval: {"ai": bool, "index": 1-based index of the first AI utterance or None}; None without a choice.
    "Choice: Yes/No" (or a first line that says only one of them); "Index: n" with 1 <= n <= `length` (else
    None)."""
    choice = _one([w.lower() for w in re.findall(r"\b(yes|no)\b", _answer(text, "choice"), re.IGNORECASE)])
    if choice is None:
        return None
    ai = choice == "yes"
    index = None
    found = re.search(rf"\bindex\**{_SEP}(\d+)", text, re.IGNORECASE)
    if ai and found and 1 <= int(found.group(1)) <= length:
        index = int(found.group(1))
    return {"ai": ai, "index": index}


def parse_pair_choice(text: str) -> str | None:
    """Arena and GTEval: "1", "2" (that conversation is AI-involved), "both" or "neither"; None without a choice
    or with several ("Conversation 1 or Conversation 2"). Read after the first "Choice" label, else from the
    answer's first line."""
    options = [
        (number or word).lower()
        for number, word in re.findall(
            r"\bconversation\s*([12])\b|\b(both|neither|none)\b", _answer(text, "choice"), re.IGNORECASE
        )
    ]
    choice = _one(["neither" if o == "none" else o for o in options])
    return choice


CRITERIA = {  # WikiChat's five criteria, each with the names a model may give it
    "relevant": r"relevan(?:t|ce|cy)",
    "informational": r"informa(?:tional|tive|tiveness)",
    "natural": r"natural(?:ness)?",
    "non_repetitive": r"non[\s-]?repetitive(?:ness)?|non[\s-]?repetition",
    "temporal": r"temporal(?:ly)?(?:[\s-]+(?:correct(?:ness)?|accura(?:te|cy)))?",
}


def _score(rest: str) -> int | None:
    """A 1-5 score from the text after a criterion's name: "4/5", "score: 4", "(4)" or one lone digit."""
    for pattern in (r"\b([1-5])\s*/\s*5\b", r"\bscore\**\s*[:=]?\s*\**([1-5])\b(?!\s*/)", r"\(([1-5])\)"):
        found = re.findall(pattern, rest, re.IGNORECASE)
        if found:
            return int(found[-1])
    if re.search(r"\d+\s*/\s*(?!5\b)\d+", rest):  # a score on another scale ("80/100"): not ours to convert
        return None
    lone = re.findall(r"(?<![\d.])\b(\d+)\b(?![\d.])", rest)
    return int(lone[0]) if len(lone) == 1 and 1 <= int(lone[0]) <= 5 else None


def parse_criteria(text: str) -> dict[str, int | None]:
    """WikiChat: {criterion: 1-5 or None} from lines "Relevant: <reason> 4/5" (the first line naming each)."""
    scores: dict[str, int | None] = {name: None for name in CRITERIA}
    lines = text.splitlines()
    for name, pattern in CRITERIA.items():
        for i, line in enumerate(lines):
            head = re.match(rf"\s*(?:[-*#\d.)\s]*)\**\s*(?:{pattern})\**\s*[:：\-]\s*(.*)", line, re.IGNORECASE)
            if not head:
                continue
            rest = head.group(1)
            score = _score(rest)
            if score is None and not rest.strip() and i + 1 < len(lines):  # the score on the next line
                score = _score(lines[i + 1])
            scores[name] = score
            break
    return scores
