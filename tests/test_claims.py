"""Claim-level verification: splitting, lexical checks, the verifiers on hand-made cases, the claims utility's
feedback, citations, and the agent's "I don't know" path."""

from __future__ import annotations

import json
import math

import pytest

from augmenter.llm import FakeLLM, MeteredLLM
from augmenter.llm.base import Completion
from augmenter.memory import Snippet, Verdict, WorkingMemory
from augmenter.prompts import PromptEngine
from augmenter.utilities import ClaimsUtility
from augmenter.verification import FastVerifier, LLMVerifier, lexical, split_sentences
from augmenter.verification.splitter import ClaimSplitter, is_claim, parse_claims
from augmenter.verification.verifiers import label_distribution, label_of

SHUTTLE = (
    "[Grand Meridian Hotel] Q: Do you offer airport shuttles? "
    "A: A shuttle to the airport leaves every hour for 12 pounds."
)
SUNDAY = "[Crumb & Co] Q: Are you open on Sundays? A: No, the bakery is closed on Sundays."
PARKING = "[Riverside Lodge] Q: Is there free parking? A: Yes, guests can park for free in the lot behind the lodge."
POOL = (
    "[Grand Meridian Hotel] Q: Is there a swimming pool? "
    "A: Yes, there is an indoor heated pool open from 7 am to 10 pm."
)


# ------------------------------------------------------------------------------------------- splitting


def test_sentences_keep_abbreviations_and_drop_questions_and_greetings():
    text = "Dr. Smith works at St. Mary's. It opens at 9 am! Would you like to book? Thanks."
    assert split_sentences(text) == [
        "Dr. Smith works at St. Mary's.",
        "It opens at 9 am!",
        "Would you like to book?",
        "Thanks.",
    ]
    assert [s for s in split_sentences(text) if is_claim(s)] == ["Dr. Smith works at St. Mary's.", "It opens at 9 am!"]


def test_llm_claims_are_parsed_and_unusable_output_falls_back_to_sentences():
    assert parse_claims("- The hotel has a pool.\n2. The pool is heated.\n") == [
        "The hotel has a pool.",
        "The pool is heated.",
    ]
    assert parse_claims("NONE") == []
    assert parse_claims("   ") is None
    candidate = "The hotel has a heated pool. Parking costs 15 pounds."
    good = FakeLLM(responses=["- The Grand Meridian Hotel has a heated pool.\n- Parking costs 15 pounds."])
    splitter = ClaimSplitter("llm", MeteredLLM(good), PromptEngine(response="customer_service"))
    assert splitter.split(candidate, "Is there a pool?") == (
        ["The Grand Meridian Hotel has a heated pool.", "Parking costs 15 pounds."],
        "llm",
    )
    sentences = ["The hotel has a heated pool.", "Parking costs 15 pounds."]
    for unusable in (
        "- The museum in the north sells tickets to tourists every morning.",  # not from the candidate
        "- The Grand Meridian Hotel has a heated pool.",  # drops a sentence that states something
        "NONE",
    ):  # no claims in a reply that makes two
        splitter = ClaimSplitter("llm", MeteredLLM(FakeLLM(responses=[unusable])), PromptEngine())
        assert splitter.split(candidate, "Is there a pool?") == (sentences, "fallback")
        assert splitter.fallbacks == 1
    none = ClaimSplitter("llm", MeteredLLM(FakeLLM(responses=["NONE"])), PromptEngine())
    assert none.split("Sure, how many people will stay?") == ([], "llm")


# --------------------------------------------------------------------------------------- lexical checks


