"""What a game remembers of itself beyond the rules' state: the last thing that happened
without anyone's press (a notice for the table and for whoever it concerns), and a tally of the
game for its summary at the end. Both are built from the engine's events."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from dataclasses import dataclass

from tgcheat.engine.events import (
    CardsPlayed,
    ChallengeResolved,
    Event,
    FinalAccepted,
    PlayerLeft,
)
from tgcheat.engine.game import is_lie
from tgcheat.engine.rules import Rules


class NoticeKind(enum.StrEnum):
    #: The clock played a card for the player whose time ran out.
    TIMED_OUT = "timed_out"
    #: The clock believed last cards for the players who did not answer in time.
    BELIEVED_BY_CLOCK = "believed_by_clock"
    #: The player missed too many turns in a row and is out of the game.
    REMOVED_FOR_TIMEOUTS = "removed_for_timeouts"
    #: The player was removed by the game's creator or an admin (/kick).
    KICKED = "kicked"
    #: The player left (/leave, or left the group).
    LEFT = "left"


@dataclass(frozen=True, slots=True)
class Notice:
    """One line on the table, and a private notice to the player at ``seat``."""

    kind: NoticeKind
    seat: int
    #: Cards played for them (TIMED_OUT).
    cards: int = 0


def notice_of(events: Sequence[Event]) -> Notice | None:
    """The notice a change without anyone's press deserves, from its events."""
    notice = None
    for event in events:
        if isinstance(event, PlayerLeft) and event.removed_for_timeouts:
            return Notice(NoticeKind.REMOVED_FOR_TIMEOUTS, event.seat)
        if isinstance(event, CardsPlayed) and event.by_timeout:
            notice = Notice(NoticeKind.TIMED_OUT, event.claim.seat, len(event.claim.cards))
        elif isinstance(event, FinalAccepted) and event.by_timeout and notice is None:
            notice = Notice(NoticeKind.BELIEVED_BY_CLOCK, event.seat)
    return notice


@dataclass(frozen=True, slots=True)
class SeatTally:
    """One player's game: what they did and what the game revealed of it."""

    plays: int = 0
    #: Claims that were lies (known to the player alone until revealed).
    bluffs: int = 0
    #: Their bluffs that a Cheat! call caught.
    bluffs_caught: int = 0
    #: Their Cheat! calls that caught a bluff, and those that did not.
    right_calls: int = 0
    wrong_calls: int = 0
    #: Cards they took from the pile.
    cards_taken: int = 0

    @property
    def bluffs_unseen(self) -> int:
        return self.bluffs - self.bluffs_caught


@dataclass(frozen=True, slots=True)
class GameTally:
    """The game so far, per seat; and its biggest pile taken (cards, seat)."""

    seats: tuple[SeatTally, ...] = ()
    biggest_pile: tuple[int, int] | None = None

    def of(self, seat: int) -> SeatTally:
        return self.seats[seat] if seat < len(self.seats) else SeatTally()

    @property
    def bluffs_caught(self) -> int:
        return sum(s.bluffs_caught for s in self.seats)

    @property
    def wrong_calls(self) -> int:
        return sum(s.wrong_calls for s in self.seats)


def tallied(tally: GameTally, rules: Rules, players: int, events: Sequence[Event]) -> GameTally:
    seats = list(tally.seats) + [SeatTally()] * (players - len(tally.seats))
    biggest = tally.biggest_pile
    for event in events:
        if isinstance(event, CardsPlayed):
            seat = seats[event.claim.seat]
            seats[event.claim.seat] = dataclasses.replace(
                seat, plays=seat.plays + 1, bluffs=seat.bluffs + is_lie(rules, event.claim)
            )
        elif isinstance(event, ChallengeResolved):
            caller = seats[event.challenger]
            if event.lie:
                seats[event.challenger] = dataclasses.replace(
                    caller, right_calls=caller.right_calls + 1
                )
                claimant = seats[event.claim.seat]
                seats[event.claim.seat] = dataclasses.replace(
                    claimant, bluffs_caught=claimant.bluffs_caught + 1
                )
            else:
                seats[event.challenger] = dataclasses.replace(
                    caller, wrong_calls=caller.wrong_calls + 1
                )
            taker = seats[event.taker]
            seats[event.taker] = dataclasses.replace(
                taker, cards_taken=taker.cards_taken + event.taken
            )
            if biggest is None or event.taken > biggest[0]:
                biggest = (event.taken, event.taker)
    return GameTally(tuple(seats), biggest)
