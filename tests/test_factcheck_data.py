"""Claim-verification data (WikiBio GPT-3, FELM, HaluEval QA in their published formats, from ../shared/data)
and the cross-validation / metrics harness of augmenter.eval.factcheck."""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest

from augmenter.errors import AugmenterError, InputError
from augmenter.eval.factcheck import (
    choose_threshold,
    cross_validate,
    fit_and_save,
    fit_pipeline,
    load_model,
    metrics,
    pairwise_accuracy,
    threshold_cv,
)
from augmenter.tasks.factcheck import (
    ClaimSet,
    claim_set,
    halueval_rest,
    load_felm,
    load_halueval_qa,
    load_wikibio,
)
from conftest import DATA


def _need(path):
    if not path.exists():
        pytest.fail(f"data not found: {path} (set AUGMENTER_DATA)")
    return path


# ------------------------------------------------------------------------------------------- real data


def test_wikibio_counts():
    items = load_wikibio(_need(DATA / "wikibio-gpt3-hallucination"))
    assert len(items) == 1908
    assert sum(not it.factual for it in items) == 1392
    assert len({it.group for it in items}) == 238
    assert len({it.id for it in items}) == 1908
    first = items[0]
    assert first.id == "wikibio:0:0" and first.dataset == "wikibio"
    assert first.claim.startswith("Michael Alan Weiner") and first.factual
    assert len(first.evidence) == 1 and "Michael Savage" in first.evidence[0]


def test_felm_wk_counts():
    items = load_felm(_need(DATA / "felm"), "wk")
    assert len(items) == 532
    assert sum(not it.factual for it in items) == 147
    assert len({it.group for it in items}) == 184
    assert len({it.id for it in items}) == 532
    assert all(it.context for it in items)
    # 28 wk responses (98 segments) come without reference contents; they are kept with evidence [].
    assert sum(not it.evidence for it in items) == 98
    assert all(isinstance(e, str) and e for it in items for e in it.evidence)
    nuclear = [it for it in items if it.claim.startswith("The United States has the highest number of nuclear")]
    assert len(nuclear) == 1 and not nuclear[0].factual and nuclear[0].evidence
    with pytest.raises(InputError, match="domain"):
        load_felm(DATA / "felm", "nope")


def test_halueval_sample_and_rest_are_disjoint():
    root = _need(DATA / "halueval")
    items = load_halueval_qa(root, n=2000, seed=0)
    assert len(items) == 4000 and sum(it.factual for it in items) == 2000
    by_group = defaultdict(list)
    for it in items:
        by_group[it.group].append(it)
    assert len(by_group) == 2000
    assert all(sorted(it.factual for it in g) == [False, True] for g in by_group.values())
    assert all(it.evidence and it.context for it in items)
    assert [it.id for it in load_halueval_qa(root, n=2000, seed=0)[:6]] == [it.id for it in items[:6]]
    assert {it.group for it in load_halueval_qa(root, n=2000, seed=1)} != set(by_group)

    rest = halueval_rest(root, n=2000, seed=0)
    assert len(rest) == 2 * 8000
    assert not {it.group for it in rest} & set(by_group)
    limited = halueval_rest(root, n=2000, seed=0, limit=100)
    assert len(limited) == 200 and [it.id for it in limited] == [it.id for it in rest[:200]]


def test_every_claim_set_samples_whole_groups_with_the_one_sampling_helper(dstc11_kb):
    """The fact-check task behind one protocol: a seeded sample of whole groups, reproducible, in file order."""
    from augmenter.tasks.dstc11_claims import DSTC11Claims

    sets = [claim_set(name, DATA) for name in ("wikibio", "felm", "halueval")]
    sets.append(DSTC11Claims(DATA / "dstc11-track5", dstc11_kb))
    for cs in sets:
        assert isinstance(cs, ClaimSet)
        sample = cs.claims(limit=5, seed=3)
        groups = list(dict.fromkeys(it.group for it in sample))
        assert len(groups) == 5, cs.name
        assert [it.id for it in cs.claims(limit=5, seed=3)] == [it.id for it in sample]
        assert {it.group for it in cs.claims(limit=5, seed=4)} != set(groups)
    everything = claim_set("wikibio", DATA).claims()
    assert [it.id for it in everything] == [it.id for it in load_wikibio(DATA / "wikibio-gpt3-hallucination")]
    # HaluEval's 2,000-row sample is the one the verifier benchmarks were measured on
    assert [it.id for it in claim_set("halueval", DATA).claims(limit=2000, seed=0)] == [
        it.id for it in load_halueval_qa(DATA / "halueval", n=2000, seed=0)
    ]
    with pytest.raises(InputError, match="unknown claim set"):
        claim_set("fever", DATA)


