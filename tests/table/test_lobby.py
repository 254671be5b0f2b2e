"""The lobby's transitions: opening, joining, leaving, the deal, cancelling, the lobby's clock
(a full lobby dealt after a countdown, any player let start a lobby its opener left waiting,
an untouched lobby closed), and the group's rules and language reaching an open lobby."""

from __future__ import annotations

import dataclasses
import random

import pytest

from tgcheat.engine.game import ActionRefused, Refusal, new_game, random_seating
from tgcheat.engine.match import Match
from tgcheat.engine.rules import MatchKind, Rules
from tgcheat.engine.state import Phase
from tgcheat.table.clock import (
    ANY_PLAYER_MAY_START_AFTER_S,
    FULL_LOBBY_COUNTDOWN_S,
    LOBBY_TIMEOUT_S,
)
from tgcheat.table.refusals import AdminUnknown, SessionRefusal, SessionRefused
from tgcheat.table.session import LobbyClock, Session
from tgcheat.table.transitions import (
    Actor,
    adopt_rules,
    cancel,
    game_of,
    in_progress,
    join,
    leave,
    lobby_of,
    open_lobby,
    require_settings_manager,
    set_language,
    start,
    stop,
    tick,
)

from .builders import CHAT, CREATOR, GAME, T0, dealt, lobby

LOBBY_MS = LOBBY_TIMEOUT_S * 1000
COUNTDOWN_MS = FULL_LOBBY_COUNTDOWN_S * 1000
WAIT_MS = ANY_PLAYER_MAY_START_AFTER_S * 1000
#: Two to four players: the minimum is reached by the second join, the lobby filled by the
#: fourth.
SMALL = Rules(min_players=2, max_players=4)


def _open(session: Session | None, *, now_ms: int = T0) -> Session:
    """/new by user 5, in Italian."""
    return open_lobby(
        session,
        chat_id=CHAT,
        game_id="g2",
        creator=5,
        rules=Rules(),
        title="Friday cards",
        language="it",
        now_ms=now_ms,
    )


# --- open_lobby ----------------------------------------------------------------------------------


def test_open_lobby_starts_an_empty_lobby_that_expires_after_the_lobby_timeout() -> None:
    """/new: the creator's lobby, with the group's rules, title and language, no one in it yet,
    closed by the clock 30 minutes later unless somebody touches it."""
    rules = Rules(min_players=2, max_players=4)
    session = open_lobby(
        None,
        chat_id=CHAT,
        game_id="g2",
        creator=5,
        rules=rules,
        title="Friday cards",
        language="it",
        now_ms=T0,
    )
    assert session.lobby is not None
    assert (session.lobby.creator, session.lobby.rules, session.lobby.players) == (5, rules, ())
    assert (session.chat_id, session.game_id, session.creator) == (CHAT, "g2", 5)
    assert (session.title, session.language) == ("Friday cards", "it")
    assert session.game is None and session.match is None
    assert session.deadline_ms == T0 + LOBBY_MS


def test_open_lobby_is_refused_while_a_lobby_is_open() -> None:
    """One lobby or game at a time: a second /new while a lobby is open is GAME_OPEN."""
    with pytest.raises(SessionRefused) as refused:
        _open(lobby(players=(1, 2)))
    assert refused.value.reason is SessionRefusal.GAME_OPEN


def test_open_lobby_is_refused_while_a_game_is_played() -> None:
    """A /new during a game is GAME_OPEN."""
    session, _ = dealt()
    with pytest.raises(SessionRefused) as refused:
        _open(session)
    assert refused.value.reason is SessionRefusal.GAME_OPEN


def test_open_lobby_replaces_a_finished_game() -> None:
    """A finished game stays until the next /new, which replaces it (and its match)."""
    session, _ = dealt(Rules(match=MatchKind.FIRST_TO, match_target=3))
    finished, _ = stop(session, actor=Actor(CREATOR), now_ms=T0 + 1)
    assert finished.game is not None and finished.game.phase is Phase.FINISHED
    reopened = _open(finished, now_ms=T0 + 5)
    assert reopened.game is None and reopened.match is None
    assert reopened.lobby is not None and reopened.lobby.creator == 5
    assert (reopened.game_id, reopened.deadline_ms) == ("g2", T0 + 5 + LOBBY_MS)


