"""The replies written in the knowledge's own words from FAQs and reviews: the answer of the FAQ that is about the
question, and what the reviews on it say, a quote of each side attributed to a guest or a diner, or the reviews'
verdict first (`composed_reply`); and a passing candidate with its claims on reviews sent as the sentences they rest
on (`reviews_quoted`). `augmenter.reviews.composer.ReviewReplies` hands them to the executor."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from augmenter.memory import ClaimCheck, EvidenceRef, Snippet, Verdict, WorkingMemory
from augmenter.reviews.verdict import VERDICT_WORDS, display_name, reviewers
from augmenter.text import asks_which, clip, faq_parts
from augmenter.verification.lexical import content_words, parts_of


def faq_answer(snippet: Snippet) -> str:
    """A FAQ's answer as a reply: the answer alone when it says what it answers ("Acorn Guest House has free WiFi."),
    with its question when it is a bare yes or no."""
    parts = faq_parts(snippet.text)
    if parts is None:
        return snippet.text.strip()
    question, answer = parts
    if len(answer.split()) <= 3:  # "Yes.", "No, sorry."
        name = f"{snippet.entity_name}: " if snippet.entity_name else ""
        return f'{name}"{question}" {answer}'
    return answer


def _quote(sentence: Snippet) -> str:
    return f'"{clip(sentence.text.strip().rstrip(".!"))}"'


def place_name(mem: WorkingMemory, snippet: Snippet) -> str:
    """The entity's name as the linker knows it, else as the snippet has it, for display ("Lensfield Hotel")."""
    linked = next(
        (m.name for m in mem.entities if (m.domain, m.entity_id) == (snippet.domain, snippet.entity_id)), None
    )
    return display_name(linked or snippet.entity_name or "")


def opinion_sentence(sentences: Sequence[Snippet], place: str = "") -> str | None:
    """What the reviews of one entity say on the question, in their own words: the first sentence of each side
    (the evidence lists the most relevant first), quoted and attributed to one guest each, with no verdict of its
    own ("guests are divided", "guests speak well of it" are claims about reviews the gatherer may not all have
    seen); `place`: the entity's name, to say where. None when no review takes a side."""
    quotes = [next((s for s in sentences if s.stance == side), None) for side in ("positive", "negative")]
    return quoted([q for q in quotes if q is not None], place)


def quoted(quotes: Sequence[Snippet], place: str = "") -> str | None:
    """One or two review sentences, quoted and attributed to one reviewer each ("At <place>, a guest wrote: ..."; a
    diner of a restaurant), or to the same one when both come from one review (the labellers of the default's
    answers read "another" for a sentence of the same review as a false claim)."""
    if not quotes:
        return None
    at = f"At {place}, " if place else ""
    who = reviewers(quotes[0].domain, plural=False)
    if len(quotes) == 1:
        return f"{at}a {who} wrote: {_quote(quotes[0])}"
    first, second = quotes[:2]
    if first.doc_id is not None and (first.domain, first.entity_id, first.doc_id) == (
        second.domain,
        second.entity_id,
        second.doc_id,
    ):
        return f"{at}a {who} wrote: {_quote(first)}; in the same review: {_quote(second)}"
    return f"{at}one {who} wrote: {_quote(first)}; another: {_quote(second)}"


def linked_places(mem: WorkingMemory) -> set[tuple]:
    """(domain, entity id) of each place the conversation named."""
    return {(m.domain, m.entity_id) for m in mem.entities}


VerdictFn = Callable[[str, Sequence[Snippet]], object | None]  # (question, sentences) -> a Verdict or None


def verdict_first(verdict, place: str = "") -> str:
    """The verdict (`augmenter.reviews.verdict.Verdict`), then one quote per side it rests on, the clause of each
    that speaks to the question: "Yes, guests love the views. A guest wrote: "the views are worth it"."; where the
    model's sentence did not pass, the fixed sentence: "A guest speaks well of it. A guest wrote: "..."."; a Yes or
    No that says only what its one quote says (`restates`) goes out as one sentence: "Yes, a guest wrote: "..."."."""
    quotes = [next(s for s in verdict.sentences if s.stance == side) for side in verdict.sides]
    said = quoted(quotes) or ""
    opens = verdict.text.split(",", 1)[0].strip().lower()
    if opens in ("yes", "no") and len(quotes) == 1 and restates(verdict.text, quotes[0]):
        # "Yes, a guest wrote that the view was amazing. A guest wrote: "The view was amazing"." reads as a loop
        merged = f"{opens.capitalize()}, {said[0].lower()}{said[1:]}."
        return f"{place}: {merged[0].lower()}{merged[1:]}" if place else merged
    lead = f"{place}: {verdict.text[0].lower() + verdict.text[1:]}" if place else verdict.text
    return f"{lead} {_sentence(said)}"


