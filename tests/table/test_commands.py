"""In-game commands as the table receives them, turned into the engine's actions for the game
as it is now (``to_action``): the seat from the user id, the cards from the ranks picked."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.engine.helpers import cards, state_with
from tests.table.builders import at_table
from tgcheat.engine.actions import Accept, Challenge, Leave, Pass, PassVote, Play, Stop
from tgcheat.engine.cards import Rank
from tgcheat.engine.game import ActionRefused, Refusal
from tgcheat.engine.state import GameState
from tgcheat.table.access import played_by
from tgcheat.table.commands import (
    Believe,
    CallCheat,
    GameCommand,
    LeaveGame,
    PassTurn,
    PlayCards,
    StopGame,
    VoteOnPass,
    seat_of,
    to_action,
)
from tgcheat.table.refusals import SessionRefusal, SessionRefused


def _game(plays: int = 4) -> GameState:
    """Bob (101, seat 1) to play with two aces (A♣ A♥) and 9♠, at play count ``plays``."""
    return state_with(
        [cards("2♣", "7♦"), cards("A♥", "A♣", "9♠"), cards("3♣", "8♦")], turn=1, plays=plays
    )


@pytest.mark.parametrize(
    ("command", "action"),
    [
        (CallCheat(102, 3, 1234), Challenge(2, 3, 1234)),
        (Believe(100, 4), Accept(0, 4)),
        (PassTurn(101, 4), Pass(1)),
        (VoteOnPass(102, 4, yes=False), PassVote(2, False)),
        (LeaveGame(100), Leave(0)),
        (StopGame(), Stop()),
    ],
)
def test_to_action_finds_the_seat_of_the_user(command: GameCommand, action: object) -> None:
    assert to_action(_game(), command) == action


def test_to_action_plays_the_lowest_cards_of_each_rank_picked() -> None:
    """Suits never matter: of two aces the one with the lower number is played."""
    command = PlayCards(101, 4, Counter({Rank.ACE: 1, Rank.NINE: 1}), Rank.TWO)
    assert to_action(_game(), command) == Play(1, cards("A♣", "9♠"), Rank.TWO)


def test_to_action_of_more_cards_than_held_is_cards_not_in_hand() -> None:
    command = PlayCards(101, 4, Counter({Rank.ACE: 3}), Rank.ACE)
    with pytest.raises(ActionRefused) as refused:
        to_action(_game(), command)
    assert refused.value.reason is Refusal.CARDS_NOT_IN_HAND


@pytest.mark.parametrize(
    "command",
    [
        PlayCards(101, 3, Counter({Rank.ACE: 1}), Rank.ACE),
        PassTurn(101, 5),
        VoteOnPass(102, 3, yes=True),
    ],
)
def test_to_action_of_a_button_of_another_play_count_is_stale(command: GameCommand) -> None:
    with pytest.raises(SessionRefused) as refused:
        to_action(_game(plays=4), command)
    assert refused.value.reason is SessionRefusal.STALE


def test_to_action_by_someone_not_playing_is_not_in_game() -> None:
    """Checked before the play count: a stranger's press is not even stale."""
    for command in (PassTurn(999, 0), CallCheat(999, 1, 0), LeaveGame(999)):
        with pytest.raises(ActionRefused) as refused:
            to_action(_game(), command)
        assert refused.value.reason is Refusal.NOT_IN_GAME
    with pytest.raises(ActionRefused):
        seat_of(_game(), 999)
    assert seat_of(_game(), 102) == 2


def test_my_cards_is_for_those_seated_in_the_game() -> None:
    """My cards: the game and its session for a seated player; anyone else is refused."""
    game = state_with([cards("A♣"), cards("2♣"), cards("3♣")], rest_to=2)
    session = at_table(game)
    seated = game.players[0].user_id
    assert played_by(session, seated) == (session, game)
    for stored in (None, session):
        with pytest.raises(SessionRefused) as refusal:
            played_by(stored, 999_999)
        assert refusal.value.reason is SessionRefusal.NOT_PLAYING_THERE
