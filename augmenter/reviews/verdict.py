"""The verdict of a place's reviews on what was asked: one sentence that answers ("Yes, guests love the views."),
sent before the reviewers' own words.

The model writes it from the part of each review sentence the opinion gatherer found closest to the question (it is
not shown the rest, which speaks of other things), and it is kept only when it adds nothing
the part of each sentence closest to the question lacks (no word, number or name of its own beyond a few verdict
words; a sentence's other parts speak of other things) and takes their side (the review judge reads it as praise
where they praise, complaint where they complain; where they are divided it must say so and answer neither yes nor
no). The question's own words are not enough, or the verdict could restate the question as the reviews' answer
("cleaned daily" of a room "cleaned to an exceptional degree"), except its word for how good something is where the
sentences use one like it ("spacious" for "large": `asked_for_theirs`), so that the customer reads the answer in the
words asked.
A Yes opens it only where a Yes to the question praises ("Is it quiet?", not "Is it noisy?"), a No only where
the reviews complain (two reviews or more: `MIN_NO_REVIEWS`) and the question asks how good something is ("Is it
quiet?": a complaint of noise is a No; "Do they serve wine?": a complaint of the wine is not), and a kept sentence
that opens with its reviewers ("A diner found ...") is given it where the model left it out. It speaks for the
reviews it rests on, not for every guest and with no count: "Yes, a guest loved the view" from one review, "some
guests" from more, never "guests love it" (the
gatherer may miss a review of the other side: "guests love it" is then a one-sided summary) nor "two guests"
(labellers read a count as exact, and the gatherer may miss or mistake one). Otherwise a fixed sentence says which
side those reviews take ("A guest speaks well of it.", "Some diners complain about the portion size.": the topic the
review judge names, where it names one). The fixed sentence never opens with a Yes or a No: "Yes, a guest wrote:
..." in its place was flawed in 17 of 33 labelled answers (the model fails to write a verdict where the sentences
speak least to the question: the quote was off it, or one side of mixed reviews), and with the on-topic model's
sentences "Yes/No, some guests ..." was still flawed in 3 of 5 (a No where the gatherer missed the quiet reviews, a
Yes to dumplings resting on praise of the food). Nor is it sent where it would say "it" of a thing the sentences do
not name (`unsaid`: "A diner complains about it." of the wine to a question on Merlot): the quotes go alone.

A sentence that may not lead is sent back once with what is wrong with it ("these reviewers did not write quiet,
hotel. Leave out those words."; words of the sentences' other parts, "big rooms" beside "very quiet", as words of
other things than what was asked), the way DSPy's `Refine` retries with feedback: the fixed sentence is the last
resort, since it only says which side the reviews take and leaves the customer to read the quote for the answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from augmenter.llm.base import SamplingParams
from augmenter.memory import Snippet
from augmenter.prompts.engine import PromptTemplate
from augmenter.reviews.judge import ReviewJudge
from augmenter.text import QUALITY_WORDS, asks_quality, is_yes_no
from augmenter.verification.encoder import closest_parts, embed
from augmenter.verification.lexical import (
    content_words,
    fragments,
    leans_back,
    names,
    numbers,
    parts_of,
    statements,
    tokens,
)

REVIEWERS = {"hotel": ("guest", "guests"), "restaurant": ("diner", "diners")}
SIDES = ("positive", "negative")
# where the reviewers were: the question may name these ("Is this hotel in a good location in the town?") and the
# verdict may too, as they say nothing of what the reviewers think
PLACE_WORDS = "place hotel guesthouse restaurant town city area room rooms stay stayed"
_PLACE_WORDS = frozenset(PLACE_WORDS.split())
_POSSESSIVE = re.compile(r"['\u2019]s\b")
DIVIDED = frozenset(content_words("divided mixed some others while whereas but however"))
# what a verdict may say beyond the question's and the reviews' words
VERDICT_WORDS = (
    DIVIDED
    | frozenset(
        content_words(
            "yes no guests guest diners diner reviewers reviewer customers visitors people say "
            "says said find found praise "
            "praised like liked love loved enjoy enjoyed appreciate appreciated mention mentioned complain complained "
            "describe described think thought report reported speak spoke wrote write well positive negative opinion "
            "opinions recommend overall other happy pleased satisfied disappointed unhappy good bad great nice really "
            "also agree disagree whether critical criticise criticize high offer offers one some several this reviewer "
            "theirs themselves"  # the reviewer's "we could hear ourselves", told of them (they, their: stopwords)
        )
    )
    | frozenset(content_words(PLACE_WORDS))
)
FIXED = {
    "positive": "{who} {speak} well of {it}.",
    "negative": "{who} {complain} about {it}.",
    "mixed": "{who} are divided on {it}.",
}
# what a fixed sentence calls the question's topic: "Guests are divided on the room size."; praise names the place
# ("speak well of the place on the noise at night": a neutral topic may name what is praised by its absence)
ON_TOPIC = {"positive": "the place on the {topic}", "negative": "the {topic}", "mixed": "the {topic}"}
_ONE = frozenset("guest diner reviewer customer visitor traveller traveler person patron".split())
_MANY = frozenset("guests diners reviewers customers visitors travellers travelers people patrons everyone".split())
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# a clause a long verdict trails after its point: ", with some ...", ", while others ...", "; ..."
_TRAILING = re.compile(
    r"(?:,\s+(?:with|while|whereas|but|and|as|which|including|especially|though|although)\b|;|\s[-\u2013\u2014]\s)"
)
# "Yes, a diner, it was lovely.": the reviewers named, then a comma instead of what they found
_NAMED_ONLY = re.compile(r"^(?:yes,?\s+|no,?\s+)?(?:a|one|some|several)\s+\w+\s*,", re.IGNORECASE)
# "A diner is nicely decorated.": the reviewers said to be what they found of the place ("Some guests were pleased
# with ..." says how they felt: `_FELT`)
_NAMED_ARE = re.compile(
    r"^(?:yes,?\s+|no,?\s+)?(?:a|one|some|several)\s+(\w+)\s+(?:of\s+[\w' ]+?\s+)?(?:is|are|was|were)\s+"
    r"(?:(?:very|quite|really|not|all|also|generally|mostly)\s+)*(\w+)",
    re.IGNORECASE,
)
_FELT = frozenset(
    "happy pleased satisfied impressed delighted disappointed unhappy divided mixed thrilled glad content unimpressed "
    "annoyed bothered surprised split critical positive negative".split()
)
_FIRST_PERSON = re.compile(r"\b(?:I|we|our|ours|us|my|mine|me|myself|ourselves)\b", re.IGNORECASE)
# how close (MiniLM cosine of the two words alone) a question's word for how good something is must be to one of the
# sentences' to stand for it: "spacious"/"large" 0.58, "reliable"/"stable" 0.59, "decent"/"good" 0.49 pass;
# "reliable"/"fast" 0.33, "clean"/"spotless" 0.30 do not (tests/test_reviews_verdict.py holds these pairs)
SAME_WORD = 0.45


_SMALL = {"and", "of", "the", "du", "de", "la", "le", "at", "in", "on", "by"}


def display_name(name: str) -> str:
    """A name written in capitals (DSTC11 writes every place so) in title case: "A and B Guest House"."""
    if not name.isupper():
        return name
    words = name.lower().split()
    return " ".join(w if i and w in _SMALL else w[:1].upper() + w[1:] for i, w in enumerate(words))


def reviewers(domain: str | None, plural: bool = True) -> str:
    """Who wrote a domain's reviews: "guests" of a hotel, "diners" of a restaurant, else "reviewers"."""
    one, many = REVIEWERS.get(domain or "", ("reviewer", "reviewers"))
    return many if plural else one