def test_lexical_normalises_numbers_times_days_and_negation():
    assert lexical.numbers("Check-in is at 2 pm, breakfast costs £12.00 and twelve rooms") == {"14:00", "12"}
    assert lexical.numbers("open 7:30 to 22:00") == {"7:30", "22:00"}
    assert lexical.numbers("2 amazing pools and 10 amenities") == {"2", "10"}  # "am" only as a whole word
    assert lexical.numbers("from 7.30 pm") == {"19:30"}
    assert lexical.numbers("twenty-five rooms, one of the best, two hundred beds") == {"25"}
    assert lexical.days("Closed on Sundays") == {"sunday"}
    assert lexical.days("weekends") == {"saturday", "sunday"}
    weekdays = {"monday", "tuesday", "wednesday", "thursday", "friday"}
    assert lexical.days("weekdays") == lexical.days("Monday to Friday") == weekdays
    assert lexical.days("sun loungers by the pool") == set()
    assert lexical.negated("The bakery is closed on Sundays") and not lexical.negated("It opens on Sundays")
    assert lexical.negated("There is no pool and no gym")
    assert not lexical.negated("It is not closed")
    assert "meridian" in lexical.names("We stayed at the Grand Meridian Hotel.")


def test_a_faq_states_its_question_with_the_answers_polarity():
    faq = "Q: Is there free parking? A: No, parking costs 15 pounds per day."
    assert lexical.polarity_against("Parking is free.", faq)[:2] == (False, True)
    assert lexical.polarity_against("Parking costs 15 pounds per day.", faq)[:2] == (False, False)
    found = lexical.polarity_against(
        "No, the bakery is not open on Sundays.", "Q: Are you open on Sundays? A: No, the bakery is closed on Sundays."
    )
    assert found[:2] == (True, True)


def test_apologies_and_pleasantries_are_not_claims_but_facts_after_them_are():
    assert is_claim("I'm afraid parking at the Grand Meridian Hotel is free.")
    assert is_claim("I'm sorry, but the pool is closed on Mondays.")
    assert is_claim("The knowledge does not mention a gym, but the hotel has a pool.")
    assert not is_claim("I'm sorry, I don't have information on the beer prices.")
    assert not is_claim("I don't have that information.")
    assert not is_claim("Enjoy your stay!") and not is_claim("I hope this helps.")


# ------------------------------------------------------------------------------------------- verifiers


@pytest.fixture(scope="module")
def fast():
    return FastVerifier()


def test_fast_verifier_refutes_a_wrong_price(fast):
    j = fast.judge("A shuttle to the airport costs 20 pounds.", [SHUTTLE, POOL])
    assert j.verdict == Verdict.REFUTED
    assert "12" in j.reason and "20" in j.reason
    assert j.evidence[0] == 0  # the shuttle FAQ is the evidence it cites


def test_fast_verifier_refutes_a_negated_day(fast):
    j = fast.judge("The bakery is open on Sundays.", [SUNDAY])
    assert j.verdict == Verdict.REFUTED and j.p_supported < fast.threshold


def test_fast_verifier_supports_a_paraphrase(fast):
    j = fast.judge("Guests can park for free behind the lodge.", [PARKING, SHUTTLE])
    assert j.verdict == Verdict.SUPPORTED and j.p_supported >= fast.threshold


def test_fast_verifier_without_evidence_has_not_enough_info(fast):
    j = fast.judge("The lodge has a rooftop bar.", [])
    assert j.verdict == Verdict.NOT_ENOUGH_INFO and j.p_supported < fast.threshold


def test_fast_verifier_does_not_support_an_unrelated_claim(fast):
    j = fast.judge("The restaurant serves vegan sushi every Tuesday.", [PARKING, POOL])
    assert j.verdict != Verdict.SUPPORTED


