"""Elo ratings from pairwise games, and BotChat's Bootstrap Elo (Duan et al. 2023, appendix A).

A game is (player i, player j, R): R = 1 when i wins, 0 when i loses, 0.5 for a tie. Vanilla Elo plays the games in
order from `initial` for everyone: E_i = 1 / (1 + 10^((S_j - S_i) / scale)), S_i += K (R - E_i), S_j += K (E_i - R).
Bootstrap Elo (BotChat): the games shuffled `rounds` times with seeded shuffles, vanilla Elo on each order, the
median per player. Its spread over the shuffles only shows how much the order matters; the interval reported
beside it resamples the games with replacement as well (Chatbot Arena's bootstrap), the sampling uncertainty.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import median

Game = tuple[str, str, float]


@dataclass(frozen=True)
class EloSettings:
    """BotChat's settings: initial 1000, scale 400, K 32, 1,000 shuffles; `seed` seeds the shuffles."""

    initial: float = 1000.0
    scale: float = 400.0
    k: float = 32.0
    rounds: int = 1000
    seed: int = 0

    def __post_init__(self):
        if self.scale <= 0 or self.k <= 0 or self.rounds < 1:
            raise ValueError(f"Elo needs scale > 0, K > 0 and rounds >= 1, got {self.scale}, {self.k}, {self.rounds}")


def _check(games: Sequence[Game]) -> None:
    for game in games:
        if len(game) != 3 or game[2] not in (0, 0.5, 1) or game[0] == game[1]:
            raise ValueError(f"a game is (player, other player, 1 | 0.5 | 0), got {game!r}")


def elo(games: Iterable[Game], settings: EloSettings = EloSettings(), players: Iterable[str] = ()) -> dict[str, float]:
    """Vanilla Elo after playing `games` in order; `players` who played no game keep `initial`."""
    games = list(games)
    _check(games)
    ratings = {p: settings.initial for p in players}
    for i, j, result in games:
        si, sj = ratings.setdefault(i, settings.initial), ratings.setdefault(j, settings.initial)
        expected = 1.0 / (1.0 + 10 ** ((sj - si) / settings.scale))
        ratings[i] = si + settings.k * (result - expected)
        ratings[j] = sj - settings.k * (result - expected)
    return ratings


def _percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of `values`, linear between order statistics."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass
class Rating:
    player: str
    elo: float  # BotChat's Bootstrap Elo: the median over shuffled orders
    low: float  # 2.5th percentile of the resampled Elo (95% interval)
    high: float  # 97.5th percentile
    games: int


def bootstrap_elo(
    games: Sequence[Game], settings: EloSettings = EloSettings(), players: Iterable[str] = (), confidence: float = 0.95
) -> list[Rating]:
    """Bootstrap Elo per player, best first: the median over `settings.rounds` seeded shuffles of the games
    (BotChat), with a `confidence` interval from as many rounds of games resampled with replacement."""
    games = list(games)
    _check(games)
    names = list(dict.fromkeys([*players, *(p for g in games for p in g[:2])]))
    shuffled: dict[str, list[float]] = {p: [] for p in names}
    resampled: dict[str, list[float]] = {p: [] for p in names}
    shuffles, draws = random.Random(settings.seed), random.Random(f"resample-{settings.seed}")
    for _ in range(settings.rounds):
        order = list(games)
        shuffles.shuffle(order)
        for p, r in elo(order, settings, names).items():
            shuffled[p].append(r)
        sample = [games[draws.randrange(len(games))] for _ in games] if games else []
        for p, r in elo(sample, settings, names).items():
            resampled[p].append(r)
    tail = (1.0 - confidence) / 2
    played = {p: sum(p in g[:2] for g in games) for p in names}
    ratings = [
        Rating(p, median(shuffled[p]), _percentile(resampled[p], tail), _percentile(resampled[p], 1 - tail), played[p])
        for p in names
    ]
    return sorted(ratings, key=lambda r: -r.elo)