def how_many(n: int, domain: str | None) -> str:
    """The reviewers a verdict on `n` reviews speaks for: "a guest" of one, "some guests" of more."""
    return f"a {reviewers(domain, plural=False)}" if n == 1 else f"some {reviewers(domain)}"


def fixed_verdict(side: str, n: int, domain: str | None, topic: str | None = None) -> str:
    """The sentence sent when the model's is not kept: which side the `n` reviews found take ("A guest speaks well
    of it.", "Some diners complain about the portion size."), or that they are divided; on `topic` (the question's,
    named without a side: `sendable_topic`) where one is given, else on "it"."""
    it = ON_TOPIC[side].format(topic=topic) if topic else "it"
    if side == "mixed":
        return FIXED[side].format(who=reviewers(domain).capitalize(), it=it)
    who = how_many(n, domain)
    s = "s" if n == 1 else ""
    return FIXED[side].format(who=who[0].upper() + who[1:], speak="speak" + s, complain="complain" + s, it=it)


_NEGATION = frozenset("no not never without lack lacks lacking none nothing".split())
# the words of a question that asks whether a thing is there ("Do they serve wine?", "Do you know anything about
# their beer?"): praise of the thing says it is
_THERE = frozenset(
    content_words("serve serves served provide provides provided available any there get know information")
)