# --- join and leave ------------------------------------------------------------------------------


def test_join_adds_the_player_in_order_and_sets_their_language() -> None:
    """Each join is kept in order, with the language the player's private messages use; the
    group's language stays for everyone else."""
    session = lobby(language="en")
    session = join(session, user_id=2, name="Bob", language="it", now_ms=T0)
    session = join(session, user_id=3, name="Cara", language="ru", now_ms=T0)
    assert session.lobby is not None
    assert session.lobby.players == ((2, "Bob"), (3, "Cara"))
    assert session.language_of(2) == "it"
    assert session.language_of(3) == "ru"
    assert session.language_of(4) == "en"


def test_join_again_after_leaving_takes_the_language_of_the_new_join() -> None:
    """Someone who left the lobby and joins again in another language is written to in that
    language, and is listed once."""
    session = lobby(language="en")
    session = join(session, user_id=2, name="Bob", language="en", now_ms=T0)
    session = leave(session, 2)
    session = join(session, user_id=2, name="Bob", language="it", now_ms=T0)
    assert session.language_of(2) == "it"
    assert session.player_languages == ((2, "it"),)


def test_join_pushes_the_lobby_deadline_back() -> None:
    """A lobby somebody joins is alive: it expires 30 minutes after the last join."""
    session = lobby(now_ms=T0)
    session = join(session, user_id=2, name="Bob", language="en", now_ms=T0 + 60_000)
    assert session.deadline_ms == T0 + 60_000 + LOBBY_MS


def test_join_is_refused_without_a_lobby() -> None:
    """Join with no lobby open (nothing, or a game) is NO_LOBBY."""
    for session in (None, dealt()[0]):
        with pytest.raises(SessionRefused) as refused:
            join(session, user_id=9, name="Zoe", language="en", now_ms=T0)
        assert refused.value.reason is SessionRefusal.NO_LOBBY


def test_join_twice_is_refused_as_already_joined() -> None:
    session = lobby(players=(2,))
    with pytest.raises(ActionRefused) as refused:
        join(session, user_id=2, name="U2", language="en", now_ms=T0)
    assert refused.value.reason is Refusal.ALREADY_JOINED


def test_join_a_full_lobby_is_refused_as_lobby_full() -> None:
    """``max_players`` is a hard limit of the lobby."""
    session = lobby(Rules(min_players=2, max_players=2), players=(1, 2))
    with pytest.raises(ActionRefused) as refused:
        join(session, user_id=3, name="U3", language="en", now_ms=T0)
    assert refused.value.reason is Refusal.LOBBY_FULL


def test_leave_takes_the_player_out_of_the_lobby() -> None:
    session = leave(lobby(players=(1, 2, 3)), 2)
    assert session.lobby is not None
    assert [uid for uid, _ in session.lobby.players] == [1, 3]


def test_leave_is_refused_for_someone_not_in_the_lobby() -> None:
    with pytest.raises(ActionRefused) as refused:
        leave(lobby(players=(1, 2)), 3)
    assert refused.value.reason is Refusal.NOT_IN_GAME


def test_leave_is_refused_without_a_lobby() -> None:
    with pytest.raises(SessionRefused) as refused:
        leave(dealt()[0], 1)
    assert refused.value.reason is SessionRefusal.NO_LOBBY


# --- start ---------------------------------------------------------------------------------------


