"""The types of settings that constructors take from the configs, each with its bounds declared once: the config
schema (`augmenter/config_schema.py`) reads them from the signatures (`typing.Annotated` with `annotated_types`)."""

from __future__ import annotations

from typing import Annotated

from annotated_types import Ge, Gt, Interval

Count = Annotated[int, Ge(0)]  # 0, 1, 2, ...
Positive = Annotated[int, Ge(1)]  # 1, 2, 3, ...
NonNegative = Annotated[float, Ge(0)]  # a number >= 0 (a weight, a delay in seconds)
Seconds = Annotated[float, Gt(0)]  # a timeout
Share = Annotated[float, Interval(ge=0, le=1)]  # a probability, a threshold on a score in [0, 1]
Cosine = Annotated[float, Interval(ge=-1, le=1)]  # a cosine similarity