def sendable_topic(topic: str, question: str, said: Sequence[str] = ()) -> str | None:
    """The review judge's name of the question's topic ("room size") where a fixed verdict may say it: one to four
    lower-case words, not the question itself (what the judge falls back to), with no number, name or negation (it
    names what was asked, not what the reviews found), and with no word of the question the sentences `said` lack
    ("sea view" of a question about the sea, answered by praise of "a great view": the fixed verdict would say a
    guest praised the sea view); else None."""
    theirs = set(content_words(" ".join(said)))
    if said and set(content_words(topic)) & set(content_words(question)) - theirs:
        return None
    topic = topic.strip().strip(".\"'")
    words = topic.split()
    if words and words[0].lower() == "the":
        words = words[1:]
    if not 0 < len(words) <= 4 or topic.lower() == question.strip().lower() or numbers(topic):
        return None
    if any(w != w.lower() for w in words) or _NEGATION & set(words) or not all(w.isalpha() for w in words):
        return None
    return " ".join(words)


def reviews_of(sentences: Sequence[Snippet]) -> int:
    """How many reviews the sentences come from (a sentence with no review id counts as one of its own)."""
    return len({(s.domain, s.entity_id, s.doc_id if s.doc_id is not None else s.id) for s in sentences})


def side_of(sentences: Sequence[Snippet]) -> str | None:
    """ "positive" or "negative" when the sentences take one side, "mixed" when both, None when neither."""
    found = {s.stance for s in sentences} & set(SIDES)
    return "mixed" if len(found) == 2 else next(iter(found)) if found else None


class FaultKind(str, Enum):
    """What may be wrong with the model's verdict sentence; each value is how the trace says it."""

    EMPTY_OR_LONG = "empty or long"
    NUMBER = "a number the reviews do not give"
    NAME = "a name the reviews do not give"
    WORDS = "words the reviews do not use"
    OTHER_THINGS = "words the reviews use of other things than what was asked"
    NEGATION = "a negation the reviews do not make"
    NAMED_ONLY = "it names the reviewers and does not say what they found"
    NAMED_ARE = "it says the reviewers are what they found of the place"
    FIRST_PERSON = "it speaks as the reviewer"
    NO_OPINION = "it does not say what the reviewers think"
    YES_NO_UNASKED = "a yes or a no to a question that asks neither"
    A_NO = "a No: complaints do not say the thing asked about is missing"
    A_YES = "a Yes: it would say the other side"
    NOT_DIVIDED = "the reviews are divided and the sentence does not say so"
    SPEAKS_FOR_MORE = "it speaks for other reviewers than the {n} it rests on"
    NO_REVIEWERS = "it does not say it rests on {reviews}"
    OTHER_SIDE = "it takes the other side"
    OFF_QUESTION = "it does not speak to what was asked"


_SAYS_DIVIDED = frozenset("divided mixed disagree split".split())
# the reviews a No rests on at least: a No from one review's complaint went out three times in 49 + 60 labelled turns
# on a sentence off the question ("Portions were not big enough to share" to a large selection of beer), each
# labelled contradicted; the two Noes of one review that were right become "partly" without it
MIN_NO_REVIEWS = 2
# the words before the reviewers a sentence names first ("A guest found ...", "Some diners ...")
_HOW_MANY = frozenset("a one some several".split())


@dataclass(frozen=True)
class Fault:
    """Why a sentence may not lead the reply: what is wrong (`kind`), the words at fault (the content words, as
    stems, a verdict adds to the reviews') and the number of reviews it rests on (`reviews`, where `kind` names it)."""

    kind: FaultKind
    words: tuple[str, ...] = ()
    reviews: int = 0

    def __str__(self) -> str:
        n = self.reviews
        said = self.kind.value.format(n=n, reviews="one review" if n == 1 else f"{n} reviews")
        return f"{said}: {', '.join(self.words)}" if self.words else said


