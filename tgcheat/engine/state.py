"""The state of one game: immutable values; a transition builds a new state."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tgcheat.engine.cards import Card, Rank
from tgcheat.engine.rules import Rules


class Phase(enum.StrEnum):
    #: The player whose turn it is must play; others may challenge open claims.
    PLAYING = "playing"
    #: A player has played their last cards; the game waits for the answer (RULES.md "Last cards").
    FINAL_CHECK = "final_check"
    FINISHED = "finished"


class EndReason(enum.StrEnum):
    WENT_OUT = "went_out"
    MOVE_CAP = "move_cap"
    LAST_PLAYER = "last_player"
    STOPPED = "stopped"
    #: ``penalty=revolver``: every other player was shot (or left); the last alive wins.
    LAST_ALIVE = "last_alive"


@dataclass(frozen=True, slots=True)
class Player:
    """One seat at the table."""

    user_id: int
    #: The name other players read (raw; views escape it).
    name: str
    hand: tuple[Card, ...]
    #: Left or removed mid-game: the hand is set aside and the seat is skipped (RULES.md).
    left: bool = False
    #: Turn timeouts in a row; reset by any own action.
    timeouts: int = 0
    #: ``penalty=revolver``: the chamber (0-based) that holds this player's bullet, placed at
    #: random when the game starts; secret. -1 without the revolver.
    bullet: int = -1
    #: Times this player pulled the trigger; the pull at index ``bullet`` is the shot.
    pulls: int = 0

    @property
    def shot(self) -> bool:
        """Out of the game by the revolver (they may still watch)."""
        return 0 <= self.bullet < self.pulls


@dataclass(frozen=True, slots=True)
class Claim:
    """A play as the table knows it: who, how many cards, which rank was claimed."""

    #: The play's number in the game (1-based); buttons name it, so an old button is stale.
    number: int
    seat: int
    #: The cards really played, face down: only a challenge reveals them.
    cards: tuple[Card, ...]
    rank: Rank
    #: The play emptied the claimant's hand.
    final: bool = False


@dataclass(frozen=True, slots=True)
class Result:
    reason: EndReason
    #: Seat of the winner; None for a draw (a tie for fewest cards at the move cap) or a stop.
    winner: int | None
    #: Place of every seat that was still in the game (1 is best; equal counts share a place).
    places: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class PendingChallenge:
    """A Cheat! press waiting for the grace period to end (``challenge_priority=clockwise``)."""

    seat: int
    #: The number of the claim challenged.
    claim: int
    #: When it was pressed (ms).
    at_ms: int


@dataclass(frozen=True, slots=True)
class GameState:
    rules: Rules
    #: In seating order; "clockwise" is the next index, cyclically.
    players: tuple[Player, ...]
    dealer: int
    #: The seat to play next (during FINAL_CHECK: the seat that plays if the game goes on).
    turn: int
    #: The rank the next play must claim; None when the player to play names it.
    required: Rank | None
    pile: tuple[Card, ...] = ()
    #: Claims that may still be challenged, oldest first (more than one under window `two`).
    open_claims: tuple[Claim, ...] = ()
    #: Cards of players who left, out of play for the rest of the game.
    set_aside: tuple[Card, ...] = ()
    #: Moves made: plays and passes (a pass is a move for ``move_cap`` and makes an older
    #: button or deadline stale). A claim's number is the move count after it.
    plays: int = 0
    phase: Phase = Phase.PLAYING
    #: Seats that have accepted the pending final play.
    accepted: frozenset[int] = field(default_factory=frozenset)
    result: Result | None = None
    #: Cheat! presses collected under ``challenge_priority=clockwise`` and not yet resolved,
    #: first press first. While any is pending the game waits for the clock
    #: (``pending_deadline_ms``), not for a player.
    challenges: tuple[PendingChallenge, ...] = ()
    #: Under ``passing=vote``: the seat (always the player to play) asking to pass, while the
    #: vote is open.
    vote_by: int | None = None
    #: The seats that have agreed to the open vote, in seat order.
    votes_yes: tuple[int, ...] = ()
    #: The player to play had a request to pass refused this turn: they must play.
    pass_refused: bool = False
    #: Cards not dealt this round (``deck=short``: five cards to each player).
    stock: tuple[Card, ...] = ()
    #: Rounds dealt (``deck=short`` deals anew each round; 1 from the first deal).
    round: int = 0
    #: The secret each round's deal is drawn from (with the round's number), itself drawn
    #: from a cryptographically secure generator when the game starts; 0 when the game is
    #: dealt once. Never shown.
    seed: int = 0
    #: ``penalty=revolver``: the seat that pulls the trigger once ``pull_at_ms`` comes (the
    #: moment's pause, for the table), or None.
    pull_by: int | None = None
    pull_at_ms: int = 0
    #: Seats shot, in order (``penalty=revolver``): the later, the better the place.
    fallen: tuple[int, ...] = ()

    @property
    def deck_size(self) -> int:
        return (
            sum(len(p.hand) for p in self.players)
            + len(self.pile)
            + len(self.set_aside)
            + len(self.stock)
        )

    def active_seats(self) -> tuple[int, ...]:
        return tuple(i for i, p in enumerate(self.players) if not p.left)

    def next_active(self, seat: int) -> int:
        """The next seat clockwise from ``seat`` whose player is still in the game."""
        count = len(self.players)
        for step in range(1, count + 1):
            candidate = (seat + step) % count
            if not self.players[candidate].left:
                return candidate
        return seat

    def seat_of(self, user_id: int) -> int | None:
        for i, p in enumerate(self.players):
            if p.user_id == user_id:
                return i
        return None

    @property
    def last_claim(self) -> Claim | None:
        return self.open_claims[-1] if self.open_claims else None

    @property
    def final_claim(self) -> Claim | None:
        if self.phase is not Phase.FINAL_CHECK or not self.open_claims:
            return None
        return self.open_claims[-1]


_Record = TypeVar("_Record", "GameState", "Player")
_FIELDS: dict[type, tuple[str, ...]] = {}


def evolve(record: _Record, **changes: Any) -> _Record:
    """``dataclasses.replace`` for the game's records, without its introspection on every
    call (a play replaces the state several times, and it was most of what a play cost the
    engine). A name that is not a field is refused, as there."""
    cls = type(record)
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    new = object.__new__(cls)
    for name in names:
        value = changes.pop(name) if name in changes else getattr(record, name)
        object.__setattr__(new, name, value)
    if changes:
        raise TypeError(f"{cls.__name__} has no field {', '.join(sorted(changes))}")
    return new
