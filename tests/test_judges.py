"""The LLM judges (BotChat's UniEval, Arena, GTEval; WikiChat's five criteria), Bootstrap Elo against
hand-computed values, the order swap and position bias, self-consistency over seeds, unparseable and failed
verdicts (counted, never scored), and `augmenter judge` end to end, all with the scripted fake LLM."""

import json

import pytest

from augmenter.cli.main import main
from augmenter.errors import InputError, LLMError, LLMFatalError
from augmenter.judges import (
    ArenaJudge,
    ChecksJudge,
    Dialogue,
    EloSettings,
    GTEvalJudge,
    UniEvalJudge,
    WikiChatJudge,
    bootstrap_elo,
    elo,
    make_judges,
    passes_at,
)
from augmenter.judges.parsing import parse_criteria, parse_pair_choice, parse_yes_no_index
from augmenter.judges.results import summarize
from augmenter.judges.run import JudgeRun, dialogues_from_eval, first_dialogues, known_orderings, load_systems, plan
from augmenter.judges.validity import copied_examples, known_ordering, position_bias, self_consistency, wilson
from augmenter.llm import Completion, FakeLLM


# ---- Elo ---------------------------------------------------------------------------------------------------------
def test_elo_by_hand():
    # One game, A beats B: E_A = 1 / (1 + 10^((1000 - 1000) / 400)) = 0.5; A += 32 (1 - 0.5) = 16, B -= 16.
    assert elo([("A", "B", 1)]) == {"A": 1016.0, "B": 984.0}
    # A tie between equals moves nothing.
    assert elo([("A", "B", 0.5)]) == {"A": 1000.0, "B": 1000.0}
    # A beats B, then B beats A. Game 2: E_B = 1 / (1 + 10^((1016 - 984) / 400)) = 1 / (1 + 10^0.08)
    # = 1 / (1 + 1.2022644) = 0.4540780; B += 32 (1 - 0.4540780) = 17.4695 -> B 1001.4695, A 998.5305.
    swapped = elo([("A", "B", 1), ("B", "A", 1)])
    assert swapped["A"] == pytest.approx(998.5305, abs=1e-4) and swapped["B"] == pytest.approx(1001.4695, abs=1e-4)
    # A beats B twice. Game 2: E_A = 1 / (1 + 10^(-0.08)) = 1 / (1 + 0.8317638) = 0.5459220;
    # A += 32 (1 - 0.5459220) = 14.5305 -> A 1030.5305, B 969.4695.
    twice = elo([("A", "B", 1), ("A", "B", 1)])
    assert twice["A"] == pytest.approx(1030.5305, abs=1e-4) and twice["B"] == pytest.approx(969.4695, abs=1e-4)
    # A win, then a tie: game 2 has the same E_A = 0.5459220; A += 32 (0.5 - 0.5459220) = -1.4695 -> A 1014.5305.
    tie = elo([("A", "B", 1), ("A", "B", 0.5)])
    assert tie["A"] == pytest.approx(1014.5305, abs=1e-4) and tie["B"] == pytest.approx(985.4695, abs=1e-4)


def test_elo_three_games_by_hand():
    # Game 1, A beats B: A 1016, B 984, C 1000.
    # Game 2, B beats C: E_B = 1 / (1 + 10^((1000 - 984) / 400)) = 1 / (1 + 10^0.04) = 1 / (1 + 1.0964782)
    #   = 0.4769904; B += 32 (1 - 0.4769904) = 16.7363 -> B 1000.7363, C 983.2637.
    # Game 3, A beats C: E_A = 1 / (1 + 10^((983.2637 - 1016) / 400)) = 1 / (1 + 10^-0.0818408)
    #   = 1 / (1 + 0.8282460) = 0.5469723; A += 32 (1 - 0.5469723) = 14.4969 -> A 1030.4969, C 968.7668.
    ratings = elo([("A", "B", 1), ("B", "C", 1), ("A", "C", 1)])
    assert ratings["A"] == pytest.approx(1030.4969, abs=1e-4)
    assert ratings["B"] == pytest.approx(1000.7363, abs=1e-4)
    assert ratings["C"] == pytest.approx(968.7668, abs=1e-4)
    assert sum(ratings.values()) == pytest.approx(3000)  # Elo only moves points between players


def test_bootstrap_elo_is_botchats_median_over_seeded_shuffles():
    # Two identical games: every order gives A 1030.5305 (see test_elo_by_hand), every resample too.
    (a, b) = bootstrap_elo([("A", "B", 1), ("A", "B", 1)])
    assert (a.player, a.elo, a.low, a.high, a.games) == (
        "A",
        pytest.approx(1030.5305, abs=1e-4),
        pytest.approx(1030.5305, abs=1e-4),
        pytest.approx(1030.5305, abs=1e-4),
        2,
    )
    assert b.elo == pytest.approx(969.4695, abs=1e-4)
    # A win each way: a shuffle ends at 998.5305 or 1001.4695 for A; the median is one of them or their mean.
    games = [("A", "B", 1), ("B", "A", 1)]
    first = {r.player: r.elo for r in bootstrap_elo(games)}
    assert first["A"] in (pytest.approx(998.5305, abs=1e-3), pytest.approx(1000.0), pytest.approx(1001.4695, abs=1e-3))
    assert {r.player: r.elo for r in bootstrap_elo(games)} == first  # seeded: the same every time
    # BotChat's settings are the defaults
    assert EloSettings() == EloSettings(initial=1000, scale=400, k=32, rounds=1000, seed=0)