def restates(verdict: str, quote: Snippet) -> bool:
    """Whether a verdict says nothing but what the quote says: its content words, beyond verdict words and the
    place's name, all the quote's."""
    own = set(content_words(verdict)) - VERDICT_WORDS - set(content_words(quote.entity_name or ""))
    return own <= set(content_words(clip(quote.text.strip())))  # what the reply shows of it


def verdict_claim(verdict) -> ClaimCheck:
    """The verdict as a cited claim: it rests on the sentences of the side (or both sides) it states."""
    return ClaimCheck(
        claim=verdict.text,
        verdict=Verdict.SUPPORTED,
        p_supported=1.0,
        evidence=[
            EvidenceRef(id=s.id, text=s.text, location=s.location)
            for s in verdict.sentences
            if s.stance in verdict.sides
        ],
    )


def composed_reply(
    mem: WorkingMemory,
    answering_faqs: Sequence[Snippet] = (),
    answering_reviews: Sequence[Snippet] = (),
    verdict: VerdictFn | None = None,
) -> str | None:
    """The knowledge's own answer to the question: the answer of the best of `answering_faqs` (FAQs about the
    question, best first), then, per entity the opinion gatherer found reviews for, its own FAQ's answer where one of
    `answering_faqs` is its (the reviews must not answer what a FAQ answers: "does not offer outdoor seating" beside
    a diner's praise of the terrace), else a quote of each side (see
    `opinion_sentence`), or with `verdict` (question, sentences -> `Verdict`) the verdict first and a quote per side it
    rests on (`verdict_first`); when it found none, the best of `answering_reviews` (retrieved review sentences about
    the question, best first) per entity, quoted (with `verdict`, its verdict first where it takes a side; the place
    named unless the conversation named it and the question does not ask which place). None when the evidence
    holds none of these."""
    digests = [s for s in mem.e if s.doc_type == "opinions"]
    places: list[tuple[Snippet, list[Snippet] | None]] = []  # (where, its review sentences with a stance; None:
    # quote `where` itself)
    for digest in digests:
        sentences = [
            s
            for s in mem.e
            if s.doc_type == "review" and s.stance and (s.domain, s.entity_id) == (digest.domain, digest.entity_id)
        ]
        places.append((digest, sentences))
    if not digests:  # the gatherer found no side: the retrieved sentence closest to the question, one per place
        best: dict = {}
        for s in answering_reviews:
            best.setdefault((s.domain, s.entity_id), s)
        places = [(s, None) for s in best.values()]
    faq = answering_faqs[0] if answering_faqs else None
    faq_of = (faq.domain, faq.entity_id) if faq is not None and faq.entity_id is not None else None
    parts = [] if faq is None else [faq_answer(faq)]
    if faq is not None and faq_of is not None and any((r.domain, r.entity_id) != faq_of for r, _ in places):
        # other places follow: "Outdoor seating is available." unnamed reads as said of them all
        parts = [_named(parts[0], place_name(mem, faq), faq.entity_name)]
    sides: list[tuple[str, str]] = []  # (place, the side of its verdict) of each place the verdict answered for
    for ref, sentences in places:
        # the place is named where the reply speaks of several, or after a FAQ answer of another place
        elsewhere = len(places) > 1 or (faq_of is not None and faq_of != (ref.domain, ref.entity_id))
        name = place_name(mem, ref)
        place = name if elsewhere or not parts else ""
        own = next((f for f in answering_faqs[1:] if (f.domain, f.entity_id) == (ref.domain, ref.entity_id)), None)
        if own is not None and faq_of != (ref.domain, ref.entity_id):  # its FAQ answers: the reviews do not
            parts.append(_sentence(_named(faq_answer(own), name, own.entity_name)))
            continue
        said_on = sentences if sentences is not None else [ref]  # the retrieved sentence: the verdict judges it
        judged = verdict(mem.q, said_on) if verdict is not None and said_on else None
        if judged is not None:
            unnamed = sentences is None and not parts and (ref.domain, ref.entity_id) not in linked_places(mem)
            parts.append(verdict_first(judged, name if elsewhere or unnamed or asks_which(mem.q) else ""))
            sides.append((name, judged.side))
            continue
        said = opinion_sentence(sentences, place) if sentences is not None else quoted([ref], place)
        if said:
            parts.append(_sentence(said))
    if faq is None and len(places) > 1 and len(sides) == len(places) and asks_which(mem.q):
        parts.insert(0, which_lead(sides))
    return " ".join(parts) or None