@dataclass
class Verdict:
    text: str
    side: str
    written: bool  # True: the model's sentence, checked; False: the fixed sentence
    problem: str = ""  # why the model's sentence was not kept
    sentences: list = field(default_factory=list)  # what it rests on: the clause of each sentence that answers

    @property
    def sides(self) -> tuple[str, ...]:
        """The stances it states: both for divided reviews."""
        return SIDES if self.side == "mixed" else (self.side,)


class VerdictWriter:
    """`write(question, sentences)`: the verdict of review sentences that carry a stance (None when none takes a
    side, or when the judge reads the model's last draft as off the question: the sentences do not answer it, and a
    fixed sentence would claim they do). `judge`: the review judge that reads the model's sentence's side (default:
    one on the same LLM)."""

    def __init__(
        self,
        llm,
        judge: ReviewJudge | None = None,
        prompt: str = "review_verdict",
        max_words: int = 25,
        max_tokens: int = 48,
        retries: int = 1,
    ):
        self.llm, self.max_words, self.retries = llm, max_words, retries
        self.judge = judge or ReviewJudge(llm)
        self.prompt = PromptTemplate.load(prompt)
        self.params = SamplingParams(max_tokens=max_tokens, temperature=0.0)
        self._yes_praises: dict[str, bool] = {}

    def clauses(self, question: str, sentences: Sequence[Snippet]) -> list[Snippet]:
        """The sentences that take a side, each cut to the clause that answers (the one the judge finds most about
        what was asked) and judged again (a sentence that praises the food but complains about the service takes
        the side of its clause on what was asked)."""
        out = []
        for s in sentences:
            if s.stance not in SIDES:
                continue
            parts = [c for c in parts_of(s.text) if len(c.split()) >= 4 and not leans_back(c)]
            clause = max(parts, key=lambda c: self.judge.about(question, c)) if len(parts) > 1 else s.text.strip()
            if clause != s.text.strip():
                stance = self.judge.judge(question, [clause])[0][0]
                if stance not in SIDES:
                    continue
                s = s.model_copy(update={"text": clause, "stance": stance})
            out.append(s)
        return out

    def write(self, question: str, sentences: Sequence[Snippet]) -> Verdict | None:
        sentences = self.clauses(question, sentences)
        side = side_of(sentences)
        if side is None:
            return None
        domain = sentences[0].domain
        who, n = reviewers(domain), reviews_of(sentences)
        said = [s.text.strip() for s in sentences]
        place = display_name(sentences[0].entity_name or "")
        focus = focus_of(question, said)  # what each sentence says on the question
        source = [place, *said]  # what a Yes may rest on (`may_open`)
        messages = self.prompt.render(
            q=question,
            who=who,
            speakers=how_many(n, domain),
            one=n == 1,
            sentences=focus,
            yes_no=is_yes_no(question) and (side != "positive" or may_open(question, side, source)),
            place=place,
            divided=side == "mixed",
            complaint=side == "negative",
            no=side == "negative" and may_open(question, side) and n >= MIN_NO_REVIEWS,
        )
        faults: list[Fault] = []
        draft = text = ""
        for _ in range(self.retries + 1):
            if faults:  # the last draft goes back with what is wrong with it
                fix = advice(faults[-1], text, how_many(n, domain), side)
                messages = [*messages, {"role": "assistant", "content": draft}, {"role": "user", "content": fix}]
            draft = self.llm.complete(messages, self.params).text
            first = _SENTENCE_END.split(draft.strip(), maxsplit=1)[0].strip().strip('"')
            text = self.shortened(first, side)
            fault = self.fault(question, text, said, side, place, focus, n)
            if fault is None:
                text = self.opened(question, text, side, source, n)
                return Verdict(text if text.endswith((".", "!")) else text + ".", side, True, "", sentences)
            faults.append(fault)
        problem = "; then ".join(map(str, faults))
        if faults[-1].kind is FaultKind.OFF_QUESTION:  # the sentences do not answer: no verdict, fixed or written
            return None
        topic = self.topic(question, said)
        if topic is None and unsaid(question, source):
            # "A diner complains about it." to "a variety of quality choices of Merlot?" from a complaint of the wine:
            # "it" says the reviews speak of what they do not name (labelled unsupported 3 times in 7)
            return None
        return Verdict(fixed_verdict(side, n, domain, topic), side, False, problem, sentences)

    def opening(
        self, question: str, side: str, said: Sequence[str] | None = None, reviews: int = MIN_NO_REVIEWS
    ) -> str:
        """How the verdict may open: "yes" where the reviews praise and a Yes to the question praises; "no" where
        they complain, in `MIN_NO_REVIEWS` `reviews` or more, a Yes would praise and the question asks how good
        something is (`asks_quality`); else "". `said`: the sentences (and the place's name), where a Yes must not
        say more than they do (`may_open`)."""
        if not may_open(question, side, said) or side == "negative" and reviews < MIN_NO_REVIEWS:
            return ""
        if question not in self._yes_praises:
            self._yes_praises = {question: self.says_yes(question)}  # asked once a question
        return ("yes" if side == "positive" else "no") if self._yes_praises[question] else ""

    def opened(self, question: str, text: str, side: str, said: Sequence[str], reviews: int = MIN_NO_REVIEWS) -> str:
        """A kept sentence that opens with the reviewers ("A diner found the restaurant wasn't decorated well.")
        given the Yes or No `opening` allows, where it has neither: without it labellers read it as leaving the
        customer to infer the answer."""
        words = [w.lower().strip(",") for w in text.split()[:2]] + [""]
        named = words[0] in _ONE | _MANY or words[0] in _HOW_MANY and words[1] in _ONE | _MANY
        if not named:  # "A lovely view ..." names no reviewers
            return text
        opens = self.opening(question, side, said, reviews)
        return f"{opens.capitalize()}, {text[0].lower()}{text[1:]}" if opens else text

    def topic(self, question: str, said: Sequence[str] = ()) -> str | None:
        """What a fixed verdict on the sentences `said` calls the question's topic: the review judge's name of it,
        where its judge names topics (about_by or stance_by "topic"/"either") and `sendable_topic` lets it be said."""
        if not hasattr(self.judge, "topic_prompt"):
            return None
        return sendable_topic(self.judge.topic(question), question, said)

    def shortened(self, text: str, side: str | None = None) -> str:
        """A sentence longer than `max_words` cut before the clause it trails ("Diners are divided on the atmosphere,
        with some praising it and others criticizing it" -> "Diners are divided on the atmosphere."), where what is
        left is five words or more; else as it is. With the verdict's `side`, cut at any length: a one-sided verdict's
        trailing clause adds what was not asked (", with the drinks in particular being fantastic" to "many
        non-alcoholic drinks?": a one-sided summary of drinks two reviews found mediocre), a divided one's only
        restates it ("with some agreeing and others disagreeing"; the quotes say what each side found)."""
        # "Some guests found it quiet, while others ...": the trailing clause is the other side, kept
        says_divided = bool(_SAYS_DIVIDED & set(tokens(text.split(",")[0])))
        cut = side in SIDES or side == "mixed" and says_divided
        if len(text.split()) <= self.max_words and not cut:
            return text
        m = _TRAILING.search(text)
        head = text[: m.start()].strip() if m else ""
        return head + "." if 5 <= len(head.split()) <= self.max_words else text

    def says_yes(self, question: str) -> bool:
        """Whether a Yes to the question praises the place ("Is it quiet?"), not complains ("Is it noisy?")."""
        d = self.judge.distribution(question, "Yes.")
        return d["praise"] > d["complaint"]

    def fault(
        self,
        question: str,
        text: str,
        said: Sequence[str],
        side: str,
        place: str = "",
        focus: Sequence[str] | None = None,
        reviews: int | None = None,
    ) -> Fault | None:
        """Why `text` may not lead the reply (None when it may); `place`: the name it may use; `focus`: the part of each
        sentence on the question, whose words it may use (default: the sentences whole); `reviews`: how many reviews
        they come from (default: one per sentence), the most reviewers it may speak for. A Yes or a No opens it only as
        `opening` allows."""
        source = " ".join([place, *(said if focus is None else focus)])
        n = len(said) if reviews is None else reviews
        if not text or len(text.split()) > self.max_words:
            return Fault(FaultKind.EMPTY_OR_LONG)
        if numbers(text) - numbers(source):
            return Fault(FaultKind.NUMBER)
        # the place as the question writes it ("Acorn Guesthouse" of Acorn Guest House) is no name of its own
        named = names(_POSSESSIVE.sub("", text))  # "Acorn Guest House's rooms" names the place
        if named - names(source) - {w.lower() for w in place.split()} - {"yes", "no"} - _PLACE_WORDS:
            return Fault(FaultKind.NAME)
        added = set(content_words(text)) - set(content_words(source)) - VERDICT_WORDS
        added -= asked_for_theirs(question, added, source)
        # a word of the question the reviewers wrote too is what was asked, wherever in their sentence it stands
        # ("connection" of "the connection quality was superb" to "a reliable internet connection?")
        theirs = set(content_words(" ".join(said)))
        added -= set(content_words(question)) & theirs
        if added:
            # all in the sentences' other parts ("big rooms" beside "very quiet"): the model is told they are off
            elsewhere = added <= theirs
            return Fault(FaultKind.OTHER_THINGS if elsewhere else FaultKind.WORDS, tuple(sorted(added)))
        said_negated = {w for s in said for clause, neg in statements(s) if neg for w in content_words(clause)}
        if any(neg and set(content_words(clause)) - VERDICT_WORDS - said_negated for clause, neg in statements(text)):
            return Fault(FaultKind.NEGATION)
        if _NAMED_ONLY.match(text):
            return Fault(FaultKind.NAMED_ONLY)
        named_are = _NAMED_ARE.match(text)
        if named_are and named_are.group(1).lower() in _ONE | _MANY and named_are.group(2).lower() not in _FELT:
            return Fault(FaultKind.NAMED_ARE)
        if _FIRST_PERSON.search(text):  # "a diner found the view out of our window": the review's words, unquoted
            return Fault(FaultKind.FIRST_PERSON)
        opens = text.split(maxsplit=1)[0].strip(",.!").lower()
        if len(set(content_words(text)) - set(content_words("yes no"))) < 2:
            return Fault(FaultKind.NO_OPINION)
        if opens in ("yes", "no") and not is_yes_no(question):
            return Fault(FaultKind.YES_NO_UNASKED)
        if side == "mixed":
            if opens in ("yes", "no") or not set(content_words(text)) & DIVIDED:
                return Fault(FaultKind.NOT_DIVIDED)
            return None
        overclaim = speaks_for_more(text, n)
        if overclaim is not None:
            return Fault(overclaim, reviews=n)
        if opens in ("yes", "no") and opens != self.opening(question, side, [place, *said], n):
            # a complaint about the wine does not say there is none; praise of the quiet is no Yes to "Is it noisy?"
            return Fault(FaultKind.A_NO if opens == "no" else FaultKind.A_YES)
        d = self.judge.distribution(question, text)
        mine, other = (d["praise"], d["complaint"]) if side == "positive" else (d["complaint"], d["praise"])
        if d["unrelated"] >= max(mine, other):  # "Yes, a guest had a wonderful kitchen" to "Is the view good?"
            return Fault(FaultKind.OFF_QUESTION)
        if mine <= other:
            return Fault(FaultKind.OTHER_SIDE)
        return None


