"""The repetition and dodge checks as utilities (alone, on KF1, on the claims utility), on the
examples the issue quotes and on DSTC11's real replies, the revision their feedback brings, and llama.cpp's
repeat penalty in the sampling config."""

import json

import pytest

from augmenter.config import build_agent, build_llm, compose
from augmenter.errors import ConfigError
from augmenter.llm import FakeLLM, LocalLLM, OpenAICompatLLM, SamplingParams
from augmenter.memory import EntityMention, Snippet, Utterance, WorkingMemory
from augmenter.utilities import ClaimsUtility, CombinedUtility, DodgeUtility, KF1Utility, RepetitionUtility
from augmenter.utilities.dodge import find_dodges, place_names
from augmenter.utilities.repetition import measure
from conftest import DSTC11

# replies found by hand among the paper's system's answers on DSTC11 turns
NINE_TIMES = " ".join(["The restaurant has a large, open dining area with a large, open kitchen."] * 9)
DODGE = "Do you have a certain area or price range in mind?"


def _memory(q, history=(), evidence=(), entities=()):
    mem = WorkingMemory(q=q, h_q=[Utterance(speaker=s, text=t) for s, t in history])
    mem.e = [Snippet(id=str(i), text=t) for i, t in enumerate(evidence)]
    mem.entities = list(entities)
    return mem


@pytest.fixture(scope="module")
def dstc11_dev():
    logs = json.loads((DSTC11 / "dev" / "logs.json").read_text())
    labels = json.loads((DSTC11 / "dev" / "labels.json").read_text())
    return logs, labels


# ---- repetition ---------------------------------------------------------------------------------------------------
def test_the_issues_nine_times_repeated_sentence_fails_with_feedback():
    result = RepetitionUtility()(_memory("Tell me about the restaurant."), NINE_TIMES)
    assert result.score == pytest.approx(1 / 9)  # 8 of the 9 sentences are copies
    assert not result.passed and "is said 9 times" in result.feedback
    assert '"The restaurant has a large, open dining area with a large, open kitchen."' in result.feedback
    assert RepetitionUtility()(_memory("Tell me about it."), NINE_TIMES.split(". ")[0] + ".").passed


def test_kf1_lets_the_repetition_through_and_the_combination_does_not():
    # reviews that say the same thing in several snippets, as DSTC11's do: repeating matches more of their words
    evidence = [
        "The restaurant has a large, open dining area.",
        "The open kitchen is large.",
        "A large dining area and an open kitchen.",
        "The restaurant is large and open.",
        "The dining area is open and large.",
        "Guests said the restaurant has a large, open dining area with a large, open kitchen.",
    ]
    mem = _memory("What is the restaurant like?", evidence=evidence)
    kf1 = KF1Utility(threshold=0.2)
    assert kf1(mem, NINE_TIMES).passed  # KF1 alone: the repeated answer passes, and scores higher than saying it once
    assert kf1(mem, NINE_TIMES).score > kf1(mem, NINE_TIMES.split(". ")[0] + ".").score
    combined = CombinedUtility(KF1Utility(threshold=0.2), ["repetition"])
    repeated, once = combined(mem, NINE_TIMES), combined(mem, NINE_TIMES.split(". ")[0] + ".")
    assert not repeated.passed and "9 times" in repeated.feedback
    assert once.passed and once.score > repeated.score


def test_repeating_an_earlier_answer_fails():
    history = [
        ("U", "Is there parking at the Ashley Hotel?"),
        ("S", "Yes, the Ashley Hotel offers free parking for all guests."),
        ("U", "And wifi?"),
    ]
    result = RepetitionUtility()(
        _memory("And wifi?", history), "Yes, the Ashley Hotel offers free parking for all guests."
    )
    assert not result.passed and "already said earlier" in result.feedback
    assert RepetitionUtility()(_memory("And wifi?", history), "Yes, wifi is free in every room.").passed
    # the user's own words are no repetition: answers echo questions
    echo = [("U", "Does the Ashley Hotel offer free parking for all guests?")]
    assert RepetitionUtility()(_memory("ok", echo), "The Ashley Hotel offers free parking for all guests.").passed


