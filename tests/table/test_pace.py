"""Paces: computer players think faster in blitz; a long turn reminds once, 4 hours in."""

from __future__ import annotations

import random

from tests.engine.helpers import cards, state_with
from tgcheat.engine.game import new_game, random_seating
from tgcheat.engine.rules import PACE_TURN_S, Pace, Rules, pace_of, with_pace
from tgcheat.table.computers import BLITZ_THINK_MS, THINK_MS, think_ms
from tgcheat.table.progress import advance
from tgcheat.table.session import REMIND_AFTER_S, Session
from tgcheat.table.transitions import tick

T0 = 1_700_000_000_000


def test_each_pace_is_its_turn_time() -> None:
    for pace, seconds in PACE_TURN_S.items():
        rules = with_pace(Rules(), pace)
        assert rules.turn_timeout_s == seconds and pace_of(rules) is pace
    assert pace_of(Rules()) is Pace.NORMAL and pace_of(Rules(turn_timeout_s=60)) is None


def test_computer_players_think_faster_in_blitz() -> None:
    blitz = [think_ms("g1", plays, 1, PACE_TURN_S[Pace.BLITZ]) for plays in range(200)]
    normal = [think_ms("g1", plays, 1, PACE_TURN_S[Pace.NORMAL]) for plays in range(200)]
    assert all(BLITZ_THINK_MS[0] <= ms < BLITZ_THINK_MS[1] for ms in blitz)
    assert all(THINK_MS[0] <= ms < THINK_MS[1] for ms in normal)
    assert max(blitz) < min(normal)


def _long_game() -> Session:
    rules = with_pace(Rules(), Pace.CORRESPONDENCE)
    rng = random.Random(1)
    state, events = new_game(rules, random_seating([(1, "A"), (2, "B"), (3, "C")], rng), rng)
    return advance(Session(chat_id=-5, game_id="g", creator=1, game=state), state, events, T0)


def test_a_long_turn_reminds_its_player_once_then_times_out() -> None:
    session = _long_game()
    assert session.waiting_since_ms == T0
    remind_at = T0 + REMIND_AFTER_S * 1000
    assert session.next_deadline_ms == remind_at == session.reminder_due_ms
    rng = random.Random(2)
    assert tick(session, remind_at - 1, rng=rng)[0] is session
    game = session.game
    assert game is not None
    user = game.players[game.turn].user_id
    reminded, events = tick(session, remind_at, rng=rng)
    assert reminded is not None and events == () and reminded.game is game
    assert reminded.reminded and reminded.reminder_due_ms == 0
    assert reminded.told.hand_epoch(user) == session.told.hand_epoch(user) + 1
    # Nothing more until the turn's end: then the clock plays for them, and the next turn
    # will be reminded in its turn.
    assert reminded.next_deadline_ms == session.deadline_ms
    timed_out, events = tick(reminded, session.deadline_ms, rng=rng)
    assert timed_out is not None and events and not timed_out.reminded
    assert timed_out.reminder_due_ms == session.deadline_ms + REMIND_AFTER_S * 1000


def test_a_short_turn_is_never_reminded() -> None:
    state = state_with([cards("A♣"), cards("2♣"), cards("3♣")])
    session = advance(Session(chat_id=-5, game_id="g", creator=1, game=state), state, [], T0)
    assert session.reminder_due_ms == 0
