"""The clock: when it acts next (``game_deadline``), what it does then (``clock_action``,
``tick``); and the group coming and going (the bot removed, a group migrated)."""

from __future__ import annotations

import dataclasses
import random

import pytest

from tests.engine.helpers import cards, state_with
from tgcheat.engine.actions import ResolveChallenges, Timeout
from tgcheat.engine.cards import Rank
from tgcheat.engine.events import (
    CardsPlayed,
    ChallengeCalled,
    ChallengeResolved,
    GameEnded,
    HandChanged,
    PassVoted,
    PlayerLeft,
    TurnStarted,
)
from tgcheat.engine.game import pending_deadline_ms
from tgcheat.engine.rules import ChallengePriority, MatchKind, Rules
from tgcheat.engine.state import EndReason, GameState, Phase
from tgcheat.table.clock import LOBBY_TIMEOUT_S, clock_action, game_deadline, lobby_deadline
from tgcheat.table.commands import Believe, CallCheat
from tgcheat.table.refusals import SessionRefusal, SessionRefused
from tgcheat.table.session import Session
from tgcheat.table.transitions import (
    Actor,
    act,
    arrive,
    end_without_group,
    leave_table,
    migrated,
    next_game,
    stop,
    tick,
)

from .builders import GAME, T0, at_table, dealt, lobby, match_for, play

TURN_MS = 90_000
GRACE_S = 3


def _three_players(rules: Rules | None = None) -> GameState:
    return state_with([cards("A♣", "A♦", "5♠"), cards("2♣", "7♦"), cards("3♣", "8♦")], rules=rules)


def _cheat_called(now_ms: int = T0) -> Session:
    """Four players under ``challenge_priority=clockwise``: Ann (seat 0) played an ace at
    ``now_ms``, Dan (seat 3) called Cheat! a second later; Bob and Cara sit nearer Ann and may
    still join, so the call waits for the grace period."""
    rules = Rules(challenge_priority=ChallengePriority.CLOCKWISE, challenge_grace_s=GRACE_S)
    state = state_with(
        [cards("A♣", "5♠"), cards("2♣", "7♦"), cards("3♣", "8♦"), cards("4♣", "9♦")],
        rules=rules,
    )
    session = at_table(state, deadline_ms=now_ms + TURN_MS)
    session, _ = act(session, game_id=GAME, command=play(state, 0, cards("A♣")), now_ms=now_ms)
    session, events = act(
        session, game_id=GAME, command=CallCheat(103, 1, now_ms + 1_000), now_ms=now_ms + 1_000
    )
    assert [type(event) for event in events] == [ChallengeCalled]
    return session


# --- lobby_deadline, game_deadline, clock_action -------------------------------------------------


def test_a_lobby_lasts_thirty_minutes() -> None:
    assert LOBBY_TIMEOUT_S == 30 * 60
    assert lobby_deadline(T0) == T0 + 1_800_000


def test_game_deadline_of_a_finished_game_is_never() -> None:
    finished, _ = stop(at_table(_three_players()), actor=Actor(100), now_ms=T0)
    assert finished.game is not None
    assert game_deadline(T0 + TURN_MS, finished.game, (), T0) == 0


def test_game_deadline_without_a_turn_timer_is_never() -> None:
    state = _three_players(Rules(turn_timeout_s=0))
    assert game_deadline(0, state, (TurnStarted(0, Rank.ACE),), T0) == 0


def test_game_deadline_of_a_pending_cheat_call_is_its_grace_period() -> None:
    session = _cheat_called(T0)
    assert session.game is not None
    assert game_deadline(T0 + TURN_MS, session.game, (), T0 + 2_000) == T0 + 1_000 + 3_000
    assert session.deadline_ms == T0 + 1_000 + 3_000


def test_game_deadline_starts_a_whole_turn_when_somebody_new_is_waited_for() -> None:
    state = _three_players()
    assert game_deadline(T0 + 5, state, (TurnStarted(1, Rank.TWO),), T0 + 100) == T0 + 100 + TURN_MS
    assert game_deadline(0, state, (), T0 + 100) == T0 + 100 + TURN_MS


def test_game_deadline_keeps_the_running_timer_otherwise() -> None:
    state = _three_players()
    assert game_deadline(T0 + 5, state, (PassVoted(1, yes=True),), T0 + 100) == T0 + 5


def test_clock_action_times_the_turn_out_or_settles_a_cheat_call() -> None:
    state = _three_players()
    assert clock_action(state, T0) == Timeout(0, False, T0)
    called = _cheat_called(T0).game
    assert called is not None
    assert clock_action(called, T0 + 9_000) == ResolveChallenges(T0 + 9_000)


def test_clock_action_of_a_final_play_is_a_final_timeout() -> None:
    state = state_with([cards("A♣"), cards("2♣"), cards("3♣")])
    session, _ = act(at_table(state), game_id=GAME, command=play(state, 0, cards("A♣")), now_ms=T0)
    assert session.game is not None and session.game.phase is Phase.FINAL_CHECK
    assert clock_action(session.game, T0) == Timeout(1, True, T0)


