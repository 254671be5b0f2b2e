"""The game's transitions: a player's action, leaving, /stop, /kick, a person gone from the
group, the next game of a match, and picking cards on the hand keyboard."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

import pytest

from tests.engine.helpers import cards, state_with
from tgcheat.engine.actions import Leave, Play
from tgcheat.engine.cards import Rank
from tgcheat.engine.events import GameEnded, PassVoted, PlayerLeft
from tgcheat.engine.game import ActionRefused, Refusal, apply, new_game
from tgcheat.engine.match import next_seating
from tgcheat.engine.rules import MatchKind, Passing, Rules
from tgcheat.engine.state import EndReason, GameState, Phase
from tgcheat.table.chronicle import Notice, NoticeKind
from tgcheat.table.commands import (
    Believe,
    CallCheat,
    GameCommand,
    PassTurn,
    PlayCards,
    StopGame,
    VoteOnPass,
)
from tgcheat.table.refusals import AdminUnknown, SessionRefusal, SessionRefused
from tgcheat.table.session import Session
from tgcheat.table.transitions import (
    Actor,
    Events,
    act,
    kick,
    leave_table,
    next_game,
    pick,
    remove,
    stop,
)

from .builders import GAME, T0, at_table, lobby, match_for, play

TURN_MS = 90_000


def _three_players(rules: Rules | None = None) -> GameState:
    """Ann (100) to play aces, Bob (101) and Cara (102); the rest of the deck in the pile."""
    return state_with(
        [cards("A♣", "A♦", "5♠", "K♣"), cards("2♣", "7♦"), cards("3♣", "8♦")], rules=rules
    )


# --- act -----------------------------------------------------------------------------------------


def test_act_applies_the_engine_action_and_starts_the_next_turn_timer() -> None:
    """A play through the table is the engine's ``apply`` of that play, and the next player
    gets a whole turn from now."""
    state = _three_players()
    session = at_table(state, deadline_ms=T0 + TURN_MS)
    after, events = act(
        session, game_id=GAME, command=play(state, 0, cards("A♣", "A♦")), now_ms=T0 + 5_000
    )
    expected, expected_events = apply(state, Play(0, cards("A♣", "A♦"), Rank.ACE))
    assert events == tuple(expected_events)
    assert after == dataclasses.replace(
        session,
        game=expected,
        deadline_ms=T0 + 5_000 + TURN_MS,
        changed_ms=T0 + 5_000,
        tally=after.tally,
        story=after.story,
        told=after.told,
    )
    assert after.tally.of(0).plays == 1 and after.tally.of(0).bluffs == 0
    assert after.notice is None
    # The next player's hand comes back as a new message (their turn); the table stays put.
    assert after.told.hand_epoch(expected.players[expected.turn].user_id) == 1
    assert after.told.table_epoch == 0 and after.told.lines == ()


def test_act_for_a_typed_command_takes_the_current_game() -> None:
    state = _three_players()
    after, _ = act(at_table(state), game_id=None, command=play(state, 0, cards("5♠")), now_ms=T0)
    assert after.game is not None and after.game.plays == 1


def test_act_keeps_the_deadline_when_nobody_new_is_waited_for() -> None:
    """A yes vote that does not settle the request to pass leaves the voters' timer running."""
    state = _three_players(Rules(passing=Passing.VOTE))
    session, _ = act(
        at_table(state, deadline_ms=T0 + TURN_MS),
        game_id=GAME,
        command=PassTurn(100, 0),
        now_ms=T0 + 1_000,
    )
    assert session.deadline_ms == T0 + 1_000 + TURN_MS
    voted, events = act(
        session, game_id=GAME, command=VoteOnPass(101, 0, yes=True), now_ms=T0 + 4_000
    )
    assert events == (PassVoted(1, yes=True),)
    assert voted.game is not None and voted.game.votes_yes == (1,)
    assert voted.deadline_ms == T0 + 1_000 + TURN_MS