def test_start_deals_the_game_the_random_source_decides() -> None:
    """Seats, dealer and hands come from the random source given, nothing else: the same
    seed deals the same game (a retried transaction computes the same change)."""
    session = lobby(players=(1, 2, 3, 4))
    started, events = start(
        session, game_id=GAME, actor=Actor(CREATOR), rng=random.Random(42), now_ms=T0 + 10
    )
    rng = random.Random(42)
    assert session.lobby is not None
    expected, expected_events = new_game(
        session.rules, random_seating(session.lobby.players, rng), rng
    )
    assert started.game == expected
    assert events == tuple(expected_events)
    assert started.lobby is None
    assert sorted(p.user_id for p in expected.players) == [1, 2, 3, 4]


def test_start_with_another_seed_deals_other_hands() -> None:
    first, _ = dealt(seed=1)
    second, _ = dealt(seed=2)
    assert first.game is not None and second.game is not None
    assert [p.hand for p in first.game.players] != [p.hand for p in second.game.players]


def test_start_sets_the_turn_deadline() -> None:
    """The first turn has ``turn_timeout_s`` from the deal."""
    session, _ = dealt(Rules(turn_timeout_s=60), now_ms=T0)
    assert session.deadline_ms == T0 + 60_000


def test_start_without_a_turn_timer_sets_no_deadline() -> None:
    session, _ = dealt(Rules(turn_timeout_s=0))
    assert session.deadline_ms == 0


def test_start_of_a_single_game_makes_no_match() -> None:
    session, _ = dealt(Rules(match=MatchKind.SINGLE))
    assert session.match is None


def test_start_of_a_match_records_its_seats_and_dealer() -> None:
    """Under ``match`` other than single, the first game's seating is the match's."""
    rules = Rules(match=MatchKind.BEST_OF, match_target=3)
    session, _ = dealt(rules)
    game = session.game
    assert game is not None and isinstance(session.match, Match)
    assert session.match.players == tuple((p.user_id, p.name) for p in game.players)
    assert session.match.dealer == game.dealer
    assert session.match.scores == tuple((p.user_id, 0) for p in game.players)
    assert session.match.games == 0


def test_start_is_stale_for_another_game() -> None:
    """A Start button of an older lobby does nothing."""
    with pytest.raises(SessionRefused) as refused:
        start(
            lobby(players=(1, 2, 3)),
            game_id="older",
            actor=Actor(CREATOR),
            rng=random.Random(0),
            now_ms=T0,
        )
    assert refused.value.reason is SessionRefusal.STALE


def test_start_is_stale_once_the_lobby_is_gone() -> None:
    session, _ = dealt()
    with pytest.raises(SessionRefused) as refused:
        start(session, game_id=GAME, actor=Actor(CREATOR), rng=random.Random(0), now_ms=T0)
    assert refused.value.reason is SessionRefusal.STALE


def test_start_by_another_player_asks_whether_they_are_an_admin() -> None:
    """Not the creator, admin status unknown: the bot must ask Telegram first."""
    with pytest.raises(AdminUnknown):
        start(
            lobby(players=(1, 2, 3)),
            game_id=GAME,
            actor=Actor(2, admin=None),
            rng=random.Random(0),
            now_ms=T0,
        )


def test_start_by_the_creator_never_asks_about_admins() -> None:
    session, _ = start(
        lobby(players=(1, 2, 3)),
        game_id=GAME,
        actor=Actor(CREATOR, admin=None),
        rng=random.Random(0),
        now_ms=T0,
    )
    assert session.game is not None


def test_start_by_a_player_who_is_not_an_admin_is_not_allowed() -> None:
    with pytest.raises(SessionRefused) as refused:
        start(
            lobby(players=(1, 2, 3)),
            game_id=GAME,
            actor=Actor(2, admin=False),
            rng=random.Random(0),
            now_ms=T0,
        )
    assert refused.value.reason is SessionRefusal.NOT_ALLOWED


def test_start_by_an_admin_deals() -> None:
    session, _ = start(
        lobby(players=(1, 2, 3)),
        game_id=GAME,
        actor=Actor(9, admin=True),
        rng=random.Random(0),
        now_ms=T0,
    )
    assert session.game is not None and session.lobby is None