def test_bootstrap_elo_ranks_and_gives_intervals():
    games = [("A", "B", 1)] * 8 + [("B", "A", 1)] * 2 + [("B", "C", 1)] * 6 + [("C", "B", 0.5)] * 4
    ratings = bootstrap_elo(games, EloSettings(rounds=300), players=["D"])
    assert [r.player for r in ratings if r.games] == ["A", "B", "C"]
    for r in ratings:
        assert r.low <= r.elo <= r.high or r.games == 0
    assert next(r for r in ratings if r.player == "D").games == 0  # listed, never played: stays at 1000
    with pytest.raises(ValueError):
        elo([("A", "A", 1)])
    with pytest.raises(ValueError):
        elo([("A", "B", 2)])


# ---- parsing -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, expected",
    [
        ("Choice: Conversation 1; Reason: too long", "1"),
        ("**Choice:** Conversation 2\nReason: it repeats itself", "2"),
        ("Choice: Both; Reason: both sound like assistants", "both"),
        ("choice - neither (they read like people)", "neither"),
        ("Conversation 2 is AI-involved: it says it is an assistant.", "2"),
        ("Choice: Conversation 1, Conversation 2, Both or Neither", None),  # the format echoed back: no verdict
        ("I cannot tell.", None),
        ("", None),
    ],
)
def test_pair_choice_parsing(text, expected):
    assert parse_pair_choice(text) == expected


def test_yes_no_index_parsing():
    assert parse_yes_no_index("Choice: Yes\nIndex: 3\nReason: formal", 6) == {"ai": True, "index": 3}
    assert parse_yes_no_index("Choice: Yes Index: 3 Reason: BlahBlah", 6) == {"ai": True, "index": 3}  # one line
    assert parse_yes_no_index("Choice: No\nIndex: None", 6) == {"ai": False, "index": None}
    assert parse_yes_no_index("Choice: Yes\nIndex: 9", 6) == {"ai": True, "index": None}  # out of range: unknown
    assert parse_yes_no_index("Choice: Yes or No", 6) is None
    assert parse_yes_no_index("Maybe.", 6) is None


def test_criteria_parsing():
    text = (
        "Relevant: it answers the question. Score: 4\n"
        "Informational: 5/5\n"
        "Naturalness: a bit stiff (3)\n"
        "Non-repetitive: it says the same sentence twice. Score: 2\n"
        "Temporally correct: 80/100"
    )
    assert parse_criteria(text) == {
        "relevant": 4,
        "informational": 5,
        "natural": 3,
        "non_repetitive": 2,
        "temporal": None,
    }  # another scale is not converted
    assert parse_criteria("The reply is fine.") == dict.fromkeys(
        ["relevant", "informational", "natural", "non_repetitive", "temporal"]
    )
    assert parse_criteria("Relevant: mentions 2 hotels and 3 prices")["relevant"] is None  # two numbers: which?


# ---- judges end to end with the fake LLM --------------------------------------------------------------------------
def _dialogue(system, i=0, replies=("Sure, it is open.", "Yes, there is parking."), truth=True):
    opening = [("U", "Hi, is the museum open today?"), ("S", "Let me check for you.")]
    utterances = [*opening, ("U", "Thanks, and on Sunday?"), ("S", replies[0]), ("U", "Parking?"), ("S", replies[1])]
    gt = [*opening, ("U", "Great."), ("S", "It opens at ten."), ("U", "Thanks!"), ("S", "You're welcome.")]
    return Dialogue(f"conv-{i}", system, utterances, 2, gt if truth else [])


def test_unieval_end_to_end():
    fake = FakeLLM(responses=["Choice: Yes\nIndex: 4\nReason: utterance 4 is too formal.", "Choice: No\nIndex: None"])
    judge = UniEvalJudge(fake)
    ai, human = judge.judge([_dialogue("x")]), judge.judge([_dialogue("x")])
    assert ai.status == "ok" and ai.verdict == {"ai": True, "index": 4, "length": 6}
    assert "1. A: Hi, is the museum open today? <chat_end>" in fake.calls[0][-1]["content"]
    assert passes_at(ai.verdict, 3) is True and passes_at(ai.verdict, 4) is False and passes_at(human.verdict, 6)
    assert passes_at({"ai": True, "index": None, "length": 6}, 4) is None  # undecidable, not a pass or a fail
    assert passes_at({"ai": True, "index": None, "length": 6}, 6) is False