def test_label_scores_come_from_first_token_logprobs():
    assert label_of("SUP") == Verdict.SUPPORTED and label_of(" REF") == Verdict.REFUTED
    assert label_of("NOT") == Verdict.NOT_ENOUGH_INFO and label_of("x") is None
    assert label_of("NO") == Verdict.NOT_ENOUGH_INFO and label_of("RE") == Verdict.REFUTED  # "NO" is never REFUTED
    dist = label_distribution([{"SUP": math.log(0.6), "REF": math.log(0.2), "NOT": math.log(0.1), "The": -1.0}], "SUP")
    assert dist[Verdict.SUPPORTED] == pytest.approx(0.6 / 0.9)
    assert dist[Verdict.REFUTED] == pytest.approx(0.2 / 0.9)
    # a first token without label mass (markdown) is skipped
    dist = label_distribution([{"**": -0.1, "\n": -3.0}, {"REF": math.log(0.5), "SUP": math.log(0.5)}], "**REFUTED")
    assert dist[Verdict.REFUTED] == pytest.approx(0.5)
    # Qwen's tokenizer begins SUPPORTED with the one-letter token "S": its mass counts (it was ignored, so p(supported)
    # never reached 0.5 with the 1.5B model)
    assert label_of("S") == Verdict.SUPPORTED and label_of("R") == Verdict.REFUTED
    assert label_of("N") == Verdict.NOT_ENOUGH_INFO
    assert label_of("I") is None and label_of("A") is None and label_of("s") is None
    dist = label_distribution(
        [{"S": math.log(0.7), "RE": math.log(0.1), "NOT": math.log(0.1), "I": math.log(0.1)}], "SUPPORTED"
    )
    assert dist[Verdict.SUPPORTED] == pytest.approx(0.7 / 0.9)
    # no log-probabilities from the backend: the word said
    assert label_distribution(None, "REFUTED") == {
        Verdict.SUPPORTED: 0.0,
        Verdict.REFUTED: 1.0,
        Verdict.NOT_ENOUGH_INFO: 0.0,
    }


def test_llm_verifier_uses_logprobs_and_shows_the_most_similar_evidence():
    scripted = Completion("REF", top_logprobs=[{"REF": math.log(0.7), "SUP": math.log(0.2), "NOT": math.log(0.1)}])
    fake = FakeLLM(responses=[scripted])
    verifier = LLMVerifier(MeteredLLM(fake), PromptEngine(response="customer_service"), max_evidence=1)
    j = verifier.judge("A shuttle to the airport costs 20 pounds.", [POOL, SHUTTLE])
    assert j.verdict == Verdict.REFUTED and j.p_supported == pytest.approx(0.2)
    prompt = fake.calls[0][-1]["content"]
    assert "12 pounds" in prompt and "indoor heated pool" not in prompt  # only the best evidence is shown
    assert "Claim: A shuttle to the airport costs 20 pounds." in prompt


# --------------------------------------------------------------------------------------- the utility


def _memory(*texts: str, q: str = "Tell me about the hotel.") -> WorkingMemory:
    snippets = [Snippet(id=f"s{i}", text=t) for i, t in enumerate(texts)]
    return WorkingMemory(q=q, e=snippets, given=snippets, consolidated=True)


def test_claims_feedback_names_each_bad_claim_and_quotes_the_evidence(fast):
    utility = ClaimsUtility(fast)
    mem = _memory(SHUTTLE, POOL)
    result = utility(
        mem, "There is an indoor heated pool. A shuttle to the airport costs 20 pounds. The hotel has a spa."
    )
    verdicts = [c.verdict for c in result.claims]
    assert verdicts[0] == Verdict.SUPPORTED and verdicts[1] == Verdict.REFUTED
    assert verdicts[2] == Verdict.NOT_ENOUGH_INFO
    assert '"A shuttle to the airport costs 20 pounds." is contradicted by the knowledge' in result.feedback
    assert "12 pounds" in result.feedback  # the contradicting evidence is quoted
    assert '"The hotel has a spa." is not in the knowledge' in result.feedback
    assert result.claims[0].evidence[0].id == "s1"
    assert 0 < result.score < 1


def test_a_fully_supported_candidate_passes_and_a_claimless_one_scores_one(fast):
    utility = ClaimsUtility(fast)
    mem = _memory(POOL)
    assert utility(mem, "Yes, there is an indoor heated pool.").passed
    result = utility(mem, "Would you like me to book it?")
    assert result.passed and result.score == 1.0 and result.claims == []


# ------------------------------------------------------------------------ the agent: never a contradiction


