"""Skill ratings, seasons and their tiers (pure; the store keeps each person's rating:
tgcheat.store.stats).

The rating is Weng–Lin's Bayesian rating for games of many players (the Plackett–Luce model of
the ``openskill`` library): each person has a skill estimate ``mu`` and its uncertainty
``sigma``. People read one number, the conservative estimate ``mu - 3 sigma`` scaled to about
1000 (a newcomer) to 2000 (the best), with a tier name.

What is rated: a group's game between people, played to its end by at least
``MIN_RATED_PLAYERS`` people who each made a play (the walkover rule of the statistics, with a
higher floor). Games with computer players are not rated: a computer level's strength is fixed,
so one person could replay the weakest level for points, and the people of a group are the
field a rating is meant to rank. Farming is bounded three ways: throwaway accounts start at the
bottom (``mu - 3 sigma`` of a newcomer is the floor), so beating them is worth little, and
less each time (the model expects it); the same few friends converge on each other's level,
where a win moves little; and a person's rating moves in at most ``RATED_GAMES_PER_DAY`` games a
UTC day (the games still count in the statistics).

Seasons are calendar months (UTC) of the game's end, an explicit clock: the time the game ended
(``Session.ended_ms``). A person's first rated game of a new season widens their uncertainty
again (``soft_reset``): the estimate stays, the number shown drops, and a season's games bring
it back up; boards per season rank that.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

#: The model's prior: a newcomer's estimate and its uncertainty (the library's defaults).
MU = 25.0
SIGMA = MU / 3
#: The uncertainty a season's turn adds back (in quadrature), at most up to ``SIGMA``.
SEASON_SIGMA = SIGMA / 2
#: A game is rated only with at least this many people who made a play.
MIN_RATED_PLAYERS = 3
#: A person's rating moves in at most this many games a UTC day.
RATED_GAMES_PER_DAY = 30
#: The number shown: ``BASE + SCALE * (mu - 3 sigma)``, never below ``FLOOR``.
BASE = 1000
SCALE = 30
FLOOR = 0

_MODEL = PlackettLuce(mu=MU, sigma=SIGMA)


@dataclass(frozen=True, slots=True)
class Skill:
    """A person's rating as the store keeps it: the estimate, its uncertainty, and the season
    (``season_of``) of the last game that moved it."""

    mu: float = MU
    sigma: float = SIGMA
    season: int = 0

    @property
    def shown(self) -> int:
        return shown_rating(self.mu, self.sigma)

    def encode(self) -> str:
        return f"{self.mu:.4f} {self.sigma:.4f} {self.season}"

    @classmethod
    def decode(cls, raw: str | None) -> Skill:
        """A stored rating; a newcomer's for nothing stored (or something unreadable)."""
        try:
            mu, sigma, season = (raw or "").split()
            return cls(float(mu), float(sigma), int(season))
        except ValueError:
            return cls()


def shown_rating(mu: float, sigma: float) -> int:
    return max(FLOOR, round(BASE + SCALE * (mu - 3 * sigma)))


NEWCOMER = Skill().shown

#: The tiers, from the number shown up: (the least rating, the tier's key). Their names are
#: the views' (tgcheat.bot.views.profile.tier_name).
TIERS: tuple[tuple[int, str], ...] = (
    (0, "bronze"),
    (1200, "silver"),
    (1400, "gold"),
    (1600, "platinum"),
    (1800, "diamond"),
)


def tier_of(shown: int) -> str:
    name = TIERS[0][1]
    for least, key in TIERS:
        if shown >= least:
            name = key
    return name


def season_of(ms: int) -> int:
    """The season of a moment (Unix ms): its UTC year and month as one number, 202612."""
    moment = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
    return moment.year * 100 + moment.month


def previous_season(season: int) -> int:
    year, month = divmod(season, 100)
    return season - 1 if month > 1 else (year - 1) * 100 + 12


def day_of(ms: int) -> int:
    """The UTC day of a moment (days since 1970): the daily bound on rated games counts in it."""
    return ms // 86_400_000


def soft_reset(skill: Skill, season: int) -> Skill:
    """The rating a person starts ``season`` with: unchanged within a season; at a new one, the
    estimate kept and its uncertainty widened (at most back to a newcomer's)."""
    if skill.season == season or skill.season == 0:
        return Skill(skill.mu, skill.sigma, season)
    sigma = min(SIGMA, math.sqrt(skill.sigma**2 + SEASON_SIGMA**2))
    return Skill(skill.mu, sigma, season)


def rated(skills: Sequence[Skill], places: Sequence[int], season: int) -> list[Skill]:
    """Each player's rating after a game (``places``: 1 is best, equal places share a rank),
    from their ratings before it (each soft-reset into ``season`` first)."""
    before = [soft_reset(skill, season) for skill in skills]
    teams = [[_MODEL.rating(mu=skill.mu, sigma=skill.sigma)] for skill in before]
    after = _MODEL.rate(teams, ranks=[float(place) for place in places])
    return [Skill(team[0].mu, team[0].sigma, season) for team in after]
