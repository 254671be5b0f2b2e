"""What happened, for the views. Each event says who may read it: the table, or one player.

Hands never reach the table: only ``HandChanged`` concerns one player's cards, and views
render it in that player's private chat alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from tgcheat.engine.cards import Card, Rank
from tgcheat.engine.state import Claim, Result


@dataclass(frozen=True, slots=True)
class CardsPlayed:
    claim: Claim
    #: The play was made for the player by the clock.
    by_timeout: bool = False


@dataclass(frozen=True, slots=True)
class TurnStarted:
    """It became ``seat``'s turn: that player gets a notification."""

    seat: int
    required: Rank | None


@dataclass(frozen=True, slots=True)
class FinalPlayPending:
    """A player played their last cards; ``answerers`` must accept, or one may challenge."""

    claim: Claim
    answerers: frozenset[int]


@dataclass(frozen=True, slots=True)
class FinalAccepted:
    seat: int
    claim: Claim
    by_timeout: bool = False


@dataclass(frozen=True, slots=True)
class ChallengeResolved:
    challenger: int
    claim: Claim
    #: The challenged cards, shown to the table (only this play, never the rest of the pile).
    revealed: tuple[Card, ...]
    lie: bool
    #: Seat that takes the pile, and how many cards that is.
    taker: int
    taken: int
    #: Under ``challenge_priority=clockwise``: every seat that called Cheat! in the grace
    #: period, the challenger among them (empty when the challenge resolved at once).
    callers: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ChallengeCalled:
    """``seat`` called Cheat! on ``claim`` under ``challenge_priority=clockwise``; others may
    join until ``deadline_ms``, then the nearest caller clockwise from the claimant challenges."""

    seat: int
    claim: Claim
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class Passed:
    """``seat`` passed instead of playing (``passing``); the table learns why: every card of
    ``rank`` lies in the pile (``exhausted``), or the others agreed (``by_vote``)."""

    seat: int
    rank: Rank | None
    by_vote: bool = False


@dataclass(frozen=True, slots=True)
class PassRequested:
    """``seat`` asks to pass (``passing=vote``); ``voters`` must all agree."""

    seat: int
    voters: frozenset[int]


@dataclass(frozen=True, slots=True)
class PassVoted:
    seat: int
    yes: bool


@dataclass(frozen=True, slots=True)
class PassRefused:
    """The request to pass failed: ``by`` said no (None: a voter's time ran out, or the
    request was withdrawn). The asker must play."""

    seat: int
    by: int | None = None
    #: The asker withdrew the request by playing, or a challenge interrupted the vote.
    withdrawn: bool = False


@dataclass(frozen=True, slots=True)
class PlayerLeft:
    seat: int
    removed_for_timeouts: bool = False


@dataclass(frozen=True, slots=True)
class TriggerPulled:
    """``penalty=revolver``: ``seat`` pulled the trigger on chamber ``chamber`` (1–6) of
    their revolver; ``hit``: the bullet was there and they are out."""

    seat: int
    chamber: int
    hit: bool


@dataclass(frozen=True, slots=True)
class RoundDealt:
    """A new round: every hand dealt anew; ``required`` is the rank every claim must name
    (``rank_rule=table``), None when the opener names it."""

    round: int
    required: Rank | None


@dataclass(frozen=True, slots=True)
class HandChanged:
    """Audience: the player at ``seat`` alone."""

    seat: int


@dataclass(frozen=True, slots=True)
class GameEnded:
    result: Result


Event = (
    CardsPlayed
    | TurnStarted
    | FinalPlayPending
    | FinalAccepted
    | ChallengeResolved
    | ChallengeCalled
    | Passed
    | PassRequested
    | PassVoted
    | PassRefused
    | PlayerLeft
    | TriggerPulled
    | RoundDealt
    | HandChanged
    | GameEnded
)