def test_arena_and_gteval_end_to_end():
    fake = FakeLLM(responses=["Choice: Conversation 2; Reason: repetitive", "Choice: Neither"])
    judge = ArenaJudge(fake)
    long_one = _dialogue("a")
    short_one = Dialogue("conv-0", "b", long_one.utterances[:4], 2)
    verdict = judge.judge([long_one, short_one])
    assert verdict.verdict == {"choice": "2", "first": 1.0, "length": 4}  # cut to the shorter one
    assert "Sure, it is open." in fake.calls[0][-1]["content"] and "Parking?" not in fake.calls[0][-1]["content"]
    assert judge.judge([long_one, short_one]).verdict["first"] == 0.5  # neither: a tie
    gt = GTEvalJudge(FakeLLM(default="Choice: Conversation 1"))
    assert gt.judge([long_one, long_one.truth()]).verdict["first"] == 0.0
    assert "written entirely by people" in gt.llm.calls[0][0]["content"]
    with pytest.raises(ValueError):
        judge.judge([long_one])


def test_wikichat_end_to_end():
    answer = (
        "Relevant: on topic. Score: 5\nInformational: Score: 4\nNatural: Score: 4\n"
        "Non-repetitive: Score: 5\nTemporally correct: Score: 5"
    )
    fake = FakeLLM(responses=[answer, "I like it."])
    result = WikiChatJudge(fake).judge([_dialogue("x")])
    assert len(fake.calls) == 2  # one per assistant turn after the opening
    assert result.status == "partial"
    first, second = result.verdict["turns"]
    assert first == {
        "index": 3,
        "status": "ok",
        "scores": {"relevant": 5, "informational": 4, "natural": 4, "non_repetitive": 5, "temporal": 5},
    }
    assert second["status"] == "unparsed" and set(second["scores"].values()) == {None}
    assert "Chatbot: Sure, it is open." in fake.calls[0][-1]["content"]  # the rated reply
    assert "Chatbot: Let me check for you." in fake.calls[0][-1]["content"]  # the history before it


def test_failed_call_is_a_failed_judgment_and_a_fatal_one_stops():
    failed = ArenaJudge(FakeLLM(responses=[LLMError("server down")])).judge([_dialogue("a"), _dialogue("b")])
    assert failed.status == "failed" and failed.error == "server down" and failed.verdict == {}
    with pytest.raises(LLMFatalError):
        UniEvalJudge(FakeLLM(responses=[LLMFatalError("401: bad key")])).judge([_dialogue("a")])


def test_make_judges_rejects_unknown_names():
    with pytest.raises(InputError, match="unknown judge"):
        make_judges(FakeLLM(), ["arena", "mtbench"])
    assert set(make_judges(FakeLLM(), ["arena", "wikichat"])) == {"arena", "wikichat"}


# ---- the order swap, position bias, self-consistency ----------------------------------------------------------------
def _systems(n=3):
    return {
        "good": [_dialogue("good", i, ("It opens at ten on Sunday.", "Yes, free parking.")) for i in range(n)],
        "bad": [_dialogue("bad", i, ("I am an AI assistant.", "I am an AI assistant.")) for i in range(n)],
    }


def test_both_orders_are_asked_and_a_position_biased_judge_shows(tmp_path):
    judges = {"arena": ArenaJudge(FakeLLM(default="Choice: Conversation 1"))}  # always blames the first shown
    tasks = plan(judges, _systems(), [0])
    assert len(tasks) == 6 and {t.order for t in tasks} == {0, 1}
    assert {tuple(d.system for d in t.dialogues) for t in tasks} == {("good", "bad"), ("bad", "good")}
    records = JudgeRun(judges, _systems(), tmp_path, progress=False).run()
    bias = position_bias(records, "arena")
    assert bias == {"pairs": 3, "flip_rate": 1.0, "first_wins": 0.0, "decisive": 6}
    results = summarize(records, ["good", "bad"], [0], EloSettings(rounds=50))
    assert results["arena"]["pairs"]["good"]["bad"] == {"wins": 0, "ties": 3, "losses": 0}  # combined: no winner
    elos = {r["player"]: r["elo"] for r in results["arena"]["elo"]}
    assert abs(elos["good"] - elos["bad"]) < 20


def test_a_consistent_judge_wins_in_both_orders(tmp_path):
    def blame_the_assistant(messages):
        prompt = messages[-1]["content"]
        return (
            "Choice: Conversation 1"
            if prompt.index("AI assistant") < prompt.index("Conversation 2:")
            else "Choice: Conversation 2"
        )

    judges = {"arena": ArenaJudge(FakeLLM(default=blame_the_assistant))}
    records = JudgeRun(judges, _systems(), tmp_path, progress=False).run()
    assert position_bias(records, "arena")["flip_rate"] == 0.0
    results = summarize(records, ["good", "bad"], [0], EloSettings(rounds=50))
    assert [r["player"] for r in results["arena"]["elo"]] == ["good", "bad"]
    assert results["arena"]["pairs"]["good"]["bad"] == {"wins": 3, "ties": 0, "losses": 0}
    assert results["arena"]["elo"][0]["low"] > 1000


