"""What follows an engine transition at the session level: the next deadline, and the match's
score when a game of a match ends. Shared by the handlers and the clock."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from tgcheat.bot.deadlines import game_deadline
from tgcheat.engine.events import Event
from tgcheat.engine.match import record_game
from tgcheat.engine.state import GameState, Phase
from tgcheat.table.session import Session


def advance(session: Session, state: GameState, events: Sequence[Event], now_ms: int) -> Session:
    match = session.match
    was_finished = session.game is not None and session.game.phase is Phase.FINISHED
    if match is not None and state.phase is Phase.FINISHED and not was_finished:
        match = record_game(match, state)
    return dataclasses.replace(
        session,
        game=state,
        match=match,
        deadline_ms=game_deadline(session.deadline_ms, state, events, now_ms),
    )
