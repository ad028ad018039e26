"""The executor's declared seams: what it reads of its utility (`Check`: checks_claims, on_topic) and the knowledge's
replies in its own words (`ReplyComposer`), which the builder injects (the reviews' `ReviewReplies` for FAQs and
reviews)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from augmenter.agent import Agent, Check, Checked, Executor, as_check
from augmenter.knowledge import BM25sRetriever, KnowledgeConsolidator
from augmenter.llm import FakeLLM, MeteredLLM
from augmenter.memory import Action, ClaimCheck, EvidenceRef, Verdict
from augmenter.policies import LLMAugmenterPolicy
from augmenter.prompts import PromptEngine
from augmenter.utilities import ClaimsUtility, CombinedUtility, KF1Utility
from augmenter.utilities.answers import AnswersQuestion
from augmenter.verification import FastVerifier

QUESTION = "Does the Grand Meridian Hotel have a pool?"
WRONG = "The moon hosts a casino with a rooftop golf course."


def fails(memory, candidate):
    return 0.2, "Say what the knowledge says."


def passes(memory, candidate):
    return 1.0


@dataclass
class Said:
    text: str
    claims: list = field(default_factory=list)
    note: str = ""
    outputs: dict = field(default_factory=dict)


class Scripted:
    """A ReplyComposer with fixed words: `answer` (None: the knowledge does not answer) and `quote` (None: the
    candidate is sent as written); it records what it was asked."""

    def __init__(self, answer=None, quote=None):
        self.answer_text, self.quote_text, self.asked = answer, quote, []
        self.claims = [
            ClaimCheck(
                claim="own words",
                verdict=Verdict.SUPPORTED,
                p_supported=1.0,
                evidence=[EvidenceRef(id="hotel:1:faq:0", text="own words")],
            )
        ]

    def answers(self, mem):
        self.asked.append("answers")
        return self.answer_text is not None

    def answer(self, mem):
        self.asked.append("answer")
        return None if self.answer_text is None else Said(self.answer_text, self.claims, outputs={"kind": "scripted"})

    def quote(self, mem, checks):
        self.asked.append("quote")
        return None if self.quote_text is None else Said(self.quote_text, self.claims, note="re-said")


def _agent(kb, reply, utility, replies=None, policy=None):
    llm = MeteredLLM(FakeLLM(default=reply))
    executor = Executor(
        llm,
        PromptEngine(response="customer_service"),
        utility,
        KnowledgeConsolidator(kb, BM25sRetriever(), k=3, opinions=False),
        replies=replies,
    )
    return Agent(policy or LLMAugmenterPolicy(), executor, max_llm_calls=2)


# ---------------------------------------------------------------------------------------------- the Check seam


def test_the_built_in_checks_declare_what_sending_relies_on():
    claims = ClaimsUtility(FastVerifier())
    assert isinstance(claims, Check) and claims.checks_claims and claims.on_topic(None, "any sentence")
    assert isinstance(AnswersQuestion(), Check) and not AnswersQuestion.checks_claims
    assert as_check(CombinedUtility(claims, checks=("answers",))).checks_claims
    assert not as_check(CombinedUtility(KF1Utility(), checks=("answers",))).checks_claims
    plain = as_check(KF1Utility())  # declares nothing: the paper's rule
    assert isinstance(plain, Checked) and not plain.checks_claims and plain.on_topic(None, "any sentence")


def test_a_half_declared_utility_is_refused_not_silently_defaulted(demo_kb):
    class Half:
        checks_claims = True

        def __call__(self, memory, candidate):
            return 1.0

    with pytest.raises(TypeError, match="declares checks_claims but not on_topic"):
        as_check(Half())
    with pytest.raises(TypeError, match="on_topic"):
        _agent(demo_kb, WRONG, Half())
    with pytest.raises(TypeError, match="callable"):
        Checked("not a function")


def test_a_plain_function_utility_sends_its_best_candidate_even_when_it_failed(demo_kb):
    """What docs/python-api.md says a plain function gives up: it checks no claims, so the paper's rule sends the
    best-scored candidate, failed or not, and the knowledge's own words are never asked for."""
    composer = Scripted(answer="The knowledge's own answer.")
    mem = _agent(demo_kb, WRONG, fails, composer).respond(QUESTION)
    assert mem.f == ["Say what the knowledge says."] * 2
    assert mem.response == WRONG and mem.outcome == "answered" and composer.asked == ["quote"]