class SeededLLM(FakeLLM):
    """Answers by the sampling seed: seeds 0 and 1 agree, seed 2 says the opposite."""

    def complete(self, messages, params):
        self.calls.append(messages)
        return Completion(text="Choice: Yes\nIndex: 3" if params.seed != 2 else "Choice: No")


def test_self_consistency_over_seeds(tmp_path):
    judges = {"unieval": UniEvalJudge(SeededLLM())}
    records = JudgeRun(judges, {"good": _systems()["good"]}, tmp_path, seeds=[0, 1, 2], progress=False).run()
    consistency = self_consistency(records, "unieval")
    assert consistency == {"questions": 3, "agreement": pytest.approx(1 / 3), "seeds": 3}
    results = summarize(records, ["good"], [0, 1, 2], EloSettings(rounds=10))
    assert results["unieval"]["good"]["judged"] == 3  # figures from the first seed only


def test_unparsed_and_failed_judgments_are_counted_not_scored_and_failed_ones_retried(tmp_path):
    replies = ["Choice: Conversation 2", "no idea", LLMError("timeout"), "Choice: Conversation 1"]
    fake = FakeLLM(responses=replies, default="Choice: Both")
    systems = {"good": _systems(2)["good"], "bad": _systems(2)["bad"]}
    records = JudgeRun({"arena": ArenaJudge(fake)}, systems, tmp_path, progress=False).run()
    assert [r["status"] for r in records] == ["ok", "unparsed", "failed", "ok"]
    results = summarize(records, ["good", "bad"], [0], EloSettings(rounds=20))
    assert results["arena"]["games"] == 2 and results["arena"]["unparsed"] == 1 and results["arena"]["failed"] == 1
    calls = len(fake.calls)
    again = JudgeRun({"arena": ArenaJudge(fake)}, systems, tmp_path, progress=False).run()
    assert len(fake.calls) == calls + 1  # only the failed one is asked again (unparsed is a judgment)
    assert [r["status"] for r in again] == ["ok", "unparsed", "ok", "ok"]
    assert len((tmp_path / "judgments.jsonl").read_text().splitlines()) == 4
    lines = (tmp_path / "judgments.jsonl").read_text().splitlines()
    damaged = {**json.loads(lines[0]), "verdict": None}
    (tmp_path / "judgments.jsonl").write_text("\n".join([json.dumps(damaged), *lines[1:], "{cut sho"]) + "\n")
    calls = len(fake.calls)
    JudgeRun({"arena": ArenaJudge(fake)}, systems, tmp_path, progress=False).run()
    assert len(fake.calls) == calls + 1  # the damaged judgment is asked again, the cut line dropped


def test_another_judge_configuration_is_refused(tmp_path):
    from augmenter.errors import ConfigError

    systems = {"good": _systems(1)["good"]}
    JudgeRun({"unieval": UniEvalJudge(FakeLLM())}, systems, tmp_path, fingerprint={"model": "a"}, progress=False).run()
    with pytest.raises(ConfigError, match="different configuration"):
        JudgeRun({"unieval": UniEvalJudge(FakeLLM())}, systems, tmp_path, fingerprint={"model": "b"}).run()
    JudgeRun(
        {"unieval": UniEvalJudge(FakeLLM())},
        systems,
        tmp_path,
        fingerprint={"model": "b"},
        restart=True,
        progress=False,
    ).run()


def test_rule_checks_are_judged_anew_on_every_run_while_llm_judgments_resume(tmp_path):
    fake = FakeLLM(default="Choice: Conversation 1")
    systems = {"good": _systems(2)["good"], "bad": _systems(2)["bad"]}
    judges = {"arena": ArenaJudge(fake), "checks": ChecksJudge()}
    first = JudgeRun(judges, systems, tmp_path, progress=False).run()
    path = tmp_path / "judgments.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:  # stale verdicts, as if the checks had been stricter when they were written
        if row["judge"] == "checks":
            row["verdict"] = {**row["verdict"], "flags": [9, 9], "choice": "neither", "first": 0.5}
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    calls = len(fake.calls)
    again = JudgeRun(judges, systems, tmp_path, progress=False).run()
    assert len(fake.calls) == calls  # the Arena's LLM judgments resume
    checks = [r for r in again if r["judge"] == "checks"]
    assert checks and all(r["verdict"]["flags"] != [9, 9] for r in checks)
    assert [r["verdict"] for r in checks] == [r["verdict"] for r in first if r["judge"] == "checks"]
    assert len(path.read_text().splitlines()) == len(first)  # one line per question, none duplicated


# ---- agreement with a known ordering ------------------------------------------------------------------------------
def test_wilson_interval_by_hand():
    low, high = wilson(8, 10)  # the textbook example: 0.490 to 0.943
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    assert wilson(0, 0) == (None, None)
    assert wilson(5, 5)[1] == 1.0 and wilson(0, 5)[0] == 0.0