def test_act_without_a_game_is_refused() -> None:
    """A typed command with no game is NO_GAME; a button with no game is STALE."""
    command = PassTurn(100, 0)
    for session in (None, lobby(players=(1, 2))):
        with pytest.raises(SessionRefused) as typed:
            act(session, game_id=None, command=command, now_ms=T0)
        assert typed.value.reason is SessionRefusal.NO_GAME
        with pytest.raises(SessionRefused) as pressed:
            act(session, game_id=GAME, command=command, now_ms=T0)
        assert pressed.value.reason is SessionRefusal.STALE


def test_act_on_a_button_of_another_game_is_stale() -> None:
    state = _three_players()
    with pytest.raises(SessionRefused) as refused:
        act(at_table(state), game_id="older", command=play(state, 0, cards("5♠")), now_ms=T0)
    assert refused.value.reason is SessionRefusal.STALE


def test_act_on_a_keyboard_drawn_at_another_play_is_stale() -> None:
    """The hand keyboard names the play count it was drawn at; once the game moved on it is
    refused before the engine is asked."""
    state = _three_players()
    session, _ = act(at_table(state), game_id=GAME, command=play(state, 0, cards("5♠")), now_ms=T0)
    stale = PlayCards(101, 0, Counter({Rank.TWO: 1}), Rank.TWO)
    with pytest.raises(SessionRefused) as refused:
        act(session, game_id=GAME, command=stale, now_ms=T0)
    assert refused.value.reason is SessionRefusal.STALE


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        (CallCheat(999, 1, T0), Refusal.NOT_IN_GAME),
        (PlayCards(100, 0, Counter({Rank.QUEEN: 1}), Rank.ACE), Refusal.CARDS_NOT_IN_HAND),
        (PlayCards(101, 0, Counter({Rank.TWO: 1}), Rank.ACE), Refusal.NOT_YOUR_TURN),
        (PlayCards(100, 0, Counter({Rank.KING: 1}), Rank.KING), Refusal.WRONG_RANK),
        (CallCheat(101, 1, T0), Refusal.NO_SUCH_CLAIM),
        (Believe(101, 1), Refusal.NO_SUCH_CLAIM),
        (PassTurn(100, 0), Refusal.PASSING_OFF),
    ],
)
def test_act_passes_the_engine_refusals_on(command: GameCommand, reason: Refusal) -> None:
    """Refusals the engine decides come out of ``act`` as the engine's, unchanged."""
    state = _three_players()
    with pytest.raises(ActionRefused) as refused:
        act(at_table(state), game_id=GAME, command=command, now_ms=T0)
    assert refused.value.reason is reason


def test_act_on_a_finished_game_is_game_over() -> None:
    state = _three_players()
    finished, _ = act(at_table(state), game_id=GAME, command=StopGame(), now_ms=T0)
    with pytest.raises(ActionRefused) as refused:
        act(finished, game_id=GAME, command=play(state, 0, cards("5♠")), now_ms=T0)
    assert refused.value.reason is Refusal.GAME_OVER


def _match_game(target: int = 3) -> GameState:
    """Two players of a first_to match; Ann (100) holds her last card."""
    rules = Rules(min_players=2, match=MatchKind.FIRST_TO, match_target=target)
    return state_with([cards("A♣"), cards("2♣", "3♣")], rules=rules)


def _won_by_ann(target: int = 3) -> Session:
    """Ann played her last card and Bob believed her: the game is won, the match goes on
    unless ``target`` is 1."""
    state = _match_game(target)
    session = at_table(state, deadline_ms=T0 + TURN_MS, match=match_for(state))
    session, _ = act(session, game_id=GAME, command=play(state, 0, cards("A♣")), now_ms=T0)
    session, _ = act(session, game_id=GAME, command=Believe(101, 1), now_ms=T0 + 1)
    return session