def test_checked_gives_a_plain_function_the_claims_utilitys_safety_on_send(demo_kb):
    mem = _agent(demo_kb, WRONG, Checked(fails, checks_claims=True)).respond(QUESTION)
    assert WRONG not in mem.response and mem.outcome == "abstained" and mem.sent_index is None
    assert mem.response.startswith("I'm sorry, but the knowledge I have does not answer that.")


# --------------------------------------------------------------------------------------- the ReplyComposer seam


def test_no_candidate_passed_the_injected_composer_answers_in_the_knowledges_words(demo_kb):
    composer = Scripted(answer="The knowledge's own answer.")
    mem = _agent(demo_kb, WRONG, Checked(fails, checks_claims=True), composer).respond(QUESTION)
    assert mem.response == "The knowledge's own answer." and mem.outcome == "quoted" and mem.sent_index is None
    assert mem.sent_claims == composer.claims and mem.trace[-1].outputs["kind"] == "scripted"
    assert mem.trace[-1].note.endswith("no candidate passed: answered in the knowledge's own words")


def test_a_passing_candidate_is_re_said_by_the_injected_composer_or_sent_as_written(demo_kb):
    checked = Checked(passes, checks_claims=True)
    mem = _agent(demo_kb, WRONG, checked, Scripted(quote="Re-said in the knowledge's words.")).respond(QUESTION)
    assert mem.response == "Re-said in the knowledge's words." and mem.outcome == "quoted"
    assert mem.trace[-1].note == "re-said" and mem.sent_claims
    as_written = _agent(demo_kb, WRONG, checked, Scripted()).respond(QUESTION)
    assert as_written.response == WRONG and as_written.outcome == "answered" and as_written.sent_index == 0


def test_the_loop_sends_without_a_draft_only_when_the_injected_composer_answers(demo_kb):
    def send_at_once(memory):
        return Action.CONSOLIDATE_KNOWLEDGE if not memory.consolidated else Action.SEND

    checked = Checked(passes, checks_claims=True)
    mem = _agent(demo_kb, WRONG, checked, Scripted(answer="Own words."), send_at_once).respond(QUESTION)
    assert mem.o == [] and mem.llm_calls == 0 and mem.response == "Own words." and mem.outcome == "quoted"
    assert mem.trace[-1].note == "the knowledge answers the question: its own words, no draft"
    # no composer: the model drafts first, and a checked utility never sends the draft it did not verify
    drafted = _agent(demo_kb, WRONG, checked, None, send_at_once).respond(QUESTION)
    assert drafted.o == [WRONG] and drafted.llm_calls == 1 and drafted.outcome == "abstained"


def test_the_builder_injects_the_reviews_replies_for_faqs_and_reviews():
    from augmenter.config import build_agent, compose
    from augmenter.reviews import ReviewReplies

    executor = build_agent(compose("chat", ["llm=fake", "executor.review_verdicts=true"])).executor
    replies = executor.replies
    assert isinstance(replies, ReviewReplies) and executor.composer is None
    assert replies.quote_reviews and replies.verdicts and replies.answers_check is executor.utility
    assert replies.snippets is executor.consolidator.kb.by_id
    plain = build_agent(compose("chat", ["llm=fake", "utility=kf1", "executor.quote_reviews=false"])).executor
    assert plain.replies.answers_check is None and not plain.replies.quote_reviews and not plain.replies.verdicts


def test_documents_answer_through_their_own_composer_and_get_no_reviews_replies(tmp_path):
    from augmenter.config import build_agent, compose

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "spa.md").write_text("# Spa Guide\n\n## Hours\n\nThe Spa opens at 9 am every day.\n")
    executor = build_agent(
        compose(
            "chat",
            [
                "llm=fake",
                "knowledge=docs",
                f"knowledge.path={tmp_path / 'docs'}",
                f"knowledge.index_dir={tmp_path / 'index'}",
            ],
        )
    ).executor
    assert executor.composer is not None and executor.replies is None