@pytest.fixture
def claims_agent(demo_kb, fast):
    from augmenter.agent import Agent, Executor
    from augmenter.knowledge import BM25sRetriever, KnowledgeConsolidator
    from augmenter.policies import LLMAugmenterPolicy

    def build(fake, **executor_kwargs):
        llm = MeteredLLM(fake)
        consolidator = KnowledgeConsolidator(demo_kb, BM25sRetriever(), k=3, opinions=False)
        prompts = PromptEngine(response="customer_service")
        utility = ClaimsUtility(fast, consolidator=consolidator)
        executor = Executor(llm, prompts, utility, consolidator, **executor_kwargs)
        return Agent(LLMAugmenterPolicy(), executor, max_llm_calls=2)

    return build


def test_a_contradicted_candidate_is_never_sent(claims_agent):
    wrong = "Parking at the Grand Meridian Hotel is free."
    agent = claims_agent(FakeLLM(default=wrong))
    mem = agent.respond("Does the Grand Meridian Hotel have free parking?")
    assert mem.contradicts(0) and mem.contradicts(1)
    assert mem.outcome == "abstained" and mem.sent_index is None and wrong not in mem.response
    assert "parking costs 15 pounds" in mem.response  # it quotes what the knowledge says instead


def test_a_contradicted_reply_quotes_the_best_evidence_for_the_question_too(claims_agent):
    # the candidate is refuted by the gym FAQ (second in e), not by the parking FAQ that answers the question
    hedge = "The fitness centre is not open to guests."
    agent = claims_agent(FakeLLM(default=hedge))
    mem = agent.respond("Does the Grand Meridian Hotel have free parking?")
    assert mem.outcome == "abstained" and mem.e[0].id == "hotel:1:faq:2"
    assert mem.response.index("parking costs 15 pounds") < mem.response.index("fitness centre is open 24 hours")
    assert "Please generate again" not in (mem.f[0] or "") and "contradicted" in mem.f[0]


def test_an_llm_failure_during_the_check_never_sends_the_unchecked_candidate(demo_kb, fast):
    from augmenter.agent import Agent, Executor
    from augmenter.errors import LLMError
    from augmenter.knowledge import BM25sRetriever, KnowledgeConsolidator
    from augmenter.policies import LLMAugmenterPolicy

    wrong = "Parking at the Grand Meridian Hotel is free."

    def reply(messages):
        if "Claim:" in messages[-1]["content"]:
            raise LLMError("server down")
        return wrong

    llm = MeteredLLM(FakeLLM(default=reply))
    consolidator = KnowledgeConsolidator(demo_kb, BM25sRetriever(), k=3, opinions=False)
    utility = ClaimsUtility(LLMVerifier(llm, PromptEngine(response="customer_service")), consolidator=consolidator)
    agent = Agent(
        LLMAugmenterPolicy(),
        Executor(llm, PromptEngine(response="customer_service"), utility, consolidator),
        max_llm_calls=3,
    )
    mem = agent.respond("Does the Grand Meridian Hotel have free parking?")
    assert mem.response != wrong and mem.outcome == "failed" and "server down" in mem.warnings[0]


def test_claims_past_max_claims_count_as_unchecked(fast):
    utility = ClaimsUtility(fast, max_claims=1)
    result = utility(_memory(POOL), "There is an indoor heated pool. The pool opens at 7 am.")
    assert [c.verdict for c in result.claims] == [Verdict.SUPPORTED, Verdict.NOT_ENOUGH_INFO]
    assert "not checked" in result.claims[1].reason and not result.passed
    with pytest.raises(ValueError, match="max_claims"):
        ClaimsUtility(fast, max_claims=0)


def test_unanswerable_question_gets_i_dont_know_with_what_was_found(claims_agent):
    invented = "The Riverside Lodge has a rooftop bar with live jazz on Fridays."
    agent = claims_agent(FakeLLM(default=invented))
    mem = agent.respond("Does the Riverside Lodge have a rooftop bar?")
    assert mem.outcome == "abstained" and mem.sent_index is None
    assert mem.response.startswith("I'm sorry, but the knowledge I have does not answer that.")
    assert "What I found:" in mem.response and "Riverside Lodge" in mem.response
    assert invented not in mem.response