def _blame_the_assistant(messages):
    prompt = messages[-1]["content"]
    return (
        "Choice: Conversation 1"
        if prompt.index("AI assistant") < prompt.index("Conversation 2:")
        else "Choice: Conversation 2"
    )


def test_known_ordering_arena_agrees_only_with_enough_decisive_verdicts(tmp_path):
    judges = {"arena": ArenaJudge(FakeLLM(default=_blame_the_assistant))}
    records = JudgeRun(judges, _systems(12), tmp_path / "a", progress=False).run()
    right = known_ordering(records, "arena", "good", "bad")
    assert right | {"low": None} == {
        "better": "good",
        "worse": "bad",
        "compared": 12,
        "wins": 12,
        "ties": 0,
        "losses": 0,
        "agreement": 1.0,
        "low": None,
        "high": 1.0,
        "reading": "agrees",
    }
    assert right["low"] == pytest.approx(wilson(12, 12)[0]) and right["low"] > 0.5
    wrong = known_ordering(records, "arena", "bad", "good")
    assert (wrong["agreement"], wrong["reading"]) == (0.0, "reversed")
    few = known_ordering(JudgeRun(judges, _systems(3), tmp_path / "b", progress=False).run(), "arena", "good", "bad")
    assert (few["wins"], few["reading"]) == (3, "cannot tell")  # 3 of 3: the interval still holds 50%
    biased = {"arena": ArenaJudge(FakeLLM(default="Choice: Conversation 1"))}
    ties = known_ordering(JudgeRun(biased, _systems(12), tmp_path / "c", progress=False).run(), "arena", "good", "bad")
    assert (ties["compared"], ties["ties"], ties["agreement"], ties["reading"]) == (12, 12, None, "all ties")
    assert known_ordering(records, "arena", "good", "missing")["reading"] == "no comparison"


def test_known_ordering_of_one_dialogue_judges_compares_each_systems_own_score(tmp_path):
    def rate(messages):  # a WikiChat judge that scores the assistant-like reply low
        low = "AI assistant" in messages[-1]["content"].split("The chatbot's reply to rate:")[1]
        return "\n".join(
            f"{c}: Score: {2 if low else 4}"
            for c in ("Relevant", "Informational", "Natural", "Non-repetitive", "Temporally correct")
        )

    def spot(messages):  # a UniEval judge that finds the AI in the bad system's dialogues only
        return "Choice: Yes\nIndex: 4" if "AI assistant" in messages[-1]["content"] else "Choice: No\nIndex: None"

    judges = {"wikichat": WikiChatJudge(FakeLLM(default=rate)), "unieval": UniEvalJudge(FakeLLM(default=spot))}
    records = JudgeRun(judges, _systems(12), tmp_path, progress=False).run()
    for name in judges:
        k = known_ordering(records, name, "good", "bad")
        assert (k["compared"], k["wins"], k["losses"], k["reading"]) == (12, 12, 0, "agrees"), name
    assert known_ordering(records, "unieval", "bad", "good")["reading"] == "reversed"
    early = [
        {
            "judge": "unieval",
            "status": "ok",
            "systems": ["full"],
            "dialogue_id": "d",
            "verdict": {"ai": True, "index": 5, "length": 8},
        },  # AI from utterance 5 of 8
        {
            "judge": "unieval",
            "status": "ok",
            "systems": ["short"],
            "dialogue_id": "d",
            "verdict": {"ai": False, "index": None, "length": 4},
        },
    ]  # its user quit after 4
    assert known_ordering(early, "unieval", "short", "full")["ties"] == 1  # compared at 4: both pass
    assert known_ordering(records, "unieval", "good", "missing")["compared"] == 0


def test_answers_copying_the_prompts_worked_example_are_counted():
    example = (
        "Relevant: it does not answer the question about parking. Score: 2\n"
        "Informational: it gives nothing new. Score: 1"
    )
    copy = (
        "Relevant: it does not answer the question about beer. Score: 2\nInformational: it gives nothing new. Score: 1"
    )
    own = "Relevant: yes, it says the pool opens at nine. Score: 5\nInformational: the hours are useful. Score: 4"
    records = [
        {"judge": "wikichat", "raw": [copy, own]},
        {"judge": "wikichat", "raw": ["Relevant: 4/5"]},
        {"judge": "arena", "raw": [copy]},
    ]
    assert copied_examples(records, "wikichat", [example]) == {"answers": 3, "copied": 1, "share": 1 / 3}
    assert copied_examples(records, "unieval", [example])["share"] is None  # no answers
    short = [{"judge": "unieval", "raw": ["Choice: No\nIndex: None\nReason: fine"]}]
    assert copied_examples(short, "unieval", ["Choice: No\nIndex: None\nReason: Both talk naturally."])["copied"] == 0


