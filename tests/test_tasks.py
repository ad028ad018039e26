"""The one turn model, the one seeded sample, and the eval tasks that load turns and score responses."""

import random

import pytest

from augmenter.errors import ConfigError
from augmenter.eval.tasks import GroundedDialogueTask, ShortAnswerTask, build_task, task_kind
from augmenter.memory import Snippet, WorkingMemory
from augmenter.tasks.base import Turn, seeded_sample
from conftest import DATA


def test_seeded_sample_keeps_the_original_order_and_is_reproducible():
    items = list(range(100, 200))
    a, b = seeded_sample(items, 10, seed=3), seeded_sample(items, 10, seed=3)
    assert a == b == sorted(a) and len(set(a)) == 10 and set(a) <= set(items)
    assert seeded_sample(items, 10, seed=4) != a
    # the same selection the loaders drew before they shared this helper (sample, then back in file order)
    assert a == sorted(random.Random(3).sample(items, 10))
    assert seeded_sample(items, None, 0) == items and seeded_sample(items, 500, 0) == items
    with pytest.raises(ValueError):
        seeded_sample(items, -1, 0)


@pytest.mark.parametrize("dataset", ["dstc11", "dstc7", "ottqa"])
def test_every_data_set_loads_turns_in_file_order(dataset, dstc11_kb):
    task = build_task(dataset, DATA, "test" if dataset == "dstc7" else "dev", dstc11_kb)
    every = task.turns(None, 0)
    some = task.turns(12, 5)
    assert all(isinstance(t, Turn) and t.id and t.q and t.references for t in some)
    position = {t.id: i for i, t in enumerate(every)}
    assert [position[t.id] for t in some] == sorted(position[t.id] for t in some) and len(some) == 12
    assert [t.id for t in task.turns(12, 5)] == [t.id for t in some]
    if dataset != "ottqa":
        assert all(t.gold for t in some)  # gold knowledge resolved


def _memory(response: str, evidence: list[Snippet]) -> WorkingMemory:
    mem = WorkingMemory(q="q")
    mem.e = evidence
    mem.response = response
    return mem


def test_grounded_dialogue_scores_kf1_and_the_gold_knowledge_found():
    gold = [Snippet(id="a", text="The hotel has free parking for guests."), Snippet(id="b", text="Pets are allowed.")]
    turn = Turn("7", "Is there parking?", references=["Yes, parking is free."], gold=gold)
    task = GroundedDialogueTask("dstc11", lambda limit, seed: [turn])
    score = task.score(turn, _memory("Yes, the hotel has free parking.", gold[:1]))
    assert task.score_metric == "KF1" and score.metrics["KF1"] > 40
    assert score.evidence_recall == 0.5
    assert task.score(turn, _memory("Pets are allowed.", [])).metrics["KF1"] < score.metrics["KF1"]


def test_short_answer_scores_answer_f1_and_whether_the_answer_is_in_the_top_5_evidence():
    turn = Turn("q1", "Who wrote it?", references=["Jane Austen"])
    task = ShortAnswerTask("ottqa", lambda limit, seed: [turn])
    evidence = [Snippet(id=str(i), text="nothing") for i in range(5)] + [Snippet(id="x", text="by Jane Austen")]
    score = task.score(turn, _memory("It was Jane Austen.", evidence))
    assert task.score_metric == "F1" and score.metrics["R"] == 100.0 and 0 < score.metrics["P"] < 100
    assert score.evidence_recall == 0.0  # the answer is only in the 6th snippet
    assert task.score(turn, _memory("Austen", evidence[-1:])).evidence_recall == 1.0


def test_an_unknown_data_set_is_a_config_error():
    with pytest.raises(ConfigError, match="eval.dataset"):
        task_kind("squad")
    with pytest.raises(ConfigError, match="knowledge base"):
        build_task("dstc11", DATA, "dev", None)