# --- tick ----------------------------------------------------------------------------------------


def test_tick_before_the_deadline_does_nothing() -> None:
    """The very same session: the store writes nothing."""
    for session in (lobby(players=(1,)), at_table(_three_players(), deadline_ms=T0 + TURN_MS)):
        early = session.deadline_ms - 1
        assert tick(session, early, rng=random.Random(0)) == (session, ())
        assert tick(session, early, rng=random.Random(0))[0] is session


def test_a_player_not_told_of_their_turn_yet_does_not_time_out() -> None:
    """Their hand waits for the bot's send budget: their whole turn starts again; the others'
    held hands change nothing."""
    state = _three_players()
    session = at_table(state, deadline_ms=T0 + TURN_MS)
    due = session.deadline_ms
    to_play = state.players[state.turn].user_id
    someone_else = state.players[(state.turn + 1) % 3].user_id
    waited, events = tick(session, due, rng=random.Random(0), unseen=frozenset({to_play}))
    assert events == () and waited is not None
    assert waited.game == state and waited.deadline_ms == due + TURN_MS
    _, events = tick(session, due, rng=random.Random(0), unseen=frozenset({someone_else}))
    assert any(isinstance(event, TurnStarted) for event in events)


def test_tick_without_a_deadline_does_nothing() -> None:
    session = at_table(_three_players(Rules(turn_timeout_s=0)), deadline_ms=0)
    assert tick(session, T0 + 10**9, rng=random.Random(0))[0] is session
    assert tick(None, T0, rng=random.Random(0)) == (None, ())


def test_tick_closes_a_lobby_nobody_started() -> None:
    session = lobby(players=(1, 2))
    closed, events = tick(session, session.deadline_ms, rng=random.Random(0))
    assert closed is not None
    assert (closed.lobby, closed.game, closed.deadline_ms, events) == (None, None, 0, ())


def test_tick_times_out_the_turn_and_starts_the_next_one() -> None:
    """RULES.md "Turn timer": one card played for the player, the next turn timed anew."""
    session = at_table(_three_players(), deadline_ms=T0 + TURN_MS)
    after, events = tick(session, T0 + TURN_MS, rng=random.Random(0))
    assert after is not None and after.game is not None
    assert [type(event) for event in events] == [CardsPlayed, HandChanged, TurnStarted]
    played = events[0]
    assert isinstance(played, CardsPlayed) and played.by_timeout
    assert played.claim.seat == 0 and played.claim.rank is Rank.ACE
    assert after.game.players[0].timeouts == 1
    assert after.game.turn == 1
    assert after.deadline_ms == T0 + TURN_MS + TURN_MS


def test_tick_at_the_afk_limit_removes_the_player() -> None:
    session = at_table(_three_players(Rules(afk_limit=1)), deadline_ms=T0 + TURN_MS)
    after, events = tick(session, T0 + TURN_MS + 500, rng=random.Random(0))
    assert after is not None and after.game is not None
    assert after.game.players[0].left
    assert PlayerLeft(0, removed_for_timeouts=True) in events


def test_tick_accepts_an_unanswered_final_play_and_scores_the_match() -> None:
    """The time for last cards runs out: they are believed, the game is won."""
    rules = Rules(match=MatchKind.FIRST_TO, match_target=2)
    state = state_with([cards("A♣"), cards("2♣", "7♦"), cards("3♣", "8♦")], rules=rules)
    session = at_table(state, match=match_for(state), deadline_ms=T0 + TURN_MS)
    session, _ = act(session, game_id=GAME, command=play(state, 0, cards("A♣")), now_ms=T0)
    session, _ = act(session, game_id=GAME, command=Believe(101, 1), now_ms=T0 + 1)
    assert session.deadline_ms == T0 + TURN_MS
    after, events = tick(session, T0 + TURN_MS, rng=random.Random(0))
    assert after is not None and after.game is not None and after.game.result is not None
    assert (after.game.result.reason, after.game.result.winner) == (EndReason.WENT_OUT, 0)
    assert isinstance(events[-1], GameEnded)
    assert after.match is not None and after.match.scores[0] == (100, 1)
    assert after.deadline_ms == 0


def test_tick_settles_a_cheat_call_after_its_grace_period() -> None:
    session = _cheat_called(T0)
    after, events = tick(session, session.deadline_ms, rng=random.Random(0))
    assert after is not None and after.game is not None
    resolved = [event for event in events if isinstance(event, ChallengeResolved)]
    assert len(resolved) == 1 and resolved[0].challenger == 3 and not resolved[0].lie
    assert after.game.challenges == ()
    assert after.deadline_ms == session.deadline_ms + TURN_MS