def test_the_rule_checks_judge_prefers_the_conversation_with_fewer_flagged_replies(tmp_path):
    opening = [("U", "I need a hotel in the north."), ("S", "The Acorn Guest House is there.")]
    clean = Dialogue(
        "c",
        "clean",
        [
            *opening,
            ("U", "Is there an onsite pool at Ashley Hotel?"),
            ("S", "No, the Ashley Hotel has no pool."),
            ("U", "Parking?"),
            ("S", "Yes, free parking."),
        ],
        2,
    )
    looping = "The hotel has a large, open lobby with a bar."
    flawed = Dialogue(
        "c",
        "flawed",
        [
            *opening,
            ("U", "Is there an onsite pool at Ashley Hotel?"),
            ("S", "Do you have a certain area or price range in mind?"),  # a dodge
            ("U", "Parking?"),
            ("S", " ".join([looping] * 3)),
        ],
        2,
    )  # a repeat
    judge = ChecksJudge()
    assert judge.flagged(clean) == (0, 2) and judge.flagged(flawed) == (2, 2)
    verdict = judge.judge([flawed, clean])
    assert (verdict.status, verdict.llm_calls) == ("ok", 0)
    assert (verdict.verdict["choice"], verdict.verdict["first"]) == ("1", 0.0)
    assert judge.judge([clean, flawed]).verdict["first"] == 1.0 and judge.judge([clean, clean]).verdict["first"] == 0.5
    assert judge.flagged(clean.cut(4)) == (0, 1)  # only replies after the human opening, in what is shown
    records = JudgeRun({"checks": judge}, {"clean": [clean], "flawed": [flawed]}, tmp_path, progress=False).run()
    assert position_bias(records, "checks")["flip_rate"] == 0.0  # a rule has no favourite position
    assert known_ordering(records, "checks", "clean", "flawed")["wins"] == 1
    results = summarize(records, ["clean", "flawed"], [0], EloSettings(rounds=20))
    assert [r["player"] for r in results["checks"]["elo"]] == ["clean", "flawed"]
    assert make_judges(FakeLLM(), ["checks"])["checks"].name == "checks"


def test_copied_answers_are_counted_and_never_scored():
    example = "Choice: Conversation 2\nReason: Its reply is long and formal, like an assistant's."
    copied = "Choice: Conversation 1\nReason: Its reply is long and formal, like an assistant's."
    own = "Choice: Conversation 1\nReason: The first reply repeats the question about the pool."
    arena = [
        {
            "judge": "arena",
            "status": "ok",
            "systems": ["a", "b"],
            "order": o,
            "seed": 0,
            "pair": f"p{i}",
            "dialogue_id": f"d{i}",
            "verdict": {"choice": "1", "first": 0.0},
            "raw": [text],
        }
        for i, text in enumerate((copied, own))
        for o in (0, 1)
    ]
    rating = "Relevant: it does not answer the question about parking. Score: 2\nInformational: nothing new. Score: 1"
    turns = [
        {"index": 3, "scores": {"relevant": 2}, "status": "ok"},
        {"index": 5, "scores": {"relevant": 5}, "status": "ok"},
    ]
    wiki = [
        {
            "judge": "wikichat",
            "status": "ok",
            "systems": ["a"],
            "order": 0,
            "seed": 0,
            "pair": "w",
            "dialogue_id": "d0",
            "verdict": {"turns": turns},
            "raw": [rating.replace("parking", "wifi"), "Relevant: it says the pool opens at nine. Score: 5"],
        }
    ]
    results = summarize(
        arena + wiki, ["a", "b"], [0], EloSettings(rounds=10), examples={"arena": [example], "wikichat": [rating]}
    )
    assert (results["arena"]["games"], results["arena"]["copied"]) == (2, 2)  # only the own words count
    assert results["validity"]["arena"]["copied"] == {"answers": 4, "copied": 2, "share": 0.5}
    row = results["wikichat"]["a"]
    assert (row["turns"], row["copied_turns"], row["relevant"]["mean"], row["partial"]) == (1, 1, 5, 1)
    plain = summarize(arena + wiki, ["a", "b"], [0], EloSettings(rounds=10))  # without examples: all scored
    assert plain["arena"]["games"] == 4 and plain["wikichat"]["a"]["relevant"]["mean"] == 3.5


def test_known_orderings_from_config_are_checked_against_the_systems():
    systems = ["human", "llm_only", "paper"]
    assert known_orderings([], systems, human=True) == [("human", "llm_only"), ("human", "paper")]
    assert known_orderings([" paper > llm_only "], systems) == [("paper", "llm_only")]
    assert known_orderings(["human>paper"], systems, human=True) == [("human", "llm_only"), ("human", "paper")]
    for bad in ("paper", "paper>paper", "a>b>c", ">paper"):
        with pytest.raises(InputError, match="BETTER>WORSE"):
            known_orderings([bad], systems)
    with pytest.raises(InputError, match="no system 'claims'.*systems: human, llm_only, paper"):
        known_orderings(["claims>paper"], systems)


