"""Computer players at the table: seats of their own, a level each, and their moves, made by
the clock at a human pace.

A computer player is a lobby seat with a negative user id (no person has one: Telegram's user
ids are positive), a name that reads as a computer's ("🤖 Ada") and a level. It acts through
the same engine path as a person: the clock's turn at the session (``tick``) applies its move
with the session's compare-and-set, in whichever process fires it, after a short thinking time
that differs from move to move, so that a person can still call Cheat! before its next play.
Its hand is never shown anywhere: it has no private chat.
"""

from __future__ import annotations

import dataclasses
import enum
import zlib
from collections.abc import Sequence
from typing import Protocol

from tgcheat.engine.ai import AIRandom, choose_action
from tgcheat.engine.events import CardsPlayed, Event
from tgcheat.engine.game import (
    ActionRefused,
    RandomSource,
    apply,
    can_accept,
    can_vote,
    challengeable,
)
from tgcheat.engine.rules import PACE_TURN_S, Pace
from tgcheat.engine.state import GameState, Phase
from tgcheat.engine.strategies import ComputerPlayers
from tgcheat.table.session import Session

#: Names that read as names in every language the bot speaks, short enough for a phone's table.
COMPUTER_NAMES = ("Ada", "Max", "Kim", "Leo", "Mia", "Sam")
#: How long a computer player thinks before it acts (ms), at least and at most.
THINK_MS = (1_800, 4_200)
#: … at the blitz pace (or a faster clock), where a turn is 15 s: a quick table keeps quick.
BLITZ_THINK_MS = (600, 1_500)


class TableRandom(RandomSource, AIRandom, Protocol):
    """What the clock needs of a random generator: dealing a full lobby, and the computer
    players' choices (``random.SystemRandom`` in production)."""


class Level(enum.StrEnum):
    EASY = "easy"
    NORMAL = "normal"
    HARD = "hard"


def is_computer(user_id: int) -> bool:
    """Whether a seat's user id is a computer player's."""
    return user_id < 0


def new_computer(taken: Sequence[tuple[int, str]]) -> tuple[int, str]:
    """The id and name of a computer player joining seats ``taken``: the first free of each."""
    ids = {user_id for user_id, _ in taken}
    names = {name for _, name in taken}
    user_id = next(-n for n in range(1, len(taken) + 2) if -n not in ids)
    name = next(
        (f"🤖 {n}" for n in COMPUTER_NAMES if f"🤖 {n}" not in names),
        f"🤖 {COMPUTER_NAMES[0]} {-user_id}",
    )
    return user_id, name


def level_of(session: Session, user_id: int) -> Level:
    return next((Level(level) for uid, level in session.computers if uid == user_id), Level.NORMAL)


def has_computers(state: GameState) -> bool:
    return any(is_computer(p.user_id) for p in state.players)


def think_ms(game_id: str, plays: int, seat: int, turn_timeout_s: int = 0) -> int:
    """A computer player's thinking time before its move at this point of the game: differs
    from move to move, the same for the same move (a pure function: no clock, no random);
    shorter at the blitz pace."""
    blitz = 0 < turn_timeout_s <= PACE_TURN_S[Pace.BLITZ]
    low, high = BLITZ_THINK_MS if blitz else THINK_MS
    spread = zlib.crc32(f"{game_id}:{plays}:{seat}".encode()) % (high - low)
    return low + spread


def _to_act(state: GameState, events: Sequence[Event]) -> list[int]:
    """Computer seats that have something to do in ``state``: their turn, last cards to
    answer, a vote; or a claim just made that they may doubt (asked once per claim)."""
    if state.phase is Phase.FINISHED or state.challenges or state.pull_by is not None:
        return []
    seats = [
        seat
        for seat, player in enumerate(state.players)
        if is_computer(player.user_id) and not player.left
    ]
    if not seats:
        return []
    if state.phase is Phase.FINAL_CHECK:
        return [seat for seat in seats if can_accept(state, seat)]
    if state.vote_by is not None:
        return [seat for seat in seats if can_vote(state, seat)]
    acting = [seat for seat in seats if seat == state.turn]
    if any(isinstance(event, CardsPlayed) for event in events):
        acting += [seat for seat in seats if seat != state.turn and challengeable(state, seat)]
    return acting


def computers_due(session: Session, state: GameState, events: Sequence[Event], now_ms: int) -> int:
    """When the computer players act next after ``events`` brought the game to ``state``
    (ms; 0: none has anything to do)."""
    acting = _to_act(state, events)
    if not acting:
        return 0
    return now_ms + think_ms(session.game_id, state.plays, acting[0], state.rules.turn_timeout_s)


def seated(session: Session, state: GameState) -> Session:
    """The session of a game just dealt, with its computer players' strategies (their
    levels) and fresh memories."""
    if not has_computers(state):
        return dataclasses.replace(session, computer_players=None)
    strategies = [
        level_of(session, p.user_id).value if is_computer(p.user_id) else None
        for p in state.players
    ]
    return dataclasses.replace(session, computer_players=ComputerPlayers.seat(state, strategies))


def computer_move(
    session: Session, state: GameState, rng: TableRandom, now_ms: int
) -> tuple[GameState, list[Event]] | None:
    """The first move a computer player makes now, in seat order from the player to play,
    applied; None when none of them acts (each lets the last claim stand)."""
    players = session.computer_players
    count = len(state.players)
    for step in range(count):
        seat = (state.turn + step) % count
        player = state.players[seat]
        if not is_computer(player.user_id) or player.left:
            continue
        if players is not None:
            action = players.choose(state, seat, rng, now_ms)
        else:
            # A game stored before computer players remembered anything.
            action = choose_action(state, seat, rng, now_ms)
        if action is None:
            continue
        try:
            return apply(state, action)
        except ActionRefused:
            continue
    return None