def focus_of(question: str, said: Sequence[str]) -> list[str]:
    """The part of each sentence a verdict may draw on: of its fragments, the one closest in meaning to the question
    among those that use a word of it where any does ("also it's very quiet" for "Is that a quiet hotel?", where
    MiniLM alone picks "The Ashley Hotel has big rooms"); a place's nouns and verdict words do not count."""
    asked = set(content_words(question)) - VERDICT_WORDS

    def split(text: str) -> list[str]:
        parts = fragments(text)
        return [p for p in parts if asked & set(content_words(p))] or parts

    return closest_parts(question, said, split)


def may_open(question: str, side: str, said: Sequence[str] | None = None) -> bool:
    """Whether a Yes or a No may open a verdict on `side` before the judge is asked whether a Yes praises: the question
    asks yes or no, the reviews take one side, and complaints answer it only where it asks how good something is.
    Where it does not, a Yes says the question's every word: with `said` (the sentences), praise opens one only where
    they use each content word of the question ("Do they charge a fee for wifi?": praise of fast wifi is no Yes)."""
    if side not in SIDES or not is_yes_no(question):
        return False
    if asks_quality(question):
        return True
    if side == "negative":
        return False
    return said is None or not unsaid(question, said)


def unsaid(question: str, said: Sequence[str]) -> set[str]:
    """The question's content words (stems) the sentences `said` lack, beyond verdict words and those that ask
    whether a thing is there ("serve", "any")."""
    return set(content_words(question)) - VERDICT_WORDS - _THERE - set(content_words(" ".join(said)))