def test_known_orderings_on_the_command_line_are_quoted_and_checked():
    from augmenter.config import compose
    from augmenter.errors import ConfigError

    with pytest.raises(ConfigError, match="quote it"):
        compose("judge", ["judge.known=[a>b]"])  # Hydra reads > as syntax
    assert list(compose("judge", ["judge.known=['a>b']"]).judge.known) == ["a>b"]
    with pytest.raises(ConfigError, match="judge.known"):
        compose("judge", ["judge.known=['a,b']"])


# ---- eval runs: the human gold replies as a known ordering ----------------------------------------------------------
def _eval_record(i, response, gold="The Ashley Hotel has no pool."):
    return {
        "dialogue_id": str(i),
        "status": "ok",
        "response": response,
        "references": [gold],
        "memory": {
            "q": "Is there a pool at the Ashley Hotel?",
            "h_q": [{"speaker": "U", "text": "I need a hotel."}, {"speaker": "S", "text": "Which one?"}],
        },
    }


def test_eval_runs_become_short_dialogues_with_the_human_reply_as_a_system(tmp_path):
    run = tmp_path / "sample" / "table2_llm_only"
    run.mkdir(parents=True)
    rows = [_eval_record(i, "Yes! The hotel has a pool, sauna, spa, gym and more.") for i in range(3)]
    rows.append({"dialogue_id": "9", "status": "failed", "response": "", "memory": None})
    (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + "not json\n")
    systems = load_systems([run.parent], human=True, history=2)
    assert set(systems) == {"table2_llm_only", "human"} and len(systems["human"]) == 3  # failed and bad lines skipped
    d = systems["table2_llm_only"][0]
    assert d.utterances[-2:] == [
        ("U", "Is there a pool at the Ashley Hotel?"),
        ("S", "Yes! The hotel has a pool, sauna, spa, gym and more."),
    ]
    assert d.human == 3 and d.ground_truth[-1] == ("S", "The Ashley Hotel has no pool.")
    assert systems["human"][0].utterances[-1] == ("S", "The Ashley Hotel has no pool.")
    assert dialogues_from_eval(rows[:1], "x", history=0)[0].utterances[0][0] == "U"
    with pytest.raises(InputError):
        load_systems([tmp_path / "missing"])