def test_act_that_ends_a_game_of_a_match_scores_it_and_stops_the_clock() -> None:
    session = _won_by_ann()
    assert session.game is not None and session.game.phase is Phase.FINISHED
    assert session.match is not None
    assert session.match.scores == ((100, 1), (101, 0))
    assert (session.match.games, session.match.finished) == (1, False)
    assert session.deadline_ms == 0


# --- leave_table and stop ------------------------------------------------------------------------


def test_leave_table_in_a_lobby_leaves_the_lobby() -> None:
    session, events = leave_table(lobby(players=(1, 2, 3)), 2, T0)
    assert session.lobby is not None
    assert [uid for uid, _ in session.lobby.players] == [1, 3]
    assert events == ()


def test_leave_table_in_a_game_sets_the_hand_aside() -> None:
    state = _three_players()
    session, events = leave_table(at_table(state), 101, T0)
    assert session.game is not None
    assert session.game.players[1].left and session.game.players[1].hand == ()
    assert set(cards("2♣", "7♦")) <= set(session.game.set_aside)
    assert events == (PlayerLeft(1),)


def test_leave_table_with_nothing_open_is_no_game() -> None:
    with pytest.raises(SessionRefused) as refused:
        leave_table(None, 1, T0)
    assert refused.value.reason is SessionRefusal.NO_GAME


def test_stop_in_a_lobby_closes_it() -> None:
    session, events = stop(lobby(players=(1, 2)), actor=Actor(1), now_ms=T0)
    assert (session.lobby, session.game, session.deadline_ms, events) == (None, None, 0, ())


def test_stop_in_a_game_ends_it_without_a_winner() -> None:
    state = _three_players()
    session, events = stop(
        at_table(state, deadline_ms=T0 + TURN_MS), actor=Actor(7, admin=True), now_ms=T0
    )
    game = session.game
    assert game is not None and game.phase is Phase.FINISHED and game.result is not None
    assert (game.result.reason, game.result.winner) == (EndReason.STOPPED, None)
    assert events == (GameEnded(game.result),)
    assert session.deadline_ms == 0


def test_stop_of_a_game_of_a_match_ends_the_match_without_a_winner() -> None:
    state = _match_game()
    session, _ = stop(at_table(state, match=match_for(state)), actor=Actor(100), now_ms=T0)
    assert session.match is not None
    assert (session.match.finished, session.match.winner, session.match.games) == (True, None, 1)


def test_stop_is_for_the_creator_or_an_admin() -> None:
    """The creator needs no admin check; anyone else is asked about, then refused."""
    session = at_table(_three_players())
    stopped, _ = stop(session, actor=Actor(100, admin=None), now_ms=T0)
    assert stopped.game is not None and stopped.game.phase is Phase.FINISHED
    with pytest.raises(AdminUnknown):
        stop(session, actor=Actor(101), now_ms=T0)
    with pytest.raises(SessionRefused) as refused:
        stop(session, actor=Actor(101, admin=False), now_ms=T0)
    assert refused.value.reason is SessionRefusal.NOT_ALLOWED


def test_stop_with_nothing_in_progress_is_no_game() -> None:
    finished, _ = stop(at_table(_three_players()), actor=Actor(100), now_ms=T0)
    for session in (None, finished):
        with pytest.raises(SessionRefused) as refused:
            stop(session, actor=Actor(100, admin=True), now_ms=T0)
        assert refused.value.reason is SessionRefusal.NO_GAME


# --- remove and kick -----------------------------------------------------------------------------


def test_remove_of_someone_not_at_the_table_changes_nothing() -> None:
    """Not in the lobby, not in the game, already gone, or the game over: the very same
    session, no events."""
    state = _three_players()
    in_game = at_table(state)
    left, _ = remove(in_game, 101, T0)
    finished, _ = stop(in_game, actor=Actor(100), now_ms=T0)
    open_lobby = lobby(players=(1, 2))
    for session, user_id in (
        (open_lobby, 3),
        (in_game, 999),
        (left, 101),
        (finished, 101),
    ):
        assert remove(session, user_id, T0) == (session, ())
        assert remove(session, user_id, T0)[0] is session
    assert remove(None, 1, T0) == (None, ())