def asked_for_theirs(question: str, stems: set[str], source: str) -> set[str]:
    """Those of `stems` (content words, stemmed) that stand for a word of `source` in the question's own words: the
    question uses the word, a word for how good something is (`QUALITY_WORDS`), and the word alone is `SAME_WORD`
    close to one of `source`'s ("spacious" for "large"). The question's nouns may not: one close to the reviews'
    may narrow it ("pork" 0.56 from "food", "beer" from "drinks"), and the verdict then restates the question."""
    asked = {w: content_words(w)[0] for w in tokens(question) if content_words(w) and w in QUALITY_WORDS}
    words = [w for w, stem in asked.items() if stem in stems]
    theirs = list(dict.fromkeys(w for w in tokens(source) if content_words(w)))
    if not words or not theirs:
        return set()
    vectors = embed(words + theirs)
    close = (vectors[: len(words)] @ vectors[len(words) :].T).max(axis=1)
    return {asked[w] for w, c in zip(words, close) if c >= SAME_WORD}


def advice(fault: Fault, text: str, speakers: str, side: str) -> str:
    """What to tell the model of its sentence that may not lead (`fault`, from `VerdictWriter.fault`)."""
    kind = fault.kind
    if fault.words:  # the words at fault, as the draft wrote them
        used = ", ".join(sorted({w for w in tokens(text) if content_words(w) and content_words(w)[0] in fault.words}))
        if kind is FaultKind.OTHER_THINGS:
            fix = (
                f"these reviewers wrote {used or ', '.join(fault.words)} of other things than what was asked. Leave "
                "out those words: say only what they found of what was asked."
            )
        else:
            fix = f"these reviewers did not write {used or ', '.join(fault.words)}. Leave out those words."
    elif kind is FaultKind.EMPTY_OR_LONG:
        fix = "write one sentence of 8 to 20 words."
    elif kind in (FaultKind.NAMED_ONLY, FaultKind.NAMED_ARE):
        begin = f"Yes, {speakers}" if text.lower().startswith("yes") else speakers[0].upper() + speakers[1:]
        how = "with no comma after them" if kind is FaultKind.NAMED_ONLY else "of the place, not what they are"
        fix = f'say what they found, {how}: "{begin} found ...".'
    elif kind in (FaultKind.SPEAKS_FOR_MORE, FaultKind.NO_REVIEWERS):
        fix = f'speak only for the reviewers shown: begin with "{speakers[0].upper()}{speakers[1:]}".'
    elif kind is FaultKind.FIRST_PERSON:
        fix = f'speak of the reviewers as "{speakers}" or "they", never as "we", "our", "my" or "I".'
    elif side == "mixed":
        fix = "say that the reviewers are divided, and on what, without a yes or a no."
    elif kind is FaultKind.OFF_QUESTION:
        fix = "say only what they found of exactly what was asked."
    elif kind in (FaultKind.YES_NO_UNASKED, FaultKind.A_NO, FaultKind.A_YES):
        fix = "do not begin with Yes or No."
    else:
        fix = f"{fault}."
    return f"That sentence cannot be sent: {fix} Write the one sentence again."


def speaks_for_more(text: str, n: int) -> FaultKind | None:
    """Why a one-sided verdict speaks for other reviewers than the `n` reviews it rests on (None when it does not):
    it must name them, "a guest" for one, "some guests" (or "several" of three or more) for more, with no count
    ("guests loved it" and "the view is great" speak for every guest; "two guests" is read as exactly two)."""
    words = tokens(text)
    named = False
    for i, w in enumerate(words):
        before = words[i - 1] if i else ""
        if w in _MANY:
            if n == 1 or not (before == "some" or before == "several" and n >= 3):
                return FaultKind.SPEAKS_FOR_MORE
            named = True
        elif w in _ONE:
            named = True
    return None if named else FaultKind.NO_REVIEWERS