def test_start_with_too_few_players_is_refused() -> None:
    """``min_players`` (3 by default) must have joined."""
    session = lobby(players=(1, 2))
    with pytest.raises(ActionRefused) as refused:
        start(session, game_id=GAME, actor=Actor(CREATOR), rng=random.Random(0), now_ms=T0)
    assert refused.value.reason is Refusal.TOO_FEW_PLAYERS


# --- the lobby's clock: a full lobby starts by itself -------------------------------------------


def _joined(session: Session, user_id: int, now_ms: int) -> Session:
    return join(session, user_id=user_id, name=f"U{user_id}", language="en", now_ms=now_ms)


def _tick(session: Session, now_ms: int) -> tuple[Session | None, tuple[object, ...]]:
    return tick(session, now_ms, rng=random.Random(3))


def test_the_chosen_times() -> None:
    """Ten seconds to see a full table coming (and leave); three minutes for the opener."""
    assert (FULL_LOBBY_COUNTDOWN_S, ANY_PLAYER_MAY_START_AFTER_S) == (10, 180)


def test_the_join_that_fills_the_lobby_starts_the_countdown() -> None:
    session = lobby(SMALL, players=(1, 2, 3), now_ms=T0)
    full = _joined(session, 4, T0 + 5_000)
    assert full.lobby is not None and full.lobby.full
    assert full.deadline_ms == T0 + 5_000 + COUNTDOWN_MS
    assert full.lobby_clock is not None and full.lobby_clock.touched_ms == T0 + 5_000


def test_the_clock_deals_a_full_lobby_at_the_end_of_its_countdown_and_not_before() -> None:
    """Dealt as Start would deal it: the same random source gives the same game."""
    full = lobby(SMALL, players=(1, 2, 3, 4), now_ms=T0)
    assert _tick(full, T0 + COUNTDOWN_MS - 1) == (full, ())
    dealt_by_clock, events = _tick(full, T0 + COUNTDOWN_MS)
    by_start, start_events = start(
        full, game_id=GAME, actor=Actor(CREATOR), rng=random.Random(3), now_ms=T0 + COUNTDOWN_MS
    )
    assert dealt_by_clock == by_start and events == start_events
    assert dealt_by_clock.lobby is None and dealt_by_clock.lobby_clock is None
    assert dealt_by_clock.game is not None
    assert sorted(p.user_id for p in dealt_by_clock.game.players) == [1, 2, 3, 4]


def test_a_leave_stops_the_countdown_and_the_expiry_applies_again() -> None:
    """The lobby is no longer full: the clock would close it 30 minutes after it filled (the
    minimum was reached long before, so any player may start it already)."""
    session = lobby(SMALL, players=(1, 2, 3), now_ms=T0)
    full = _joined(session, 4, T0 + WAIT_MS + 1_000)
    left = leave(full, 4)
    assert left.lobby is not None and not left.lobby.full
    assert left.deadline_ms == T0 + WAIT_MS + 1_000 + LOBBY_MS
    after, events = _tick(left, full.deadline_ms)
    assert (after, events) == (left, ()), "no deal when the countdown would have ended"
    closed, _ = _tick(left, left.deadline_ms)
    assert closed is not None and closed.lobby is None and closed.game is None


def test_a_leave_during_the_countdown_by_the_button_of_another_lobby_is_stale() -> None:
    full = lobby(SMALL, players=(1, 2, 3, 4))
    with pytest.raises(SessionRefused) as refused:
        leave(full, 4, game_id="older")
    assert refused.value.reason is SessionRefusal.STALE
    assert leave(full, 4, game_id=GAME).lobby == leave(full, 4).lobby


def test_new_rules_that_fill_the_lobby_start_the_countdown_and_others_stop_it() -> None:
    session = lobby(SMALL, players=(1, 2, 3), now_ms=T0)
    filled = adopt_rules(session, Rules(min_players=2, max_players=3), now_ms=T0 + 7_000)
    assert filled is not None and filled.deadline_ms == T0 + 7_000 + COUNTDOWN_MS
    unfilled = adopt_rules(filled, SMALL, now_ms=T0 + 8_000)
    assert unfilled is not None and unfilled.deadline_ms == T0 + WAIT_MS