def test_loaders_report_missing_and_malformed_files(tmp_path):
    with pytest.raises(InputError, match=str(tmp_path)):
        load_wikibio(tmp_path)
    with pytest.raises(InputError, match="all.jsonl"):
        load_felm(tmp_path)
    (tmp_path / "dataset_halueval_qa.jsonl").write_text('{"knowledge": "k", "question": "q"}\n')
    with pytest.raises(InputError, match="right_answer"):
        load_halueval_qa(tmp_path, n=1)
    (tmp_path / "wikibio_gpt3_hallucination.jsonl").write_text("{not json\n")
    with pytest.raises(InputError, match="wikibio_gpt3_hallucination.jsonl:1"):
        load_wikibio(tmp_path)


# ------------------------------------------------------------------------------- CV on synthetic data


def _synthetic(n_groups=100, per_group=4, seed=0):
    rng = np.random.default_rng(seed)
    groups = [f"g{g}" for g in range(n_groups) for _ in range(per_group)]
    factual = rng.random(len(groups)) < 0.4
    return rng, groups, factual


def test_cv_learns_a_predictive_feature():
    rng, groups, factual = _synthetic()
    X = np.column_stack([factual + 0.3 * rng.standard_normal(len(factual)), rng.standard_normal(len(factual))])
    res = cross_validate(X, factual, groups, folds=5, seed=0)
    m = metrics(factual, res.p_factual, res.predicted)
    assert m["balanced_accuracy"] > 90 and m["auc_pr_nonfactual"] > 90
    assert len(res.thresholds) == len(res.coefs) == 5
    assert all(c[0] > 0 for c in res.coefs)  # the informative feature pushes towards factual
    ts = threshold_cv(X[:, 0], factual, groups, folds=5, seed=0)
    assert metrics(factual, ts.p_factual, ts.predicted)["balanced_accuracy"] > 90


def test_noise_stays_near_chance_out_of_fold():
    # Small held-out folds (10 items) make the leak visible: over 20 seeds, the honest out-of-fold balanced
    # accuracy of a noise score stayed <= 54, the leaky one (threshold tuned on the scored fold) >= 63.9.
    rng, groups, factual = _synthetic(n_groups=200, per_group=2, seed=1)
    noise = rng.standard_normal(len(factual))
    res = threshold_cv(noise, factual, groups, folds=40, seed=0)
    honest = metrics(factual, res.p_factual, res.predicted)["balanced_accuracy"]
    assert honest < 57
    leaky = np.zeros(len(factual), dtype=bool)
    for k in range(40):
        f = res.fold == k
        leaky[f] = noise[f] >= choose_threshold(noise[f], factual[f])
    assert metrics(factual, noise, leaky)["balanced_accuracy"] > 60

    # Likewise for the fitted model on 5 noise features (honest <= 53.3 over 10 seeds, leaky >= 63.3).
    X = rng.standard_normal((len(factual), 5))
    cv = cross_validate(X, factual, groups, folds=40, seed=0)
    assert metrics(factual, cv.p_factual, cv.predicted)["balanced_accuracy"] < 57


