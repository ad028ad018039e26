"""Split a candidate response into atomic, self-contained claims: an LLM prompt with few-shot examples (WikiChat,
CEG), and a sentence split as the fallback when the model's output is unusable (or with `method="sentences"`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from augmenter.llm.base import SamplingParams
from augmenter.memory import Utterance
from augmenter.verification.lexical import content_words

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_ABBREVIATIONS = re.compile(r"\b(Mr|Mrs|Ms|Dr|St|No|approx|e\.g|i\.e|etc|vs|Jr|Sr)\.$", re.IGNORECASE)
_NO_CLAIM = re.compile(r"^(none|no claims?|n/?a)\.?$", re.IGNORECASE)
METHODS = ("llm", "sentences")
ABSTENTION = re.compile(
    r"\b(i (do not|don't|dont) (know|have (any |that |the |this |such |more )?(information|details|data|info))|"
    r"i('m| am) not sure|"
    r"(there is|there's|i have|i found) no (information|mention|details)|(does|do) not (say|mention|answer|specify)|"
    r"(doesn't|don't) (say|mention|answer|specify)|(cannot|can't|could not|couldn't) find|"
    r"not (mentioned|specified|stated) in|"
    r"no information (about|on|regarding)|unable to (find|answer))\b",
    re.IGNORECASE,
)


def split_sentences(text: str) -> list[str]:
    """Sentences of a text (a rule-based splitter that keeps abbreviations such as "Dr." and "St." together)."""
    parts, current = [], ""
    for piece in _SENTENCE_END.split(text.strip()):
        current = f"{current} {piece}".strip() if current else piece.strip()
        if not _ABBREVIATIONS.search(current):
            parts.append(current)
            current = ""
    if current:
        parts.append(current)
    return [p for p in (p.strip() for p in parts) if p]


_APOLOGY = re.compile(r"^\s*(?:i'm|i am|we're|we are)\s+(?:sorry|afraid)\W*(?:but\s+)?", re.IGNORECASE)
_CLAUSES = re.compile(r",?\s+\b(?:but|however|although|though|yet)\b|;|:", re.IGNORECASE)
_POLITE = re.compile(
    r"^(i hope (this|that) helps|enjoy (your|the)|have a (great|nice|good|lovely)|great question|"
    r"glad to help|happy to help|feel free|please (let me know|feel free|contact)|"
    r"(i'm|i am) (sorry|afraid)\W*$|(i'm |i am |so |very )?sorry (for|about) (the|my|any) "
    r"(oversight|confusion|mistake|misunderstanding|error|inconvenience)\W*$|"
    r"(my )?apologies( for (the|my|any) \w+)?\W*$)",
    re.IGNORECASE,
)


def is_abstention(sentence: str) -> bool:
    """The sentence only says that the assistant does not know or the knowledge does not say ("I don't have
    information on that."); one that goes on to state something ("..., but it has a pool") is not."""
    rest = _APOLOGY.sub("", sentence)
    clauses = [c for c in _CLAUSES.split(rest) if len(content_words(c)) >= 2]
    return bool(ABSTENTION.search(rest)) and all(ABSTENTION.search(c) for c in clauses)


def is_claim(sentence: str) -> bool:
    """A sentence states something checkable: not a question, not a greeting or offer, not an "I don't know"."""
    sentence = sentence.strip()
    if not sentence or sentence.endswith("?") or is_abstention(sentence):
        return False
    lowered = sentence.lower()
    if re.match(
        r"^(hi|hello|hey|good (morning|afternoon|evening)|thanks|thank you|you're welcome|sure|of course|"
        r"certainly|great|okay|ok)( there| again| so much| very much| to you)?\b[.!,]?$",
        lowered,
    ):
        return False
    if re.match(r"^(is there anything else|can i help|would you like|let me know|do you want|how can i help)", lowered):
        return False
    if _POLITE.match(lowered):
        return False
    return len(content_words(sentence)) >= 1


def parse_claims(text: str) -> list[str] | None:
    """The claims in an LLM answer (one per line, bullets and numbering stripped); [] for NONE; None if unusable."""
    lines = [
        re.sub(r"^\s*(?:[-*•]|\d+[.)]|claim\s*\d*:)\s*", "", ln, flags=re.IGNORECASE).strip()
        for ln in text.strip().splitlines()
    ]
    lines = [ln.strip('"').strip() for ln in lines if ln.strip()]
    if not lines:
        return None
    if len(lines) == 1 and _NO_CLAIM.match(lines[0]):
        return []
    claims = [ln for ln in lines if not _NO_CLAIM.match(ln)]
    return list(dict.fromkeys(claims)) or None


class ClaimSplitter:
    """`method="llm"`: the prompt `claims` splits the candidate, in the dialogue's context, into claims that stand on
    their own (pronouns resolved); output that is empty, over-long or mostly words the candidate does not contain
    falls back to the sentence split. `method="sentences"`: no LLM call."""

    def __init__(self, method: str = "sentences", llm=None, prompts=None, max_claims: int = 8, max_tokens: int = 160):
        if method not in METHODS:
            raise ValueError(f"claim splitting method must be one of {', '.join(METHODS)}, got {method!r}")
        if method == "llm" and (llm is None or prompts is None):
            raise ValueError("claim splitting with method=llm needs the LLM and the prompt engine")
        if max_claims < 1:
            raise ValueError(f"max_claims must be at least 1, got {max_claims}")
        self.method, self.llm, self.prompts = method, llm, prompts
        self.max_claims = max_claims
        self.params = SamplingParams(max_tokens=max_tokens, temperature=0.0)
        self.fallbacks = 0  # how often the LLM's split was unusable

    def sentences(self, candidate: str) -> list[str]:
        return [s for s in split_sentences(candidate) if is_claim(s)]

    def usable(self, claims: list[str], candidate: str, context: str = "") -> bool:
        """The claims come from the candidate (most of each claim's content words occur in it or in the question,
        which resolves its pronouns) and cover it (most of each of its checkable sentences' content words occur in
        the claims): a list that drops a sentence, or NONE for a reply that states something, is not usable."""
        source = set(content_words(candidate)) | set(content_words(context))
        for claim in claims:
            words = content_words(claim)
            if not words or len(claim) > 2 * len(candidate) + 40:
                return False
            if sum(w in source for w in words) / len(words) < 0.5:
                return False
        covered = {w for claim in claims for w in content_words(claim)}
        for sentence in self.sentences(candidate):
            words = content_words(sentence)
            if words and sum(w in covered for w in words) / len(words) < 0.5:
                return False
        return True

    def split(self, candidate: str, q: str = "", history: Sequence[Utterance] = ()) -> tuple[list[str], str]:
        """(the claims, how they were found: "llm", "sentences" or "fallback"). All of them: the caller checks at most
        `max_claims` and counts the rest as unchecked."""
        if self.method == "sentences":
            return self.sentences(candidate), "sentences"
        messages = self.prompts.claims(q, history, candidate)
        answer = self.llm.complete(messages, self.params).text
        claims = parse_claims(self.prompts.claims_prompt.cut(answer))
        if claims is not None and self.usable(claims, candidate, q):
            return [c for c in claims if is_claim(c)], "llm"
        self.fallbacks += 1
        return self.sentences(candidate), "fallback"