def test_remove_takes_a_person_out_of_the_lobby() -> None:
    session, events = remove(lobby(players=(1, 2, 3)), 1, T0)
    assert session is not None and session.lobby is not None
    assert [uid for uid, _ in session.lobby.players] == [2, 3]
    assert events == ()


def test_remove_takes_a_player_out_of_the_game() -> None:
    """As a leave: the engine's ``Leave`` of their seat."""
    state = _three_players()
    session, events = remove(at_table(state), 102, T0)
    expected, expected_events = apply(state, Leave(2))
    assert session is not None and session.game == expected
    assert events == tuple(expected_events)


def _absent(state: GameState, *seats: int) -> GameState:
    """The same game with the players at ``seats`` having let a turn run out."""
    players = tuple(
        dataclasses.replace(player, timeouts=1) if seat in seats else player
        for seat, player in enumerate(state.players)
    )
    return dataclasses.replace(state, players=players)


ADMIN = Actor(7, admin=True)


def test_kick_by_reply_removes_the_author_of_the_message() -> None:
    session, _ = kick(
        at_table(_three_players()), target=101, seat_number="", actor=ADMIN, now_ms=T0
    )
    assert session is not None and session.game is not None
    assert [p.left for p in session.game.players] == [False, True, False]
    assert session.notice == Notice(NoticeKind.KICKED, 1)


def test_kick_by_seat_number_counts_seats_from_one() -> None:
    session, events = kick(
        at_table(_three_players()), target=None, seat_number="3", actor=ADMIN, now_ms=T0
    )
    assert session is not None and session.game is not None
    assert [p.left for p in session.game.players] == [False, False, True]
    assert events == (PlayerLeft(2),)


@pytest.mark.parametrize("seat_number", ["", "x", "0", "4", "-1", "2.0"])
def test_kick_without_a_target_is_refused(seat_number: str) -> None:
    """Neither a reply nor the number of a seat at the table (three seats: 1 to 3)."""
    with pytest.raises(SessionRefused) as refused:
        kick(
            at_table(_three_players()),
            target=None,
            seat_number=seat_number,
            actor=ADMIN,
            now_ms=T0,
        )
    assert refused.value.reason is SessionRefusal.NO_KICK_TARGET


def test_kick_with_a_digit_that_is_no_number_is_refused() -> None:
    """``/kick ²``: a character Python calls a digit but ``int`` cannot read is no seat
    number either (not an exception out of the transition)."""
    with pytest.raises(SessionRefused) as refused:
        kick(at_table(_three_players()), target=None, seat_number="²", actor=ADMIN, now_ms=T0)
    assert refused.value.reason is SessionRefusal.NO_KICK_TARGET


def test_kick_of_someone_not_playing_is_refused() -> None:
    """A stranger, or a player who already left (by reply or by seat number)."""
    session, _ = remove(at_table(_three_players()), 101, T0)
    assert session is not None
    for target, seat_number in ((999, ""), (101, ""), (None, "2")):
        with pytest.raises(SessionRefused) as refused:
            kick(session, target=target, seat_number=seat_number, actor=ADMIN, now_ms=T0)
        assert refused.value.reason is SessionRefusal.NOT_A_PLAYER


def test_kick_is_for_the_creator_or_an_admin() -> None:
    session = at_table(_absent(_three_players(), 2))
    with pytest.raises(AdminUnknown):
        kick(session, target=102, seat_number="", actor=Actor(101), now_ms=T0)
    with pytest.raises(SessionRefused) as refused:
        kick(session, target=102, seat_number="", actor=Actor(101, admin=False), now_ms=T0)
    assert refused.value.reason is SessionRefusal.NOT_ALLOWED


