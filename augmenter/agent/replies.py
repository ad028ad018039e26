"""The replies augmenter writes itself when no candidate of the model may be sent: the knowledge's own words on the
question (the opinion gatherer's count of the reviews on each side, with a quote of each side), or a plain statement
that the knowledge does not answer (or says otherwise), with what it does say."""

from __future__ import annotations

from typing import Optional

from augmenter.memory import Snippet, WorkingMemory

ABSTAIN_REPLY = "I'm sorry, but the knowledge I have does not answer that."
CONTRADICTED_REPLY = "I could not confirm an answer; the knowledge I have says:"
QUOTED_HEAD = {"positive": "praise", "negative": "complaint", "neutral": "mention"}


def clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quoted_reply(mem: WorkingMemory) -> Optional[str]:
    """The reviews on the question as the evidence counts them, quoting the most relevant sentence of each side
    ("Reviews of GONVILLE HOTEL that mention this: 3 (2 positive and 1 negative). Praise: "..." Complaint: "..."");
    None when the evidence holds no such count."""
    parts = []
    for digest in (s for s in mem.e if s.doc_type == "opinions"):
        sentences = [s for s in mem.e if s.doc_type == "review" and s.stance and (s.domain, s.entity_id) ==
                     (digest.domain, digest.entity_id)]
        quotes = []
        for stance in ("positive", "negative"):
            best: Optional[Snippet] = next((s for s in sentences if s.stance == stance), None)
            if best is not None:
                quotes.append(f'{QUOTED_HEAD[stance].capitalize()}: "{clip(best.text)}"')
        if not quotes and sentences:
            quotes.append(f'"{clip(sentences[0].text)}"')
        name = digest.entity_name or "this place"
        parts.append(f"{digest.text.replace('Reviews that mention this', f'Reviews of {name} that mention this')} "
                     + " ".join(quotes))
    return " ".join(parts) or None
