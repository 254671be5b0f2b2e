"""What people ask of a game in play, as the table receives it: who asks, and what the button
or command they used was drawn for. ``to_action`` turns a command into the engine's action for
the game as it is now, or refuses it as stale."""

from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import dataclass

from tgcheat.engine.actions import Accept, Action, Challenge, Leave, Pass, PassVote, Play, Stop
from tgcheat.engine.cards import Rank, pick_by_rank
from tgcheat.engine.game import ActionRefused, Refusal
from tgcheat.engine.state import GameState
from tgcheat.table.refusals import SessionRefusal, SessionRefused

#: The most digits a number typed in a command may have: every count and seat is far smaller.
MAX_TYPED_DIGITS = 4


def typed_number(text: str) -> int | None:
    """The whole number a person typed as a command's argument ("3", "٣", "３"), or None for
    anything else: a sign, a superscript ("²": a digit that is not a decimal one), a fraction,
    junk, or more than ``MAX_TYPED_DIGITS`` digits (never a costly conversion of a huge one).
    Every command reads its numbers here."""
    if not 0 < len(text) <= MAX_TYPED_DIGITS or not text.isdecimal():
        return None
    return int("".join(str(unicodedata.decimal(char)) for char in text))


@dataclass(frozen=True, slots=True)
class PlayCards:
    user_id: int
    #: The play count the hand keyboard was drawn at.
    plays: int
    #: How many cards of each rank are played.
    selected: Counter[Rank]
    #: The rank claimed.
    rank: Rank


@dataclass(frozen=True, slots=True)
class CallCheat:
    user_id: int
    claim: int
    now_ms: int


@dataclass(frozen=True, slots=True)
class Believe:
    user_id: int
    claim: int


@dataclass(frozen=True, slots=True)
class PassTurn:
    user_id: int
    plays: int


@dataclass(frozen=True, slots=True)
class VoteOnPass:
    user_id: int
    plays: int
    yes: bool


@dataclass(frozen=True, slots=True)
class LeaveGame:
    """The player leaves, or is removed (/kick, or they left the group)."""

    user_id: int


@dataclass(frozen=True, slots=True)
class StopGame:
    """The game is ended by its creator or an admin (checked before, see ``stop``)."""


GameCommand = PlayCards | CallCheat | Believe | PassTurn | VoteOnPass | LeaveGame | StopGame


def seat_of(game: GameState, user_id: int) -> int:
    seat = game.seat_of(user_id)
    if seat is None:
        raise ActionRefused(Refusal.NOT_IN_GAME)
    return seat


def _seat_at(game: GameState, user_id: int, plays: int) -> int:
    """The user's seat, for a button drawn at play count ``plays`` (else it is stale)."""
    seat = seat_of(game, user_id)
    if game.plays != plays:
        raise SessionRefused(SessionRefusal.STALE)
    return seat


def to_action(game: GameState, command: GameCommand) -> Action:
    match command:
        case PlayCards(user_id, plays, selected, rank):
            seat = _seat_at(game, user_id, plays)
            cards = pick_by_rank(game.players[seat].hand, selected)
            if cards is None:
                raise ActionRefused(Refusal.CARDS_NOT_IN_HAND)
            return Play(seat, cards, rank)
        case CallCheat(user_id, claim, now_ms):
            return Challenge(seat_of(game, user_id), claim, now_ms)
        case Believe(user_id, claim):
            return Accept(seat_of(game, user_id), claim)
        case PassTurn(user_id, plays):
            return Pass(_seat_at(game, user_id, plays))
        case VoteOnPass(user_id, plays, yes):
            return PassVote(_seat_at(game, user_id, plays), yes)
        case LeaveGame(user_id):
            return Leave(seat_of(game, user_id))
        case StopGame():
            return Stop()
