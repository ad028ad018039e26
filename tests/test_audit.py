"""The labelled claim set's machinery: sheets blind to the system, labels read back strictly, claims matched
between labellers, Cohen's kappa, settling by a third labeller, folds that keep each dialogue whole."""

from __future__ import annotations

import json

import pytest

from augmenter.audit import (
    AnswerLabel,
    ClaimLabel,
    align_claims,
    build_items,
    cohen_kappa,
    dialogue_folds,
    dialogue_key,
    read_labels,
    settle,
    write_sheets,
)
from augmenter.audit.labels import agreement, disagree
from augmenter.errors import InputError
from augmenter.memory import Utterance


def test_cohen_kappa_against_a_hand_computed_value():
    # 10 items: observed agreement 0.7; expected 0.5*0.6 + 0.5*0.4 = 0.5; kappa = 0.2 / 0.5 = 0.4
    a = ["S"] * 5 + ["U"] * 5
    b = ["S", "S", "S", "S", "U", "U", "U", "U", "S", "S"]
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(a, a) == pytest.approx(1.0)
    assert cohen_kappa([], []) is None
    assert cohen_kappa(["S", "S"], ["S", "S"]) == 1.0  # one label throughout, agreeing


def test_folds_keep_every_dialogue_in_one_fold_and_are_balanced():
    keys = [f"d{i % 37}" for i in range(300)]
    folds = dialogue_folds(keys, 5, seed=3)
    by_dialogue: dict[str, set[int]] = {}
    for key, fold in zip(keys, folds):
        by_dialogue.setdefault(key, set()).add(fold)
    assert all(len(f) == 1 for f in by_dialogue.values())
    sizes = [folds.count(f) for f in range(5)]
    assert max(sizes) - min(sizes) <= 9  # at most one dialogue's worth apart
    assert folds == dialogue_folds(keys, 5, seed=3) and folds != dialogue_folds(keys, 5, seed=4)
    with pytest.raises(ValueError):
        dialogue_folds(keys, 1)


def test_dialogue_key_is_the_opening_utterance():
    history = [Utterance(speaker="U", text="I need a Hotel, in the north!"), Utterance(speaker="S", text="OK.")]
    assert dialogue_key(history, "Is it quiet?") == "i need a hotel in the north"
    assert dialogue_key([], "Is it quiet?") == "is it quiet"
    assert dialogue_key([{"speaker": "U", "text": "Hi"}]) == "hi"


def _records(path, answers: dict[str, str]):
    rows = []
    for did, text in answers.items():
        rows.append(
            {
                "dialogue_id": did,
                "status": "ok",
                "response": text,
                "gold_ids": ["hotel:1:faq:2"],
                "references": [f"gold {did}"],
                "gold_knowledge": [],
                "metrics": {"kf1": 0.1},
                "cost": {},
                "memory": {
                    "q": f"question {did}?",
                    "h_q": [{"speaker": "U", "text": f"open {did}"}],
                    "entities": [{"domain": "hotel", "entity_id": 2, "name": "X"}],
                },
            }
        )
    rows.append({"dialogue_id": "9", "status": "failed", "error": "x", "response": ""})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_sheets_hide_the_systems_and_show_identical_answers_once(tmp_path, demo_kb):
    runs = {
        "alpha": _records(tmp_path / "a.jsonl", {"1": "Same answer.", "2": "Alpha says."}),
        "beta": _records(tmp_path / "b.jsonl", {"1": "Same  answer.", "2": "Beta says.", "3": "Only beta."}),
    }
    items = build_items(runs, seed=0)
    assert [i.dialogue_id for i in items] == ["1", "2"]  # answered by every run (turn 3 by beta only, 9 failed)
    assert [a.systems for a in items[0].answers] == [["alpha", "beta"]]  # whitespace-normalised duplicates merged
    assert sorted(a.text for a in items[1].answers) == ["Alpha says.", "Beta says."]
    assert items[1].entities == [["hotel", 1], ["hotel", 2]]  # gold entity first, then the linked one
    sheets = write_sheets(items, demo_kb, tmp_path / "out", per_sheet=1)
    text = "".join(p.read_text() for p in sheets)
    assert len(sheets) == 2 and "alpha" not in text and "beta" not in text
    assert "R1: Same answer." in text and "U: question 1?" in text and "Reviews:" in text
    key = json.loads((tmp_path / "out" / "key.json").read_text())
    assert key["1"] == {"R1": ["alpha", "beta"]} and sorted(map(tuple, key["2"].values())) == [("alpha",), ("beta",)]
    public = (tmp_path / "out" / "items.jsonl").read_text()
    assert "alpha" not in public and "systems" not in public
    with pytest.raises(InputError, match="at least two runs"):
        build_items({"alpha": runs["alpha"]})
    one = build_items(runs, seed=0, limit=1)  # a seeded sample of the common turns, the same every time
    assert len(one) == 1 and one[0].dialogue_id in ("1", "2") and one == build_items(runs, seed=0, limit=1)