def test_dstc11_human_replies_do_not_repeat_themselves(dstc11_dev):
    logs, labels = dstc11_dev
    gold = [(log, label["response"]) for log, label in zip(logs, labels) if label.get("target")]
    assert len(gold) == 1569
    flagged = [
        r
        for log, r in gold
        if RepetitionUtility().feedback(RepetitionUtility().measure(r, [Utterance(**t) for t in log])) is not None
    ]
    assert flagged == []
    # every system turn of the dev logs against its dialogue's earlier system turns: at most a handful repeat
    turns = {
        (log[0]["text"], i): (t["text"], [u["text"] for u in log[:i] if u["speaker"] == "S"])
        for log in logs
        for i, t in enumerate(log)
        if t["speaker"] == "S"
    }
    repeats = [text for text, before in turns.values() if measure(text, before).earlier > 0.5]
    assert len(turns) > 7000 and len(repeats) / len(turns) < 0.005
    assert all(measure(text).within <= 0.2 for text, _ in turns.values())


# ---- dodging ------------------------------------------------------------------------------------------------------
def test_the_issues_dodge_fails_when_the_place_was_named():
    result = DodgeUtility()(_memory("Is there an onsite pool at Ashley Hotel?"), DODGE)
    assert result.score == 0.0 and not result.passed
    assert "Ashley Hotel" in result.feedback and DODGE in result.feedback
    named_before = _memory(
        "Are their rooms clean?",
        [("U", "Tell me about Rosa's Bed and Breakfast."), ("S", "It is a guesthouse in the north.")],
    )
    assert "Rosa's Bed and Breakfast" in DodgeUtility()(named_before, DODGE).feedback
    linked = _memory(
        "Are the rooms clean?",
        entities=[EntityMention(entity_id=1, name="HOBSONS HOUSE", surface="it", in_query=False)],
    )
    assert "HOBSONS HOUSE" in DodgeUtility()(linked, DODGE).feedback
    assert DodgeUtility()(_memory("Is there an onsite pool at Ashley Hotel?"), "Yes, there is a pool.").passed


def test_asking_is_fine_when_the_dialogue_has_not_given_it():
    # DSTC11 dev, verbatim: the user names no place, so the wizard's question is the right one
    q = "I would like a recommendation for a cozy Bed and Breakfast."
    reply = "May I please have the specific area and price range? So that I may narrow down the search."
    assert DodgeUtility()(_memory(q), reply).passed
    # a new search after a named place
    history = [("U", "Is the Gonville Hotel nice?"), ("S", "Yes, guests love it.")]
    assert DodgeUtility()(_memory("I also need a restaurant nearby.", history), DODGE).passed
    assert place_names("Is the Gonville Hotel nice? I need a Hotel.") == ["Gonville Hotel"]


def test_other_slots_the_user_just_gave():
    assert find_dodges("What day will you be checking in?", "Please book for 4 nights beginning thursday.")
    assert find_dodges("How many people is the reservation for?", "Yes, please, for four people.")
    assert find_dodges("How many nights will you stay?", "I need it for 3 nights.")
    assert not find_dodges("What day will you be checking in?", "Please book it for 2 people.")


def test_dstc11_replies_rarely_dodge(dstc11_dev):
    logs, labels = dstc11_dev
    gold = [(log, label["response"]) for log, label in zip(logs, labels) if label.get("target")]
    assert [r for log, r in gold if find_dodges(r, log[-1]["text"], [t["text"] for t in log[:-1]])] == []
    found, turns = [], 0
    for log in logs:
        for i, t in enumerate(log[1:], 1):
            if t["speaker"] == "S":
                turns += 1
                found += find_dodges(t["text"], log[i - 1]["text"], [u["text"] for u in log[: i - 1]])
    assert turns > 10000 and len(found) / turns < 0.002
    # those found are real: e.g. "What day will you be checking in?" after "... beginning thursday ..."
    assert any(d.question == "What day will you be checking in?" and d.given == "thursday" for d in found)