def test_the_creator_kicks_an_absent_player_without_being_an_admin() -> None:
    """Bob let his turn run out and has not acted since: Ann, who opened the game, removes
    him; nobody asks Telegram whether she is an admin."""
    session, events = kick(
        at_table(_absent(_three_players(), 1)),
        target=101,
        seat_number="",
        actor=Actor(100, admin=None),
        now_ms=T0,
    )
    assert session is not None and session.game is not None
    assert session.game.players[1].left
    assert events == (PlayerLeft(1),)


def test_the_creator_may_not_kick_a_player_who_is_there() -> None:
    """Bob has missed no turn: Ann, who opened the game, may remove him only as an admin of
    the group (Telegram is asked); else she is told why."""
    session = at_table(_three_players())
    with pytest.raises(AdminUnknown):
        kick(session, target=101, seat_number="", actor=Actor(100), now_ms=T0)
    with pytest.raises(SessionRefused) as refused:
        kick(session, target=None, seat_number="2", actor=Actor(100, admin=False), now_ms=T0)
    assert refused.value.reason is SessionRefusal.KICK_NOT_ABSENT
    kicked, _ = kick(session, target=101, seat_number="", actor=Actor(100, admin=True), now_ms=T0)
    assert kicked is not None and kicked.game is not None and kicked.game.players[1].left


def test_an_absent_player_who_acted_again_is_no_longer_absent() -> None:
    """Bob's turn ran out, then he played: Ann, who opened the game, may not remove him."""
    state = _absent(state_with([cards("2♣"), cards("A♦", "3♦"), cards("3♣")], turn=1), 1)
    session, _ = act(at_table(state), game_id=GAME, command=play(state, 1, cards("A♦")), now_ms=T0)
    with pytest.raises(SessionRefused) as refused:
        kick(session, target=101, seat_number="", actor=Actor(100, admin=False), now_ms=T0)
    assert refused.value.reason is SessionRefusal.KICK_NOT_ABSENT


def test_a_kick_that_leaves_one_player_stops_the_game_without_a_winner() -> None:
    """Bob and Cara are absent: Ann kicks Bob (the game goes on), then Cara. A leave would make
    Ann the winner; the kick stops the game instead, and the match ends without a winner."""
    state = _absent(_three_players(), 1, 2)
    session: Session | None = at_table(state, deadline_ms=T0 + TURN_MS, match=match_for(state))
    session, _ = kick(session, target=101, seat_number="", actor=Actor(100), now_ms=T0)
    session, events = kick(session, target=None, seat_number="3", actor=Actor(100), now_ms=T0)
    assert session is not None and session.game is not None
    result = session.game.result
    assert result is not None and (result.reason, result.winner) == (EndReason.STOPPED, None)
    assert events == (GameEnded(result),)
    assert session.notice == Notice(NoticeKind.KICKED, 2)
    assert session.match is not None
    assert (session.match.finished, session.match.winner, session.match.scores) == (
        True,
        None,
        ((100, 0), (101, 0), (102, 0)),
    )
    assert session.deadline_ms == 0


def test_an_admin_kick_that_leaves_one_player_stops_the_game_too() -> None:
    state = _match_game()
    session, _ = kick(at_table(state), target=100, seat_number="", actor=ADMIN, now_ms=T0)
    assert session is not None and session.game is not None and session.game.result is not None
    assert (session.game.result.reason, session.game.result.winner) == (EndReason.STOPPED, None)


def test_a_leave_that_leaves_one_player_still_makes_them_the_winner() -> None:
    """Leaving is each player's own choice, the group's too: the last one at the table wins."""
    state = _match_game()
    for leaving in (
        lambda session: leave_table(session, 101, T0),
        lambda session: remove(session, 101, T0),
    ):
        session, _ = leaving(at_table(state))
        assert session is not None and session.game is not None
        result = session.game.result
        assert result is not None and (result.reason, result.winner) == (EndReason.LAST_PLAYER, 0)


