"""What follows every change of a game at the session level: the next deadline, the match's
score, the game's tally and its notice."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from tgcheat.engine.actions import Stop
from tgcheat.engine.events import Event
from tgcheat.engine.game import (
    apply,
    awaited,
    pending_deadline_ms,
)
from tgcheat.engine.match import record_game
from tgcheat.engine.state import GameState, Phase
from tgcheat.table.chronicle import Notice, NoticeKind, notice_of, tallied
from tgcheat.table.clock import (
    game_deadline,
)
from tgcheat.table.computers import computers_due, is_computer
from tgcheat.table.session import Session
from tgcheat.table.story import storied
from tgcheat.table.told import told_after, told_noticed, told_reminded

Events = tuple[Event, ...]


def advance(session: Session, state: GameState, events: Sequence[Event], now_ms: int) -> Session:
    """The session after its game became ``state``: the next deadline, the match's score when
    a game of a match has just ended, the game's tally, and the notice of what happened
    without anyone's press (none after a person's own move). A game left to computer players
    alone (every person left it, or was removed or shot) stops there: nobody is there to play
    for, and its clock would run on for nothing."""
    if state.phase is not Phase.FINISHED and not _anyone_plays(state):
        state, stopped = apply(state, Stop())
        events = (*events, *stopped)
    match = session.match
    was_finished = session.game is not None and session.game.phase is Phase.FINISHED
    if match is not None and state.phase is Phase.FINISHED and not was_finished:
        match = record_game(match, state)
    previous = session.deadline_ms
    if session.game is not None and pending_deadline_ms(session.game) is not None:
        # The deadline was the end of a Cheat! call's grace period, not a turn's: when the
        # call is gone unsettled (the caller or the claimant left), a whole turn starts.
        previous = 0
    players = session.computer_players
    if players is not None and session.game is not None:
        # Each computer player remembers what it saw of this change.
        players = players.remember(session.game, events, state)
    ended = state.phase is Phase.FINISHED and not was_finished
    notice = notice_of(events)
    return dataclasses.replace(
        session,
        game=state,
        match=match,
        ended_ms=now_ms if ended else session.ended_ms,
        changed_ms=now_ms,
        # Picks are of one play: any change of the game makes them out of date.
        picks=(),
        computer_players=players,
        deadline_ms=game_deadline(previous, state, events, now_ms),
        computers_due_ms=computers_due(session, state, events, now_ms),
        notice=notice,
        told=told_after(session.told, session.game_id, state, events, notice),
        tally=tallied(session.tally, state.rules, len(state.players), events),
        story=storied(session.story, state.rules, events),
    )


def _anyone_plays(state: GameState) -> bool:
    """Whether a person (not a computer player) is still in the game."""
    return any(not is_computer(p.user_id) and not p.left and not p.shot for p in state.players)


def noticed(
    changed: tuple[Session, Events], kind: NoticeKind, user_id: int
) -> tuple[Session, Events]:
    """A player's leaving, as the table and they themselves are told of it."""
    session, events = changed
    game = session.game
    seat = game.seat_of(user_id) if game is not None else None
    if seat is None or not events:
        return changed
    notice = Notice(kind, seat)
    told = told_noticed(session.told, game, notice) if game is not None else session.told
    return dataclasses.replace(session, notice=notice, told=told), events


def reminded(session: Session, state: GameState) -> Session:
    """The session once the players a long turn waits for are reminded in private."""
    told = told_reminded(session.told, state, sorted(awaited(state)))
    return dataclasses.replace(session, told=told, reminded_ms=session.deadline_ms)
