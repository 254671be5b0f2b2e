"""What a player, or the clock, can do to a game."""

from __future__ import annotations

from dataclasses import dataclass

from tgcheat.engine.cards import Card, Rank


@dataclass(frozen=True, slots=True)
class Play:
    seat: int
    cards: tuple[Card, ...]
    #: The claimed rank: true or not. Must equal the required rank when one is required.
    rank: Rank


@dataclass(frozen=True, slots=True)
class Challenge:
    seat: int
    #: The number of the claim challenged (buttons carry it, so a stale press is refused).
    claim: int


@dataclass(frozen=True, slots=True)
class Accept:
    """Believe a final play ("I believe you")."""

    seat: int
    claim: int


@dataclass(frozen=True, slots=True)
class Timeout:
    """The clock: the awaited player(s) did not act in time.

    ``plays`` is the play count the deadline was set at, so a deadline that fires late, or
    twice, after the game moved on is refused.
    """

    plays: int
    phase_final: bool


@dataclass(frozen=True, slots=True)
class Leave:
    seat: int


@dataclass(frozen=True, slots=True)
class Stop:
    """The game is ended by its creator or an admin."""


Action = Play | Challenge | Accept | Timeout | Leave | Stop