def test_groups_never_straddle_folds_and_thresholds_come_from_training_folds():
    rng, groups, factual = _synthetic(n_groups=60, per_group=5, seed=2)
    score = factual + rng.standard_normal(len(factual))
    for res in (
        threshold_cv(score, factual, groups, folds=5, seed=3),
        cross_validate(score[:, None], factual, groups, folds=5, seed=3),
    ):
        assert (res.fold >= 0).all() and set(res.fold) == set(range(5))
        folds_of = defaultdict(set)
        for g, k in zip(groups, res.fold):
            folds_of[g].add(int(k))
        assert all(len(ks) == 1 for ks in folds_of.values())
        assert not np.isnan(res.p_factual).any()
    ts = threshold_cv(score, factual, groups, folds=5, seed=3)
    for k in range(5):
        train = ts.fold != k
        assert ts.thresholds[k] == choose_threshold(score[train], factual[train])
        assert (ts.predicted[~train] == (score[~train] >= ts.thresholds[k])).all()
    cv = cross_validate(score[:, None], factual, groups, folds=5, seed=3)
    for k in range(5):
        train = cv.fold != k
        pipe = fit_pipeline(score[train, None], factual[train])
        p_train = pipe.predict_proba(score[train, None])[:, 1]
        assert cv.thresholds[k] == pytest.approx(choose_threshold(p_train, factual[train]))
        assert np.allclose(cv.p_factual[~train], pipe.predict_proba(score[~train, None])[:, 1])
    # seeded: same seed, same folds; another seed, other folds
    assert (threshold_cv(score, factual, groups, folds=5, seed=3).fold == ts.fold).all()
    assert (threshold_cv(score, factual, groups, folds=5, seed=4).fold != ts.fold).any()
    with pytest.raises(InputError, match="folds"):
        threshold_cv(score[:10], factual[:10], groups[:10], folds=5)


def test_saved_model_reproduces_the_pipeline(tmp_path):
    rng, groups, factual = _synthetic(seed=4)
    X = np.column_stack([factual * 2.0 + rng.standard_normal(len(factual)), 10 + 5 * rng.standard_normal(len(factual))])
    path = tmp_path / "models" / "verifier.json"
    fitted = fit_and_save(X, factual, ["nli", "overlap"], path, command="pytest", fitted_on="synthetic")
    stored = json.loads(path.read_text())
    assert stored["feature_names"] == ["nli", "overlap"] and stored["n"] == len(factual)
    assert stored["command"] == "pytest" and stored["fitted_on"] == "synthetic"

    model = load_model(path)
    expected = fitted.pipeline.predict_proba(X)[:, 1]
    assert np.allclose(model.predict_proba(X), expected, atol=1e-12)
    assert model.threshold == fitted.threshold == stored["threshold"]
    one = model.predict_proba({"nli": X[7, 0], "overlap": X[7, 1], "ignored": 3.0})
    assert isinstance(one, float) and one == pytest.approx(expected[7])
    assert model.predict_proba(X[7]) == pytest.approx(expected[7])
    assert (model.predict(X) == (expected >= fitted.threshold)).all()
    with pytest.raises(AugmenterError, match="overlap"):
        model.predict_proba({"nli": 1.0})
    path.write_text("{}")
    with pytest.raises(InputError, match="not a stored verifier model"):
        load_model(path)


def test_metrics_on_a_hand_computed_example():
    factual = np.array([True, True, True, False, False])
    p = np.array([0.9, 0.8, 0.3, 0.5, 0.2])
    m = metrics(factual, p, p >= 0.5)
    # recall factual 2/3, non-factual 1/2
    assert m["balanced_accuracy"] == pytest.approx(100 * (2 / 3 + 1 / 2) / 2)
    # non-factual by 1 - p: F(0.8) hit, T(0.7), F(0.5) hit at rank 3 -> (1 + 2/3) / 2
    assert m["auc_pr_nonfactual"] == pytest.approx(100 * (1 + 2 / 3) / 2)
    # factual by p: T, T, F, T(rank 4), F -> (1 + 1 + 3/4) / 3
    assert m["auc_pr_factual"] == pytest.approx(100 * (1 + 1 + 3 / 4) / 3)
    assert m["nonfactual_rate"] == pytest.approx(40) and m["n"] == 5

    assert pairwise_accuracy([0.9, 0.5, 0.2], [0.1, 0.5, 0.3]) == pytest.approx(50)
    assert choose_threshold([0.1, 0.4, 0.6, 0.9], [False, False, True, True]) == pytest.approx(0.5)
    assert choose_threshold([0.2, 0.2], [True, True]) == 0.5