def test_the_expiry_still_closes_a_lobby_that_is_not_full() -> None:
    session = lobby(SMALL, players=(1,), now_ms=T0)
    assert session.deadline_ms == T0 + LOBBY_MS
    assert _tick(session, T0 + LOBBY_MS - 1) == (session, ())
    closed, events = _tick(session, T0 + LOBBY_MS)
    assert closed is not None and events == ()
    assert (closed.lobby, closed.game, closed.lobby_clock, closed.deadline_ms) == (
        None,
        None,
        None,
        0,
    )


# --- the lobby's clock: any player may start it after a while ----------------------------------


def _start_by(session: Session, user_id: int, now_ms: int) -> Session:
    started, _ = start(
        session,
        game_id=GAME,
        actor=Actor(user_id, admin=False),
        rng=random.Random(0),
        now_ms=now_ms,
    )
    return started


def test_the_moment_the_minimum_is_reached_is_kept() -> None:
    """Set by the join that reaches the minimum, kept by the joins after it."""
    session = lobby(SMALL, players=(1,), now_ms=T0)
    assert session.lobby_clock == LobbyClock(touched_ms=T0, minimum_reached_ms=0)
    session = _joined(session, 2, T0 + 1_000)
    assert session.lobby_clock == LobbyClock(T0 + 1_000, minimum_reached_ms=T0 + 1_000)
    session = _joined(session, 3, T0 + 2_000)
    assert session.lobby_clock == LobbyClock(T0 + 2_000, minimum_reached_ms=T0 + 1_000)


def test_a_player_who_did_not_open_the_lobby_is_not_allowed_to_start_it_before_the_wait() -> None:
    session = lobby(SMALL, players=(1, 2, 3), now_ms=T0)
    with pytest.raises(SessionRefused) as refused:
        _start_by(session, 2, T0 + WAIT_MS - 1)
    assert refused.value.reason is SessionRefusal.NOT_ALLOWED


def test_any_player_may_start_the_lobby_once_the_wait_is_over() -> None:
    session = lobby(SMALL, players=(1, 2, 3), now_ms=T0)
    started = _start_by(session, 3, T0 + WAIT_MS)
    assert started.game is not None and started.lobby is None


def test_after_the_wait_someone_outside_the_lobby_still_needs_to_be_an_admin() -> None:
    session = lobby(SMALL, players=(1, 2, 3), now_ms=T0)
    with pytest.raises(AdminUnknown):
        start(session, game_id=GAME, actor=Actor(9), rng=random.Random(0), now_ms=T0 + WAIT_MS)
    with pytest.raises(SessionRefused) as refused:
        _start_by(session, 9, T0 + WAIT_MS)
    assert refused.value.reason is SessionRefusal.NOT_ALLOWED


def test_the_creator_and_admins_may_start_it_at_once() -> None:
    session = lobby(SMALL, players=(1, 2), now_ms=T0)
    assert _start_by(session, CREATOR, T0).game is not None
    by_admin, _ = start(
        session, game_id=GAME, actor=Actor(9, admin=True), rng=random.Random(0), now_ms=T0
    )
    assert by_admin.game is not None


def test_dropping_below_the_minimum_starts_the_wait_over() -> None:
    """Two players, one leaves and another joins later: the wait counts from that join."""
    session = lobby(SMALL, players=(1, 2), now_ms=T0)
    session = leave(session, 2)
    assert session.lobby_clock is not None and session.lobby_clock.minimum_reached_ms == 0
    assert session.deadline_ms == T0 + LOBBY_MS
    session = _joined(session, 3, T0 + WAIT_MS)
    with pytest.raises(SessionRefused):
        _start_by(session, 3, T0 + WAIT_MS + 1)
    assert _start_by(session, 3, T0 + 2 * WAIT_MS).game is not None