def test_kick_in_a_lobby_by_reply_removes_the_person() -> None:
    """Before the deal the creator may remove anyone: there is no game to win yet."""
    session, events = kick(
        lobby(players=(1, 2, 3)), target=3, seat_number="", actor=Actor(1), now_ms=T0
    )
    assert session is not None and session.lobby is not None
    assert [uid for uid, _ in session.lobby.players] == [1, 2]
    assert events == ()


def test_kick_in_a_lobby_by_number_counts_the_lobby_list_from_one() -> None:
    session, events = kick(
        lobby(players=(4, 5, 6)), target=None, seat_number="2", actor=Actor(1), now_ms=T0
    )
    assert session is not None and session.lobby is not None
    assert [uid for uid, _ in session.lobby.players] == [4, 6]
    assert events == ()
    for seat_number in ("0", "4", "x"):
        with pytest.raises(SessionRefused) as refused:
            kick(
                lobby(players=(4, 5, 6)),
                target=None,
                seat_number=seat_number,
                actor=Actor(1),
                now_ms=T0,
            )
        assert refused.value.reason is SessionRefusal.NO_KICK_TARGET


def test_kick_in_a_lobby_of_someone_not_in_it_is_refused() -> None:
    with pytest.raises(SessionRefused) as refused:
        kick(lobby(players=(1, 2)), target=3, seat_number="", actor=Actor(1), now_ms=T0)
    assert refused.value.reason is SessionRefusal.NOT_A_PLAYER


def test_kick_with_nothing_in_progress_is_no_game() -> None:
    with pytest.raises(SessionRefused) as refused:
        kick(None, target=1, seat_number="", actor=Actor(1, admin=True), now_ms=T0)
    assert refused.value.reason is SessionRefusal.NO_GAME


# --- next_game -----------------------------------------------------------------------------------


def _next(session: Session, actor: Actor, game_id: str = GAME) -> tuple[Session, Events]:
    return next_game(
        session,
        game_id=game_id,
        actor=actor,
        new_game_id="g2",
        rng=random.Random(3),
        now_ms=T0 + 10_000,
    )


def test_next_game_deals_the_same_seats_with_the_dealer_one_on() -> None:
    session = _won_by_ann()
    match = session.match
    assert match is not None and session.game is not None
    after, events = _next(session, Actor(101))
    rng = random.Random(3)
    expected, expected_events = new_game(match.rules, next_seating(match), rng)
    assert after.game == expected
    assert events == tuple(expected_events)
    assert [p.user_id for p in expected.players] == [100, 101]
    assert expected.dealer == (session.game.dealer + 1) % 2
    assert after.game_id == "g2"
    assert after.match == match
    assert after.deadline_ms == T0 + 10_000 + TURN_MS


def test_next_game_by_an_admin_outside_the_match() -> None:
    after, _ = _next(_won_by_ann(), Actor(7, admin=True))
    assert after.game is not None and after.game.phase is Phase.PLAYING


def test_next_game_by_someone_outside_the_match_is_not_in_game() -> None:
    session = _won_by_ann()
    with pytest.raises(AdminUnknown):
        _next(session, Actor(7))
    with pytest.raises(ActionRefused) as refused:
        _next(session, Actor(7, admin=False))
    assert refused.value.reason is Refusal.NOT_IN_GAME


def test_next_game_is_stale_for_another_game() -> None:
    with pytest.raises(SessionRefused) as refused:
        _next(_won_by_ann(), Actor(100), game_id="older")
    assert refused.value.reason is SessionRefusal.STALE


def test_next_game_is_stale_while_the_game_is_played() -> None:
    state = _match_game()
    with pytest.raises(SessionRefused) as refused:
        _next(at_table(state, match=match_for(state)), Actor(100))
    assert refused.value.reason is SessionRefusal.STALE