def test_conversations_bring_the_human_dialogue_they_continue_as_the_system_human(tmp_path):
    run = tmp_path / "sample" / "table2_llm_only"
    run.mkdir(parents=True)

    def turn(s, t):
        return {"speaker": s, "text": t}

    opening = [turn("U", "I need a hotel."), turn("S", "Which area?")]
    rows = [
        {
            "conversation_id": "a",
            "status": "ok",
            "opening": opening,
            "utterances": [*opening, turn("U", "The north."), turn("S", "The north.")],
            "ground_truth": [*opening, turn("U", "North, please."), turn("S", "The Acorn is in the north.")],
        },
        {
            "conversation_id": "b",
            "status": "ok",
            "opening": opening,
            "ground_truth": opening,  # nothing after it
            "utterances": [*opening, turn("U", "Cheap."), turn("S", "Cheap.")],
        },
    ]
    (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    systems = load_systems([run.parent], human=True)
    assert set(systems) == {"table2_llm_only", "human"} and [d.id for d in systems["human"]] == ["a"]
    (h,) = systems["human"]
    assert h.utterances[2:] == [("U", "North, please."), ("S", "The Acorn is in the north.")]
    assert h.human == 2 and h.ground_truth == []  # the humans' own dialogue has nothing to be compared with
    for r in rows:
        r["ground_truth"] = opening
    (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match="human"):
        load_systems([run.parent], human=True)


def test_limit_keeps_the_same_first_dialogues_in_every_system(tmp_path):
    for name, order in (("a_run", [5, 3, 8, 1]), ("b_run", [8, 5, 1, 3])):
        run = tmp_path / "sample" / name
        run.mkdir(parents=True)
        (run / "records.jsonl").write_text("".join(json.dumps(_eval_record(i, f"reply {i}")) + "\n" for i in order))
    systems = first_dialogues(load_systems([tmp_path / "sample"], human=True), 2)
    assert {name: sorted(d.id for d in ds) for name, ds in systems.items()} == {
        "a_run": ["3", "5"],
        "b_run": ["3", "5"],
        "human": ["3", "5"],
    }  # the first run's sample order decides
    assert first_dialogues(systems, None) is systems
    with pytest.raises(InputError, match="judge.limit"):
        first_dialogues(systems, 0)


class JudgeLLM(FakeLLM):
    """A scripted judge for the CLI (the config names this class): a fixed answer per prompt."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.rules = {
            "Which conversation is AI-involved": "Choice: Conversation 1; Reason: the first is odd",
            "Which conversation has AI-written utterances": "Choice: Conversation 2",
            "Is this conversation AI-involved": "Choice: No\nIndex: None\nReason: fine",
            "Rate the reply": "Relevant: 4/5\nInformational: 3/5\nNatural: 4/5\nNon-repetitive: 5/5\n"
            "Temporally correct: 5/5",
        }


def test_damaged_records_are_skipped_not_a_crash(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    rows = [
        {"conversation_id": "a", "status": "ok", "utterances": "not a list", "opening": 3},
        {
            "conversation_id": "b",
            "status": "ok",
            "utterances": [{"speaker": "U", "text": "hi"}, 5, {"x": 1}],
            "opening": [{"speaker": "U", "text": "hi"}],
            "ground_truth": None,
        },
        {"conversation_id": "c", "status": "failed"},
    ]
    (run / "records.jsonl").write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in rows) + b"\xff\xfe\n")
    (dialogues,) = load_systems([run]).values()
    assert [(d.id, d.utterances, d.human) for d in dialogues] == [("a", [], 0), ("b", [("U", "hi")], 1)]
    assert (
        dialogues_from_eval([{"dialogue_id": "1", "memory": {"q": 5}, "references": "gold", "response": 7}], "x") == []
    )


def test_judge_command_end_to_end(tmp_path):
    sample = tmp_path / "sample"
    for name, reply in (
        ("llm_only", "Yes! Pools, saunas, spas, gyms, everything you could want."),
        ("paper", "No, the Ashley Hotel has no pool."),
    ):
        (sample / name).mkdir(parents=True)
        (sample / name / "records.jsonl").write_text(
            "".join(json.dumps(_eval_record(i, reply)) + "\n" for i in range(2))
        )
    args = [
        "judge",
        str(sample),
        "llm=fake",
        f"llm._target_={__name__}.JudgeLLM",
        "llm_cache.enabled=false",
        "judge.progress=false",
        "judge.human=true",
        "elo.rounds=50",
        f"judge.out={tmp_path / 'out'}",
        "judge.known=['paper>llm_only']",
    ]
    assert main(args) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["systems"] == ["llm_only", "human", "paper"]
    assert results["arena"]["games"] == 12  # 3 pairs x 2 turns x 2 orders
    assert results["validity"]["arena"]["position"]["flip_rate"] == 1.0  # the scripted judge blames position 1
    assert results["wikichat"]["paper"]["relevant"]["mean"] == 4 and results["unieval"]["human"]["pass@all"] == 1.0
    assert results["gteval"]["paper"]["judged"] == 4 and results["gteval"]["human"]["judged"] == 0  # no truth
    md = (tmp_path / "out" / "results.md").read_text()
    assert "Bootstrap Elo" in md and "verdict flips" in md and "temporally correct" in md
    known = {(k["judge"], k["better"], k["worse"]): k for k in results["known"]}
    assert set(known) == {
        (j, better, worse)
        for j in ("arena", "gteval", "unieval", "wikichat", "checks")
        for better, worse in (("human", "llm_only"), ("human", "paper"), ("paper", "llm_only"))
    }
    assert known[("gteval", "paper", "llm_only")]["compared"] == 2  # each against the ground truth, then compared
    assert results["checks"]["games"] == 12 and results["cost"]["checks"]["llm_calls"] == 0
    assert known[("checks", "paper", "llm_only")]["ties"] == 2  # neither reply repeats or dodges
    assert known[("arena", "human", "paper")] | {"low": None, "high": None} == {
        "judge": "arena",
        "better": "human",
        "worse": "paper",
        "compared": 2,
        "wins": 0,
        "ties": 2,
        "losses": 0,
        "agreement": None,
        "low": None,
        "high": None,
        "reading": "all ties",
    }  # a position-biased judge: ties
    assert known[("wikichat", "human", "paper")]["ties"] == 2  # the scripted judge gives everyone the same scores
    assert "| arena | human | paper | 2 | 0 | 2 | 0 | n/a (n/a to n/a) | all ties |" in md
    assert known[("gteval", "human", "paper")]["reading"] == "no comparison"  # the human replies have no truth
    assert results["validity"]["wikichat"]["copied"] == {"answers": 6, "copied": 0, "share": 0.0}  # 3 systems x 2
    assert "| wikichat | n/a | n/a | n/a | n/a (0, 1) | 0.0 (0 of 6) |" in md
    assert (tmp_path / "out" / "elo.png").stat().st_size > 1000
    judgments = (tmp_path / "out" / "judgments.jsonl").read_text()
    assert len(judgments.splitlines()) == 12 + 8 + 6 + 6 + 12  # Arena, GTEval (2 systems x 2 turns x 2 orders), ...
    assert main(args) == 0  # resumed: nothing asked again; the rule checks (no LLM) are judged anew, same verdicts

    def kept(text):
        rows = [json.loads(line) for line in text.splitlines()]
        return [{**r, "seconds": None} if r["judge"] == "checks" else r for r in rows]

    assert kept((tmp_path / "out" / "judgments.jsonl").read_text()) == kept(judgments)
    assert "Judge model: `" in (tmp_path / "out" / "results.md").read_text()
    assert main([*args, "judge.judges=[checks]"]) == 0  # no LLM judge ran: the report names no judge model
    assert "Judge model" not in (tmp_path / "out" / "results.md").read_text()
    assert json.loads((tmp_path / "out" / "results.json").read_text())["judge_model"] == ""