# ---- as configured utilities --------------------------------------------------------------------------------------
def test_configs_compose_on_kf1_and_on_claims():
    repetition = compose("chat", ["llm=fake", "utility=repetition"])
    assert repetition.utility.base._target_ == "augmenter.utilities.KF1Utility"
    assert list(repetition.utility.checks) == ["repetition"]
    on_claims = compose(
        "chat", ["llm=fake", "utility=dodge", "utility@utility.base=claims", "utility.checks=[dodge,repetition]"]
    )
    agent = build_agent(on_claims)
    utility = agent.executor.utility
    assert isinstance(utility, CombinedUtility) and isinstance(utility.base, ClaimsUtility)
    assert utility.checks_claims and [type(c) for c in utility.checks] == [DodgeUtility, RepetitionUtility]
    mem = _memory(
        "Is there a pool at the Grand Meridian Hotel?", evidence=["The Grand Meridian Hotel has an indoor heated pool."]
    )
    result = utility(mem, "The Grand Meridian Hotel has an indoor heated pool. " * 3)
    assert result.claims and not result.passed and "3 times" in result.feedback
    alone = build_agent(compose("chat", ["llm=fake", "utility=repetition", "~utility@utility.base"]))
    assert alone.executor.utility.base is None
    with pytest.raises(ConfigError):
        compose("chat", ["utility=repetition", "utility.within_threshold=2"])
    with pytest.raises(ConfigError, match="unknown check"):
        build_agent(compose("chat", ["llm=fake", "utility=repetition", "utility.checks=[rhymes]"]))


def test_the_agent_revises_a_repeated_answer():
    cfg = compose(
        "chat",
        [
            "llm=fake",
            "utility=repetition",
            "utility.base.threshold=0.0",
            "agent.max_llm_calls=2",
            f"llm.responses=['{NINE_TIMES}', 'Yes, it has a large open dining area.']",
        ],
    )
    mem = build_agent(cfg).respond("Does the Grand Meridian Hotel have a pool?")
    assert mem.o[0] == NINE_TIMES and mem.f[0] and "9 times" in mem.f[0]
    assert mem.response == "Yes, it has a large open dining area." and mem.f[1] is None


# ---- llama.cpp's repeat penalty -----------------------------------------------------------------------------------
def test_repeat_penalty_in_the_sampling_config():
    assert "repeat_penalty" not in SamplingParams().key()  # off: earlier cache entries keep their keys
    assert SamplingParams(repeat_penalty=1.2).key()["repeat_penalty"] == 1.2
    llm = build_llm(compose("chat", ["llm=fake", "sampling.repeat_penalty=1.3"]))
    assert llm.params.repeat_penalty == 1.3
    assert compose("chat", []).sampling.repeat_penalty == 1.0
    for bad in ("0", "-1", "abc"):
        with pytest.raises(ConfigError, match="repeat_penalty"):
            compose("chat", [f"sampling.repeat_penalty={bad}"])


class _Llama:
    """Stands in for llama_cpp.Llama: keeps the arguments of each chat completion."""

    def __init__(self):
        self.kwargs = []

    def tokenize(self, data, add_bos=False, special=False):
        return data.split()

    def create_chat_completion(self, **kwargs):
        self.kwargs.append(kwargs)
        return {"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}], "usage": {}}


def test_the_local_backend_passes_the_repeat_penalty_to_llama_cpp():
    local = LocalLLM()
    local._llm = _Llama()
    local.complete([{"role": "user", "content": "hi"}], SamplingParams(repeat_penalty=1.25))
    local.complete([{"role": "user", "content": "hi"}], SamplingParams())
    assert [k["repeat_penalty"] for k in local._llm.kwargs] == [1.25, 1.0]


def test_the_openai_backend_sends_it_only_when_set():
    llm = OpenAICompatLLM(model="m", base_url="http://127.0.0.1:9/v1")
    assert "extra_body" not in llm._kwargs([{"role": "user", "content": "hi"}], SamplingParams())
    assert llm._kwargs([{"role": "user", "content": "hi"}], SamplingParams(repeat_penalty=1.1))["extra_body"] == {
        "repeat_penalty": 1.1
    }
    assert FakeLLM().complete([{"role": "user", "content": "hi"}], SamplingParams(repeat_penalty=1.1)).text