def test_next_game_is_stale_once_the_match_is_over() -> None:
    """first_to_1: Ann's win ends the match."""
    session = _won_by_ann(target=1)
    assert session.match is not None and session.match.winner == 100
    with pytest.raises(SessionRefused) as refused:
        _next(session, Actor(100))
    assert refused.value.reason is SessionRefusal.STALE


def test_next_game_is_stale_after_a_single_game() -> None:
    finished, _ = stop(at_table(_three_players()), actor=Actor(100), now_ms=T0)
    with pytest.raises(SessionRefused) as refused:
        _next(finished, Actor(100))
    assert refused.value.reason is SessionRefusal.STALE


def test_next_game_with_nothing_stored_is_stale() -> None:
    with pytest.raises(SessionRefused) as refused:
        next_game(
            None, game_id=GAME, actor=Actor(1), new_game_id="g2", rng=random.Random(0), now_ms=T0
        )
    assert refused.value.reason is SessionRefusal.STALE


# --- pick ----------------------------------------------------------------------------------------


def _pick(
    session: Session,
    rank: Rank | None,
    selected: Counter[Rank] | None = None,
    *,
    user_id: int = 100,
    plays: int = 0,
    game_id: str = GAME,
) -> Counter[Rank]:
    same, game, seat, chosen = pick(
        session,
        game_id=game_id,
        user_id=user_id,
        plays=plays,
        selected=selected or Counter(),
        rank=rank,
    )
    # The selection is kept in the session, for the player's hand to show; nothing else
    # changes.
    assert dataclasses.replace(same, picks=session.picks) == session and game is session.game
    codes = "".join(rank.code for rank in sorted(chosen.elements()))
    assert same.picked(user_id) == (codes if plays == game.plays else "")
    assert game.players[seat].user_id == user_id
    return chosen


def test_pick_adds_one_card_of_the_rank_tapped() -> None:
    session = at_table(_three_players())
    assert _pick(session, Rank.ACE) == Counter({Rank.ACE: 1})
    assert _pick(session, Rank.ACE, Counter({Rank.ACE: 1})) == Counter({Rank.ACE: 2})
    assert _pick(session, Rank.FIVE, Counter({Rank.ACE: 1})) == Counter({Rank.ACE: 1, Rank.FIVE: 1})


def test_pick_beyond_the_cards_held_is_no_more_of_rank() -> None:
    """Ann holds two aces."""
    with pytest.raises(SessionRefused) as refused:
        _pick(at_table(_three_players()), Rank.ACE, Counter({Rank.ACE: 2}))
    assert refused.value.reason is SessionRefusal.NO_MORE_OF_RANK


def test_pick_beyond_the_play_limit_is_bad_card_count() -> None:
    """``max_cards=2``: a third card is refused."""
    session = at_table(_three_players(Rules(max_cards=2)))
    with pytest.raises(ActionRefused) as refused:
        _pick(session, Rank.FIVE, Counter({Rank.ACE: 2}))
    assert refused.value.reason is Refusal.BAD_CARD_COUNT


def test_pick_on_a_keyboard_of_another_play_or_turn_is_stale() -> None:
    session = at_table(_three_players())
    for user_id, plays, game_id in ((100, 1, GAME), (101, 0, GAME), (100, 0, "older")):
        with pytest.raises(SessionRefused) as refused:
            _pick(session, Rank.TWO, user_id=user_id, plays=plays, game_id=game_id)
        assert refused.value.reason is SessionRefusal.STALE


def test_pick_by_someone_not_playing_is_not_in_game() -> None:
    with pytest.raises(ActionRefused) as refused:
        _pick(at_table(_three_players()), Rank.ACE, user_id=999)
    assert refused.value.reason is Refusal.NOT_IN_GAME


def test_pick_without_a_rank_clears_the_selection() -> None:
    session = at_table(_three_players())
    assert _pick(session, None, Counter({Rank.ACE: 2})) == Counter()