def test_the_clock_shows_when_any_player_may_start_and_the_lobby_lives_on() -> None:
    """The moment any player may start it is the lobby's deadline: the clock touches the
    lobby then (its message is shown again), and the lobby closes 30 minutes later."""
    session = lobby(SMALL, players=(1, 2), now_ms=T0)
    session = _joined(session, 3, T0 + 60_000)
    assert session.deadline_ms == T0 + WAIT_MS
    assert _tick(session, T0 + WAIT_MS - 1) == (session, ())
    opened, events = _tick(session, T0 + WAIT_MS)
    assert opened is not None and events == ()
    assert opened.lobby == session.lobby
    assert opened.lobby_clock == LobbyClock(T0 + WAIT_MS, minimum_reached_ms=T0)
    assert opened.deadline_ms == T0 + WAIT_MS + LOBBY_MS
    closed, _ = _tick(opened, T0 + WAIT_MS + LOBBY_MS)
    assert closed is not None and closed.lobby is None


def test_a_late_clock_closes_a_lobby_whose_time_is_up_at_once() -> None:
    """The clock was away longer than the lobby's life after the wait: it closes it."""
    session = lobby(SMALL, players=(1, 2), now_ms=T0)
    closed, _ = _tick(session, T0 + WAIT_MS + LOBBY_MS)
    assert closed is not None and closed.lobby is None


def test_a_lobby_stored_without_a_clock_reads_it_from_its_deadline() -> None:
    """A document stored before lobbies had a clock: the last touch 30 minutes before the
    deadline, the minimum counted from then; a join gives it a clock."""
    stored = dataclasses.replace(
        lobby(SMALL, players=(1, 2), now_ms=T0), lobby_clock=None, deadline_ms=T0 + LOBBY_MS
    )
    with pytest.raises(SessionRefused):
        _start_by(stored, 2, T0 + WAIT_MS - 1)
    assert _start_by(stored, 2, T0 + WAIT_MS).game is not None
    joined = _joined(stored, 3, T0 + 5)
    assert joined.lobby_clock == LobbyClock(T0 + 5, minimum_reached_ms=T0)


# --- cancel --------------------------------------------------------------------------------------


def test_cancel_closes_the_lobby_without_a_game() -> None:
    session = cancel(lobby(players=(1, 2)), game_id=GAME, actor=Actor(CREATOR))
    assert (session.lobby, session.game, session.deadline_ms) == (None, None, 0)
    assert not session.in_progress


def test_cancel_of_another_lobby_is_stale() -> None:
    with pytest.raises(SessionRefused) as refused:
        cancel(lobby(players=(1, 2)), game_id="older", actor=Actor(CREATOR))
    assert refused.value.reason is SessionRefusal.STALE


def test_cancel_by_someone_else_needs_an_admin() -> None:
    session = lobby(players=(1, 2))
    with pytest.raises(AdminUnknown):
        cancel(session, game_id=GAME, actor=Actor(2))
    with pytest.raises(SessionRefused) as refused:
        cancel(session, game_id=GAME, actor=Actor(2, admin=False))
    assert refused.value.reason is SessionRefusal.NOT_ALLOWED
    assert cancel(session, game_id=GAME, actor=Actor(2, admin=True)).lobby is None


# --- the group's rules and language --------------------------------------------------------------


def test_adopt_rules_gives_an_open_lobby_the_new_rules() -> None:
    rules = Rules(turn_timeout_s=30, max_players=5)
    session = adopt_rules(lobby(players=(1, 2, 3)), rules, now_ms=T0)
    assert session is not None and session.lobby is not None
    assert session.lobby.rules == rules
    assert [uid for uid, _ in session.lobby.players] == [1, 2, 3]


def test_adopt_rules_leaves_out_players_beyond_the_new_limit() -> None:
    """The first to join keep their places."""
    session = adopt_rules(
        lobby(players=(1, 2, 3, 4, 5)), Rules(min_players=2, max_players=3), now_ms=T0
    )
    assert session is not None and session.lobby is not None
    assert [uid for uid, _ in session.lobby.players] == [1, 2, 3]


