import pytest

from augmenter.llm import FakeLLM, MeteredLLM
from augmenter.memory import Snippet, WorkingMemory
from augmenter.prompts import PromptEngine
from augmenter.utilities import (
    PAPER_FEEDBACK,
    KF1Utility,
    SelfCritiqueUtility,
    f1_score,
    knowledge_f1,
    normalize_answer,
)


def test_normalize_answer_follows_parlai():
    assert normalize_answer("The Cat's  hat, a RED one!") == "cat s hat red one"


def test_knowledge_f1_hand_computed():
    # response tokens: yes parking is free (4); knowledge: parking is free on site (5); common: parking is free (3)
    # P = 3/4, R = 3/5, F1 = 2PR/(P+R) = 0.9/1.35 = 2/3
    assert knowledge_f1("Yes, parking is free.", ["Parking is free", "on site."]) == pytest.approx(2 / 3)
    assert knowledge_f1("Nothing shared here", ["parking"]) == 0.0
    assert knowledge_f1("", ["parking"]) == 0.0


def test_f1_counts_repeated_tokens_once_per_occurrence():
    # pred: free free (2); gold: free (1); common 1 -> P 0.5, R 1 -> F1 2/3
    assert f1_score("free free", ["free"]) == pytest.approx(2 / 3)
    assert f1_score("free", ["nothing", "free"]) == 1.0  # best of several golds


def _mem():
    return WorkingMemory(q="Is parking free?", e=[Snippet(id="1", text="Parking is free for all guests.")])


def test_kf1_utility_template_feedback_below_threshold():
    utility = KF1Utility(threshold=0.5)
    low = utility(_mem(), "I don't know.")
    assert low.score == 0.0 and low.feedback == PAPER_FEEDBACK and not low.passed
    high = utility(_mem(), "Parking is free for all guests.")
    assert high.score == pytest.approx(1.0) and high.passed


def test_kf1_utility_passes_without_evidence():
    result = KF1Utility()(WorkingMemory(q="hi"), "Hello!")
    assert result.passed and result.score == 0.0


def test_kf1_threshold_is_validated():
    with pytest.raises(ValueError):
        KF1Utility(threshold=3)


def test_self_critique_asks_the_llm_only_when_failing():
    fake = FakeLLM(responses=["Mention that parking is free for all guests."])
    utility = SelfCritiqueUtility(MeteredLLM(fake), PromptEngine(response="customer_service"), threshold=0.5)
    assert utility(_mem(), "Parking is free for all guests.").passed
    assert fake.calls == []
    result = utility(_mem(), "I am not sure.")
    assert result.feedback == "Mention that parking is free for all guests."
    assert "I am not sure." in fake.calls[0][-1]["content"]
    assert "Parking is free for all guests." in fake.calls[0][-1]["content"]