def test_budget_spent_sends_only_the_supported_claims(claims_agent):
    mixed = "The Grand Meridian Hotel has an indoor heated pool. It also runs helicopter tours to Paris every Tuesday."
    agent = claims_agent(FakeLLM(default=mixed))
    mem = agent.respond("What does the Grand Meridian Hotel offer?")
    assert mem.outcome == "partial"
    assert mem.response == "The Grand Meridian Hotel has an indoor heated pool."
    assert [c.claim for c in mem.citations] == [mem.response]
    assert mem.citations[0].evidence[0].id.startswith("hotel:1:faq")


def test_a_supported_answer_is_sent_with_its_citations(claims_agent):
    good = "Yes, the Grand Meridian Hotel has an indoor heated pool open from 7 am to 10 pm."
    agent = claims_agent(FakeLLM(default=good))
    mem = agent.respond("Does the Grand Meridian Hotel have a pool?")
    assert mem.outcome == "answered" and mem.response == good and mem.llm_calls == 1
    sources, claims = mem.sources()
    assert claims and claims[0][1][0] == 1 and "indoor heated pool" in sources[0].text


def test_kf1_systems_still_send_their_best_candidate(make_agent):
    from augmenter.policies import LLMAugmenterPolicy

    agent = make_agent(FakeLLM(default="Parking at the Grand Meridian Hotel is free."), LLMAugmenterPolicy())
    mem = agent.respond("Does the Grand Meridian Hotel have free parking?")
    assert mem.response == "Parking at the Grand Meridian Hotel is free." and mem.outcome == "answered"


# ------------------------------------------------------------------------------ chat: sources and JSONL


def test_chat_shows_sources_and_writes_citations(tmp_path, capsys):
    from augmenter.cli.main import main

    script = tmp_path / "turns.txt"
    script.write_text("Does the Grand Meridian Hotel have a pool? [/red]\n", encoding="utf-8")
    out = tmp_path / "session.jsonl"
    answer = "Yes, the Grand Meridian Hotel has an indoor heated pool open from 7 am to 10 pm."
    code = main(
        [
            "chat",
            "--trace",
            "--script",
            str(script),
            "--output",
            str(out),
            "llm=fake",
            f"llm.responses=[{json.dumps(answer)}]",
            "utility=claims",
            "consolidator.opinions=false",
        ]
    )  # a draft
    assert code == 0
    shown = capsys.readouterr().out
    assert "sources:" in shown and "[1] hotel:1:faq:0" in shown and "[/red]" in shown
    line = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert line["outcome"] == "answered"
    assert line["citations"][0]["sources"][0] == "hotel:1:faq:0"
    assert line["memory"]["checks"][0][0]["verdict"] == "supported"


def test_claims_utility_with_each_verifier_builds_from_config():
    from augmenter.config import build_agent, compose

    names = {"fast": "FastVerifier", "llm": "LLMVerifier", "combined": "CombinedVerifier"}
    for verifier, name in names.items():
        agent = build_agent(
            compose(
                "chat",
                [
                    "llm=fake",
                    "utility=claims",
                    f"verifier={verifier}",
                    "utility.splitter=llm",
                    "executor.unsupported=best",
                ],
            )
        )
        assert type(agent.executor.utility.verifier).__name__ == name
        assert agent.respond("Does the Grand Meridian Hotel have a pool?").outcome is not None


def test_the_verifier_is_in_a_runs_fingerprint_only_when_the_claims_utility_uses_it():
    from augmenter.config import compose
    from augmenter.fingerprint import system_config as _fingerprint

    kf1 = [_fingerprint(compose("eval", [f"verifier={v}"])) for v in ("fast", "llm")]
    assert kf1[0] == kf1[1]
    claims = [_fingerprint(compose("eval", ["experiment=claims_bm25", f"verifier={v}"])) for v in ("fast", "llm")]
    assert claims[0] != claims[1] and "claims" in claims[0]["prompt_files"]