def test_adopt_rules_does_not_touch_a_game_or_an_empty_group() -> None:
    """Only an open lobby takes new rules: a game keeps the rules it was dealt with."""
    game, _ = dealt()
    assert adopt_rules(game, Rules(turn_timeout_s=30), now_ms=T0) is game
    assert adopt_rules(None, Rules(), now_ms=T0) is None


def test_adopt_rules_returns_the_same_session_when_the_rules_are_the_same() -> None:
    """Choosing the value already chosen changes nothing: the very same session is returned,
    so the store writes nothing and the lobby message is not edited."""
    session = lobby(Rules(turn_timeout_s=30), players=(1, 2))
    assert adopt_rules(session, Rules(turn_timeout_s=30), now_ms=T0) is session


def test_set_language_switches_a_lobby_and_a_game() -> None:
    assert set_language(lobby(language="en"), "it") == dataclasses.replace(
        lobby(language="en"), language="it"
    )
    game, _ = dealt()
    changed = set_language(game, "ru")
    assert changed is not None and changed.language == "ru"
    assert changed.game == game.game


def test_set_language_returns_the_same_session_when_nothing_changes() -> None:
    """Same language, no session, or nothing in progress: the very same object (no write)."""
    session = lobby(language="it")
    assert set_language(session, "it") is session
    assert set_language(None, "it") is None
    finished, _ = stop(dealt()[0], actor=Actor(CREATOR), now_ms=T0)
    assert set_language(finished, "ru") is finished


def test_require_settings_manager_lets_the_lobby_creator_through_without_asking() -> None:
    require_settings_manager(lobby(), Actor(CREATOR, admin=None))


def test_require_settings_manager_asks_about_anyone_else() -> None:
    """Outside an open lobby, even the game's creator needs to be an admin to change the
    group's rules."""
    game, _ = dealt()
    for session, user in ((lobby(), 2), (game, CREATOR), (None, CREATOR)):
        with pytest.raises(AdminUnknown):
            require_settings_manager(session, Actor(user))
        with pytest.raises(SessionRefused) as refused:
            require_settings_manager(session, Actor(user, admin=False))
        assert refused.value.reason is SessionRefusal.NOT_ALLOWED
        require_settings_manager(session, Actor(user, admin=True))


# --- finding the lobby or the game ---------------------------------------------------------------


def test_lobby_of_names_no_lobby_for_a_command_and_stale_for_a_button() -> None:
    game, _ = dealt()
    for session in (None, game):
        with pytest.raises(SessionRefused) as typed:
            lobby_of(session)
        assert typed.value.reason is SessionRefusal.NO_LOBBY
        with pytest.raises(SessionRefused) as pressed:
            lobby_of(session, GAME)
        assert pressed.value.reason is SessionRefusal.STALE
    open_one = lobby()
    assert lobby_of(open_one, GAME) == (open_one, open_one.lobby)


def test_game_of_names_no_game_for_a_command_and_stale_for_a_button() -> None:
    for session in (None, lobby()):
        with pytest.raises(SessionRefused) as typed:
            game_of(session, None)
        assert typed.value.reason is SessionRefusal.NO_GAME
        with pytest.raises(SessionRefused) as pressed:
            game_of(session, GAME)
        assert pressed.value.reason is SessionRefusal.STALE
    game, _ = dealt()
    with pytest.raises(SessionRefused) as other:
        game_of(game, "older")
    assert other.value.reason is SessionRefusal.STALE
    assert game_of(game, GAME) == (game, game.game)


def test_in_progress_refuses_a_finished_game() -> None:
    finished, _ = stop(dealt()[0], actor=Actor(CREATOR), now_ms=T0)
    for session in (None, finished):
        with pytest.raises(SessionRefused) as refused:
            in_progress(session)
        assert refused.value.reason is SessionRefusal.NO_GAME
    open_one = lobby()
    assert in_progress(open_one) is open_one
