"""LLM judges of whole conversations, behind one protocol (`Judge`), usable with any LLM backend:
BotChat's UniEval, Arena and GTEval (`botchat`), WikiChat's five criteria (`wikichat`); a rule-based reference
judge without an LLM (`checks`: augmenter's repetition and dodge checks, asked the Arena question); Bootstrap Elo
(`elo`); position bias and self-consistency (`validity`); running them resumably over systems' runs (`run`)."""

from __future__ import annotations

from collections.abc import Sequence

from augmenter.errors import InputError
from augmenter.judges.base import Dialogue, Judge, Judgment, LLMJudge, transcript
from augmenter.judges.botchat import ArenaJudge, GTEvalJudge, UniEvalJudge, passes_at
from augmenter.judges.checks import ChecksJudge
from augmenter.judges.elo import EloSettings, bootstrap_elo, elo
from augmenter.judges.wikichat import WikiChatJudge

LLM_JUDGES = {"arena": ArenaJudge, "gteval": GTEvalJudge, "unieval": UniEvalJudge, "wikichat": WikiChatJudge}
JUDGES = {**LLM_JUDGES, "checks": ChecksJudge}  # checks: augmenter's rule checks, no LLM


def make_judges(llm, names: Sequence[str], prompts: dict | None = None, history: int = 6, **settings) -> dict:
    """{name: judge} for `names` (of JUDGES), all asking `llm`; `prompts`: {name: prompt file} to replace the
    packaged ones; `settings`: max_tokens, temperature, max_chars; `history`: utterances WikiChat's judge sees."""
    unknown = [n for n in names if n not in JUDGES]
    if unknown or not names:
        raise InputError(f"unknown judge(s) {', '.join(unknown) or '(none given)'}; judges: {', '.join(JUDGES)}")
    judges = {}
    for name in dict.fromkeys(names):
        if name not in LLM_JUDGES:
            judges[name] = JUDGES[name]()
            continue
        extra = {"history": history} if name == "wikichat" else {}
        if prompts and prompts.get(name):
            extra["prompt"] = prompts[name]
        judges[name] = JUDGES[name](llm, **extra, **settings)
    return judges


__all__ = [
    "ArenaJudge",
    "ChecksJudge",
    "LLM_JUDGES",
    "Dialogue",
    "EloSettings",
    "GTEvalJudge",
    "JUDGES",
    "Judge",
    "Judgment",
    "LLMJudge",
    "UniEvalJudge",
    "WikiChatJudge",
    "bootstrap_elo",
    "elo",
    "make_judges",
    "passes_at",
    "transcript",
]
