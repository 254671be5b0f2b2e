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
    #: When the press arrived (ms, any fixed origin). Only ``challenge_priority=clockwise``
    #: reads it: presses within ``challenge_grace_s`` of the first one are collected.
    now_ms: int = 0


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
    #: When the clock fired (ms): a call made for the player (``penalty=revolver``, when they
    #: must call) starts the trigger's pause from it.
    now_ms: int = 0


@dataclass(frozen=True, slots=True)
class ResolveChallenges:
    """The clock: the grace period of the collected Cheat! presses has passed
    (``challenge_priority=clockwise``); the nearest challenger clockwise from the claimant
    wins the right to challenge. Refused before ``pending_deadline_ms``."""

    now_ms: int


@dataclass(frozen=True, slots=True)
class PullTrigger:
    """The clock: the pause before a trigger is pulled is over (``penalty=revolver``).
    Refused before ``pending_deadline_ms``."""

    now_ms: int


@dataclass(frozen=True, slots=True)
class Pass:
    """Pass instead of playing (``passing``): at once under ``exhausted``, or ask the table
    under ``vote``."""

    seat: int


@dataclass(frozen=True, slots=True)
class PassVote:
    """Agree (``yes``) or not to the open request to pass (``passing=vote``)."""

    seat: int
    yes: bool


@dataclass(frozen=True, slots=True)
class Leave:
    seat: int


@dataclass(frozen=True, slots=True)
class Stop:
    """The game is ended by its creator or an admin."""


Action = (
    Play
    | Challenge
    | Accept
    | Timeout
    | ResolveChallenges
    | PullTrigger
    | Pass
    | PassVote
    | Leave
    | Stop
)