_RANK = {"positive": 2, "mixed": 1, "negative": 0}


def which_lead(sides: Sequence[tuple[str, str]]) -> str:
    """The answer to a question that asks which place, from the side of each place's verdict ((place, side), two or
    more): the one whose reviews lean best where one does ("The reviews favour Gonville Hotel."), else what they all
    share ("Both have reviews that speak well of it.": each has praise, not that every guest gave it). Each place's
    verdict and quotes follow; without it labellers read the reply as leaving the customer to compare."""
    best = max(_RANK[side] for _, side in sides)
    top = [place for place, side in sides if _RANK[side] == best]
    if len(top) == 1:
        return f"The reviews favour {top[0]}."
    if len(top) == len(sides):
        who = "Both" if len(sides) == 2 else f"All {len(sides)}"
    else:  # several share the best side, another lags
        who = ", ".join(top[:-1]) + f" and {top[-1]}"
    return f"{who} {_SHARED[best]}."


_SHARED = {
    2: "have reviews that speak well of it",
    1: "have divided reviews on it",
    0: "have reviews that complain of it",
}


def quoted_sources(mem: WorkingMemory, reply: str) -> list[ClaimCheck]:
    """The citations of a reply in the knowledge's own words: each FAQ of the evidence whose answer it gives and
    each review sentence it quotes, as a supported claim resting on that snippet."""
    cited: dict[str, ClaimCheck] = {}
    for s in mem.e:
        said = faq_answer(s) if s.doc_type == "faq" else _quote(s)[1:-1] if s.doc_type == "review" else None
        if s.doc_type == "review" and said not in reply:  # a clause of it quoted
            said = next((c for c in parts_of(s.text) if len(c.split()) >= 4 and f'"{c}"' in reply), said)
        if said and s.id not in cited and said.rstrip(".") in reply:
            cited[s.id] = ClaimCheck(
                claim=said,
                verdict=Verdict.SUPPORTED,
                p_supported=1.0,
                evidence=[EvidenceRef(id=s.id, text=s.text, location=s.location)],
            )
    return list(cited.values())


def _named(said: str, name: str, entity_name: str | None) -> str:
    """A FAQ's answer with its place's name before it, unless it names the place itself."""
    named = any(n and n.lower() in said.lower() for n in (name, entity_name))
    return said if named or not name else f"{name}: {said}"


def _sentence(said: str) -> str:
    return said[0].upper() + said[1:].rstrip(".") + "."


def cites_reviews_alone(claim: ClaimCheck, by_id: dict) -> bool:
    """Whether a supported claim cites review sentences alone (`by_id`: the knowledge's snippets; a FAQ among what it
    cites: it is kept as written)."""
    return bool(claim.supported and claim.evidence) and all(
        getattr(by_id.get(ref.id), "doc_type", "") == "review" for ref in claim.cited()
    )


def reviews_quoted(
    mem: WorkingMemory, checks: Sequence[ClaimCheck], by_id: dict
) -> tuple[str, list[ClaimCheck]] | None:
    """A checked candidate (its `checks`) with each supported claim that cites review sentences alone (`by_id`: the
    knowledge's snippets) replaced by the best of them, quoted (one per review, at most two per place), its other
    claims as they are: (the reply, its claims with their evidence). None when no claim cites reviews alone."""

    on_reviews = [cites_reviews_alone(c, by_id) for c in checks]
    if not any(on_reviews):
        return None
    kept = [c for c, on in zip(checks, on_reviews) if c.supported and not on]
    quotes: dict = {}  # place -> {review: (the sentence as a snippet, its evidence)}
    for c in (c for c, on in zip(checks, on_reviews) if on):
        ref, snippet = c.evidence[0], by_id[c.evidence[0].id]
        reviews = quotes.setdefault((snippet.domain, snippet.entity_id), {})
        if snippet.doc_id not in reviews and len(reviews) < 2:
            prefix = f"[{snippet.entity_name}] " if snippet.entity_name else ""
            text = ref.text[len(prefix) :] if prefix and ref.text.startswith(prefix) else ref.text
            reviews[snippet.doc_id] = (snippet.model_copy(update={"text": text}), ref)
    parts, cited = [c.claim for c in kept], list(kept)
    for reviews in quotes.values():
        sentences = [s for s, _ in reviews.values()]
        place = place_name(mem, sentences[0]) if len(quotes) > 1 or not parts else ""
        parts.append(_sentence(quoted(sentences, place)))
        cited += [
            ClaimCheck(claim=s.text, verdict=Verdict.SUPPORTED, p_supported=1.0, evidence=[ref])
            for s, ref in reviews.values()
        ]
    return " ".join(parts), cited