def _label_line(item, rid, *labels, flags=()):
    return (
        json.dumps(
            {
                "item": item,
                "response": rid,
                "flags": list(flags),
                "claims": [{"text": t, "label": lab, "why": ""} for t, lab in labels],
            }
        )
        + "\n"
    )


def test_labels_are_read_strictly_with_file_and_line(tmp_path):
    path = tmp_path / "l.jsonl"
    path.write_text(_label_line(1, "R1", ("The pool is open.", "S")) + "\n" + _label_line(1, "R2", flags=["idk"]))
    labels = read_labels(path, expected=[(1, "R1"), (1, "R2")])
    assert labels[(1, "R1")].claims[0].label == "S" and not labels[(1, "R1")].flawed
    assert labels[(1, "R2")].flags == ["idk"] and labels[(1, "R2")].claims == []
    with pytest.raises(InputError, match=r"1 answer\(s\) not labelled \(2/R1\)"):
        read_labels(path, expected=[(1, "R1"), (1, "R2"), (2, "R1")])
    cases = [
        (_label_line(1, "X1"), "'response' must be R1"),
        (_label_line(1, "R1", ("a", "Q")), "label 'Q'"),
        (_label_line(1, "R1", flags=["rude"]), "'flags' must be"),
        ("[1, 2]\n", "not a JSON object|object"),
        (_label_line(1, "R1") * 2, "labelled twice"),
    ]
    for content, message in cases:
        path.write_text(content)
        with pytest.raises(InputError, match=rf"l.jsonl:\d+: .*({message})"):
            read_labels(path)


def test_claims_are_matched_and_disagreements_settled_by_the_third():
    a = AnswerLabel([ClaimLabel("The Lensfield Hotel has clean bathrooms", "U"), ClaimLabel("It has a bar", "S")])
    b = AnswerLabel([ClaimLabel("It has a bar.", "S"), ClaimLabel("Bathrooms at the Lensfield are clean", "S")])
    assert align_claims(a.claims, b.claims) == [(0, 1), (1, 0)]
    assert disagree(a, b) and not disagree(a, a)
    third = {(1, "R1"): AnswerLabel([ClaimLabel("The bathrooms are clean", "U")])}
    settled, waiting = settle({(1, "R1"): a, (2, "R1"): a}, {(1, "R1"): b, (2, "R1"): a}, third)
    assert settled[(1, "R1")] is third[(1, "R1")] and settled[(2, "R1")] is a and waiting == []
    settled, waiting = settle({(1, "R1"): a}, {(1, "R1"): b}, {})
    assert settled == {} and waiting == [(1, "R1")]
    agree = agreement({(1, "R1"): a, (2, "R1"): a}, {(1, "R1"): b, (2, "R1"): a})
    assert agree.answers == 2 and agree.disputed == 1 and agree.matched == 4
    # flawed: a, a against b, a -> (True, True) vs (False, True): observed 0.5, expected 0.5 -> kappa 0
    assert agree.flawed_kappa == pytest.approx(0.0)


def test_whether_an_answer_answers_how_natural_it_reads_and_the_ranks_are_read_strictly(tmp_path):
    from augmenter.audit.labels import read_ranks

    path = tmp_path / "labels.jsonl"
    path.write_text(
        json.dumps({"item": 1, "response": "R1", "claims": [], "flags": [], "answers": "partly", "natural": 2}) + "\n"
    )
    label = read_labels(path)[(1, "R1")]
    assert (label.answers, label.natural) == ("partly", 2) and label.to_json()["answers"] == "partly"
    path.write_text(json.dumps({"item": 1, "response": "R1", "claims": [], "answers": "maybe"}) + "\n")
    with pytest.raises(InputError, match="'answers' must be one of yes, partly, no"):
        read_labels(path)
    yes, no = AnswerLabel([], [], "yes", 3), AnswerLabel([], [], "no", 3)
    assert disagree(yes, no) == ["answers yes and no"] and disagree(yes, AnswerLabel([], [])) == []
    ranks = tmp_path / "ranks.jsonl"
    ranks.write_text(json.dumps({"item": 4, "rank": ["R2", "R1 = R3"]}) + "\n")
    assert read_ranks(ranks) == {4: [["R2"], ["R1", "R3"]]}
    ranks.write_text(json.dumps({"item": 4, "rank": ["best"]}) + "\n")
    with pytest.raises(InputError, match="ranks name answers"):
        read_ranks(ranks)
