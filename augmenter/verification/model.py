"""A stored logistic-regression verifier (standardised features -> p(supported)) and the packaged ones.

The JSON file holds the feature names, the scaler's mean and scale, the coefficients, the intercept, the decision
threshold chosen on the training data and the command that fitted it (written by
`augmenter.eval.factcheck.fit_and_save`). Using one needs only numpy."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from augmenter.errors import ConfigError


@dataclass
class StoredModel:
    """p(factual) = sigmoid(coef . (x - mean) / scale + intercept); factual iff p >= threshold."""

    feature_names: list[str]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    threshold: float
    meta: dict = field(default_factory=dict)

    @classmethod
    def from_json(cls, text: str, where: str) -> StoredModel:
        try:
            d = json.loads(text)
            names = [str(f) for f in d["feature_names"]]
            mean, scale, coef = (np.asarray(d[k], dtype=float) for k in ("mean", "scale", "coef"))
            model = cls(
                names,
                mean,
                scale,
                coef,
                float(d["intercept"]),
                float(d["threshold"]),
                {k: v for k, v in d.items() if k not in ("feature_names", "mean", "scale", "coef", "intercept")},
            )
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: not a stored verifier model ({type(exc).__name__}: {exc})") from None
        if not (len(names) == len(mean) == len(scale) == len(coef)):
            raise ConfigError(f"{where}: feature_names, mean, scale and coef differ in length")
        return model

    @classmethod
    def load(cls, name_or_path: str | Path) -> StoredModel:
        """A packaged model by name ("fast", "combined") or a JSON file by path."""
        path = Path(name_or_path)
        if path.suffix == ".json":
            if not path.exists():
                raise ConfigError(f"verifier model file not found: {path}")
            return cls.from_json(path.read_text(encoding="utf-8"), str(path))
        packaged = resources.files("augmenter.verification") / "models" / f"{name_or_path}.json"
        if not packaged.is_file():
            raise ConfigError(
                f"no packaged verifier model {str(name_or_path)!r} (augmenter/verification/models/); "
                "fit one with bench/fit_verifier.py or give a path"
            )
        return cls.from_json(packaged.read_text(encoding="utf-8"), f"verifier model {name_or_path}")

    def _matrix(self, x) -> tuple[np.ndarray, bool]:
        if isinstance(x, Mapping):
            missing = [f for f in self.feature_names if f not in x]
            if missing:
                raise ConfigError(f"features missing for the stored verifier: {', '.join(missing)}")
            return np.array([[float(x[f]) for f in self.feature_names]]), True
        if isinstance(x, (list, tuple)) and x and isinstance(x[0], Mapping):
            return np.vstack([self._matrix(d)[0] for d in x]), False
        a = np.asarray(x, dtype=float)
        single = a.ndim == 1
        a = np.atleast_2d(a)
        if a.ndim != 2 or a.shape[1] != len(self.feature_names):
            raise ConfigError(
                f"expected {len(self.feature_names)} features ({', '.join(self.feature_names)}), "
                f"got shape {np.shape(x)}"
            )
        return a, single

    def predict_proba(self, x) -> float | np.ndarray:
        """p(factual) for one item (a dict of features or a 1-D array: a float) or many (a 2-D array or a list of
        dicts: an array)."""
        a, single = self._matrix(x)
        z = ((a - self.mean) / np.where(self.scale == 0, 1.0, self.scale)) @ self.coef + self.intercept
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
        return float(p[0]) if single else p

    def predict(self, x) -> bool | np.ndarray:
        """factual iff p(factual) >= the stored threshold."""
        p = self.predict_proba(x)
        return bool(p >= self.threshold) if isinstance(p, float) else p >= self.threshold
