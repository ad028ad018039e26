"""Cross-validated scoring of claim verifiers (p(factual) per claim) on labelled claims.

`cross_validate` fits a standardised, class-balanced logistic regression on verifier features; `threshold_cv`
takes a ready-made score. In both, the decision threshold on p(factual) is chosen on the training folds only
(maximising balanced accuracy) and applied to the held-out fold, and the folds keep each group (a bio, a
response, a HaluEval row) whole. `fit_and_save` stores a model as a small JSON; `load_model` reads it back
with numpy only. scikit-learn (the `eval` extra) is needed for fitting and for `metrics`, not for using a
stored model.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from augmenter.errors import ConfigError, InputError
from augmenter.storage import write_atomic
from augmenter.verification.model import StoredModel


@dataclass
class CVResult:
    """Out-of-fold results: per item p(factual), prediction (p >= its fold's threshold) and held-out fold;
    per fold the threshold and, for `cross_validate`, the coefficients (on standardised features)."""

    p_factual: np.ndarray
    predicted: np.ndarray
    fold: np.ndarray
    thresholds: list[float] = field(default_factory=list)
    coefs: list[np.ndarray] = field(default_factory=list)
    intercepts: list[float] = field(default_factory=list)

    def metrics(self, factual) -> dict:
        return metrics(factual, self.p_factual, self.predicted)


# --------------------------------------------------------------------------------------------- helpers


def _labels(factual, n: int | None = None) -> np.ndarray:
    y = np.asarray(factual).astype(bool).ravel()
    if n is not None and len(y) != n:
        raise InputError(f"{len(y)} labels for {n} items")
    return y


def choose_threshold(score: np.ndarray, factual) -> float:
    """The threshold t on `score` (predict factual iff score >= t) that maximises balanced accuracy on the
    given items, placed midway between neighbouring scores; 0.5 when only one class is present."""
    s = np.asarray(score, dtype=float).ravel()
    y = _labels(factual, len(s))
    n_f, n_nf = int(y.sum()), int((~y).sum())
    if n_f == 0 or n_nf == 0:
        return 0.5
    u, inv = np.unique(s, return_inverse=True)
    f_at = np.bincount(inv, weights=y, minlength=len(u))
    nf_at = np.bincount(inv, weights=~y, minlength=len(u))
    # candidate k: threshold at u[k] (k = len(u): above every score, all predicted non-factual)
    f_at_or_above = np.concatenate([np.cumsum(f_at[::-1])[::-1], [0.0]])
    nf_below = np.concatenate([[0.0], np.cumsum(nf_at)])
    ba = (f_at_or_above / n_f + nf_below / n_nf) / 2
    k = int(np.argmax(ba))
    if k == 0:
        return float(u[0])
    if k == len(u):
        return float(np.nextafter(u[-1], np.inf))
    return float((u[k - 1] + u[k]) / 2)


def _splits(groups: Sequence[str], y: np.ndarray, folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    from sklearn.model_selection import StratifiedGroupKFold  # optional and slow to import: augmenter[eval]

    g = np.asarray([str(x) for x in groups])
    if len(g) != len(y):
        raise InputError(f"{len(g)} groups for {len(y)} items")
    n_groups = len(np.unique(g))
    if folds < 2 or n_groups < folds:
        raise InputError(f"cannot make {folds} folds from {n_groups} groups")
    cv = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=seed)
    return list(cv.split(np.zeros(len(y)), y, g))


def fit_pipeline(X: np.ndarray, factual):
    """StandardScaler + class-balanced LogisticRegression fitted on (X, factual)."""
    from sklearn.linear_model import LogisticRegression  # optional and slow to import: augmenter[eval]
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    X = _features(X)
    y = _labels(factual, len(X))
    if y.all() or not y.any():
        raise InputError("both factual and non-factual items are needed to fit a verifier")
    pipe = Pipeline(
        [("scale", StandardScaler()), ("logreg", LogisticRegression(class_weight="balanced", max_iter=1000))]
    )
    return pipe.fit(X, y)


def _features(X) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise InputError(f"features must be a 2-D array (items x features), got shape {X.shape}")
    if not np.isfinite(X).all():
        raise InputError("features contain NaN or infinity")
    return X


def _p_factual(pipe, X: np.ndarray) -> np.ndarray:
    classes = list(pipe.classes_)
    return pipe.predict_proba(X)[:, classes.index(True)]


# ------------------------------------------------------------------------------------------ cross-validation


def cross_validate(X: np.ndarray, factual, groups: Sequence[str], folds: int = 5, seed: int = 0) -> CVResult:
    """Group-wise (stratified, seeded) `folds`-fold CV of a standardised logistic regression on `X`; on each
    training fold, fit the model and choose the threshold on p(factual); score the held-out fold with both."""
    X = _features(X)
    y = _labels(factual, len(X))
    p = np.full(len(y), np.nan)
    pred = np.zeros(len(y), dtype=bool)
    fold = np.full(len(y), -1)
    res = CVResult(p, pred, fold)
    for k, (train, test) in enumerate(_splits(groups, y, folds, seed)):
        pipe = fit_pipeline(X[train], y[train])
        t = choose_threshold(_p_factual(pipe, X[train]), y[train])
        p[test] = _p_factual(pipe, X[test])
        pred[test] = p[test] >= t
        fold[test] = k
        lr = pipe.named_steps["logreg"]
        res.thresholds.append(t)
        res.coefs.append(lr.coef_.ravel().copy())
        res.intercepts.append(float(lr.intercept_[0]))
    return res


def threshold_cv(score: np.ndarray, factual, groups: Sequence[str], folds: int = 5, seed: int = 0) -> CVResult:
    """Like `cross_validate` for a ready-made score (higher = more likely factual): no fitting, only the
    threshold is chosen on each training fold. `p_factual` is the score itself."""
    s = np.asarray(score, dtype=float).ravel()
    y = _labels(factual, len(s))
    pred = np.zeros(len(y), dtype=bool)
    fold = np.full(len(y), -1)
    res = CVResult(s.copy(), pred, fold)
    for k, (train, test) in enumerate(_splits(groups, y, folds, seed)):
        t = choose_threshold(s[train], y[train])
        pred[test] = s[test] >= t
        fold[test] = k
        res.thresholds.append(t)
    return res


# ------------------------------------------------------------------------------------------------ metrics


def metrics(factual, p_factual, predicted) -> dict:
    """Balanced accuracy, AUC-PR (average precision) with non-factual as the positive class (score 1 - p) and
    with factual as the positive class (score p), the non-factual base rate (all in %), and n. An AUC-PR is
    NaN when its positive class is absent."""
    from sklearn.metrics import average_precision_score  # optional and slow to import: augmenter[eval]

    y = _labels(factual)
    p = np.asarray(p_factual, dtype=float).ravel()
    pred = _labels(predicted, len(y))
    if len(p) != len(y):
        raise InputError(f"{len(p)} scores for {len(y)} labels")
    recalls = [np.mean(pred[y == c] == c) for c in (True, False) if (y == c).any()]
    return {
        "balanced_accuracy": 100 * float(np.mean(recalls)) if recalls else float("nan"),
        "auc_pr_nonfactual": 100 * float(average_precision_score(~y, 1 - p)) if (~y).any() else float("nan"),
        "auc_pr_factual": 100 * float(average_precision_score(y, p)) if y.any() else float("nan"),
        "nonfactual_rate": 100 * float(np.mean(~y)) if len(y) else float("nan"),
        "n": int(len(y)),
    }


def pairwise_accuracy(p_right, p_hallucinated) -> float:
    """Share (in %) of HaluEval samples where the right answer gets a higher p(factual) than the hallucinated
    one; ties count half."""
    r = np.asarray(p_right, dtype=float).ravel()
    h = np.asarray(p_hallucinated, dtype=float).ravel()
    if len(r) != len(h) or not len(r):
        raise InputError(f"pairwise_accuracy needs two equally long, non-empty arrays ({len(r)} vs {len(h)})")
    return 100 * float(np.mean((r > h) + 0.5 * (r == h)))


# ------------------------------------------------------------------------------------------ stored models


@dataclass
class Fitted:
    pipeline: Any  # the sklearn Pipeline
    threshold: float
    payload: dict  # what was written


def fit_and_save(
    X: np.ndarray, factual, feature_names: Sequence[str], path: str | Path, command: str, fitted_on: str | None = None
) -> Fitted:
    """Fit the verifier on all of (X, factual), choose its threshold on the same data, and write JSON with
    feature_names, scaler mean/scale, coef, intercept, threshold, n, command and fitted_on (default: the UTC
    time)."""
    X = _features(X)
    y = _labels(factual, len(X))
    names = [str(f) for f in feature_names]
    if len(names) != X.shape[1]:
        raise InputError(f"{len(names)} feature names for {X.shape[1]} features")
    pipe = fit_pipeline(X, y)
    t = choose_threshold(_p_factual(pipe, X), y)
    scaler, lr = pipe.named_steps["scale"], pipe.named_steps["logreg"]
    sign = 1.0 if list(lr.classes_).index(True) == 1 else -1.0
    payload = {
        "feature_names": names,
        "mean": scaler.mean_.tolist(),
        "scale": scaler.scale_.tolist(),
        "coef": (sign * lr.coef_.ravel()).tolist(),
        "intercept": sign * float(lr.intercept_[0]),
        "threshold": t,
        "n": int(len(y)),
        "n_nonfactual": int((~y).sum()),
        "command": command,
        "fitted_on": fitted_on or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(payload, indent=2) + "\n")
    return Fitted(pipe, t, payload)


def load_model(path: str | Path) -> StoredModel:
    """Read a verifier written by `fit_and_save` (numpy only)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"verifier model not found: {path}")
    try:
        return StoredModel.from_json(path.read_text(encoding="utf-8"), str(path))
    except (ConfigError, UnicodeDecodeError) as exc:
        raise InputError(str(exc)) from None