def test_tick_whose_clock_action_is_refused_waits_and_changes_nothing_else() -> None:
    """A deadline stored earlier than the grace period of a Cheat! call: settling it is
    refused (too early), so the game stays as it is and the clock waits again, as
    ``game_deadline`` computes for a fresh wait (here: the end of the grace period)."""
    called = _cheat_called(T0)
    assert called.game is not None
    grace_end = pending_deadline_ms(called.game)
    assert grace_end == T0 + 1_000 + GRACE_S * 1_000
    early = dataclasses.replace(called, deadline_ms=T0 + 1_500)
    after, events = tick(early, T0 + 1_500, rng=random.Random(0))
    assert events == ()
    assert after == dataclasses.replace(called, deadline_ms=grace_end)


def test_tick_of_a_finished_game_only_clears_its_deadline() -> None:
    finished, _ = stop(at_table(_three_players()), actor=Actor(100), now_ms=T0)
    leftover = dataclasses.replace(finished, deadline_ms=T0 + 5)
    after, events = tick(leftover, T0 + 5, rng=random.Random(0))
    assert after == finished and events == ()


def test_a_cheat_call_withdrawn_by_a_leaver_gives_the_player_to_play_a_whole_turn() -> None:
    """Dan called Cheat!, then left before the grace period ended: his call goes with him.
    Bob, whose turn it is, is waited for again: the clock must not play for him when the
    grace period would have ended, but a whole turn later."""
    session = _cheat_called(T0)
    grace_end = session.deadline_ms
    after, events = leave_table(session, 103, T0 + 2_000)
    assert after.game is not None and after.game.challenges == ()
    assert events == (PlayerLeft(3),)
    assert after.deadline_ms == T0 + 2_000 + TURN_MS
    assert tick(after, grace_end, rng=random.Random(0)) == (after, ())


# --- the group coming and going ------------------------------------------------------------------


def test_end_without_group_closes_a_lobby() -> None:
    session, events = end_without_group(lobby(players=(1, 2)))
    assert session is not None
    assert (session.lobby, session.game, session.deadline_ms, events) == (None, None, 0, ())


def test_end_without_group_stops_the_game() -> None:
    session, events = end_without_group(at_table(_three_players(), deadline_ms=T0 + TURN_MS))
    assert session is not None and session.game is not None
    result = session.game.result
    assert result is not None and result.reason is EndReason.STOPPED
    assert events == (GameEnded(result),)
    assert session.deadline_ms == 0


def test_end_without_group_ends_the_match_as_a_stop_does() -> None:
    """A game stopped because the bot left the group is a stopped game of its match: the
    match is over without a winner, and no next game can be dealt from it."""
    rules = Rules(match=MatchKind.FIRST_TO, match_target=2)
    state = _three_players(rules)
    session, _ = end_without_group(at_table(state, match=match_for(state), deadline_ms=T0 + 5))
    assert session is not None and session.match is not None
    assert (session.match.games, session.match.finished, session.match.winner) == (1, True, None)
    with pytest.raises(SessionRefused) as refused:
        next_game(
            session,
            game_id=GAME,
            actor=Actor(100),
            new_game_id="g2",
            rng=random.Random(0),
            now_ms=T0,
        )
    assert refused.value.reason is SessionRefusal.STALE


def test_end_without_group_leaves_nothing_in_progress_alone() -> None:
    finished, _ = stop(at_table(_three_players()), actor=Actor(100), now_ms=T0)
    assert end_without_group(finished) == (finished, ())
    assert end_without_group(finished)[0] is finished
    assert end_without_group(None) == (None, ())


def test_migrated_moves_the_session_under_the_new_chat_and_game_ids() -> None:
    """Everything else (lobby or game, deadline, languages) moves as it is."""
    session, _ = dealt()
    moved = migrated(session, new_chat_id=-2002, new_game_id="g9")
    assert (moved.chat_id, moved.game_id) == (-2002, "g9")
    assert moved.game == session.game
    assert moved.deadline_ms == session.deadline_ms
    assert moved.player_languages == session.player_languages
    assert moved.creator == session.creator


def test_arrive_takes_the_place_of_nothing_or_of_a_finished_game() -> None:
    moved = migrated(lobby(players=(1,)), new_chat_id=-2002, new_game_id="g9")
    finished, _ = stop(at_table(_three_players()), actor=Actor(100), now_ms=T0)
    assert arrive(None, moved) is moved
    assert arrive(finished, moved) is moved


def test_arrive_never_replaces_a_session_in_progress() -> None:
    moved = migrated(lobby(players=(1,)), new_chat_id=-2002, new_game_id="g9")
    current, _ = dealt()
    assert arrive(current, moved) is current


@pytest.mark.parametrize("timeout_s", [30, 90])
def test_start_and_play_time_each_turn_from_its_start(timeout_s: int) -> None:
    """Each play starts the next player's whole turn, whatever was left of the last one."""
    session, _ = dealt(Rules(turn_timeout_s=timeout_s), now_ms=T0)
    game = session.game
    assert game is not None and session.deadline_ms == T0 + timeout_s * 1000
    seat = game.turn
    card = game.players[seat].hand[0]
    later = T0 + 7_000
    after, _ = act(session, game_id=GAME, command=play(game, seat, (card,)), now_ms=later)
    assert after.deadline_ms == later + timeout_s * 1000
