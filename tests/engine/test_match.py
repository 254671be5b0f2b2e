"""RULES.md ``match``: single, first_to_N, best_of_N, penalty_N; the dealer moves each game."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from tgcheat.engine.actions import Leave, Stop
from tgcheat.engine.ai import choose_action
from tgcheat.engine.cards import full_deck
from tgcheat.engine.game import Seating, apply, awaited, new_game, random_seating
from tgcheat.engine.match import (
    Match,
    is_over,
    new_match,
    next_seating,
    record_game,
    remaining,
    scoreboard,
)
from tgcheat.engine.rules import Rules
from tgcheat.engine.state import EndReason, GameState, Phase, Player, Result

PLAYERS = ((11, "Ana"), (22, "Bo"), (33, "Cy"))


def _match(value: str, players: Sequence[tuple[int, str]] = PLAYERS, dealer: int = 0) -> Match:
    rules = Rules().with_option("match", value).with_option("players", "2-6")
    return new_match(rules, Seating(tuple(players), dealer))


def _finished(
    match: Match,
    winner: int | None,
    sizes: Sequence[int],
    reason: EndReason = EndReason.WENT_OUT,
    left: Sequence[int] = (),
) -> GameState:
    """A finished game of the match's next seating: ``winner`` is a user id; ``sizes`` the
    cards left in each seat's hand."""
    seating = next_seating(match)
    deck = iter(full_deck(2))
    players = tuple(
        Player(uid, name, tuple(next(deck) for _ in range(size)), left=uid in left)
        for (uid, name), size in zip(seating.players, sizes, strict=True)
    )
    seat = next((i for i, p in enumerate(players) if p.user_id == winner), None)
    return GameState(
        rules=match.rules,
        players=players,
        dealer=seating.dealer,
        turn=0,
        required=None,
        phase=Phase.FINISHED,
        result=Result(reason, seat, ()),
    )


def test_the_seating_stays_and_the_dealer_moves_one_seat_each_game() -> None:
    match = _match("first_to_5", dealer=1)
    dealers = []
    for _ in range(4):
        seating = next_seating(match)
        assert seating.players == PLAYERS
        dealers.append(seating.dealer)
        match = record_game(match, _finished(match, 11, [0, 3, 4]))
    assert dealers == [1, 2, 0, 1]


def test_single() -> None:
    match = _match("single")
    match = record_game(match, _finished(match, 22, [3, 0, 4]))
    assert is_over(match) and match.winner == 22
    with pytest.raises(ValueError):
        record_game(match, _finished(match, 22, [3, 0, 4]))


def test_single_draw_at_the_cap() -> None:
    match = _match("single")
    match = record_game(match, _finished(match, None, [3, 3, 4], EndReason.MOVE_CAP))
    assert is_over(match) and match.winner is None


def test_first_to_n() -> None:
    match = _match("first_to_2")
    for winner in (11, 22, None, 33):
        match = record_game(
            match,
            _finished(
                match,
                winner,
                [2, 2, 2],
                EndReason.MOVE_CAP if winner is None else EndReason.WENT_OUT,
            ),
        )
        assert not is_over(match)
    match = record_game(match, _finished(match, 22, [1, 0, 5]))
    assert is_over(match) and match.winner == 22
    assert scoreboard(match) == [(22, 2), (11, 1), (33, 1)]
    assert match.games == 5


def test_best_of_n_ends_once_decided() -> None:
    match = _match("best_of_3")
    match = record_game(match, _finished(match, 33, [1, 2, 0]))
    assert not is_over(match)
    match = record_game(match, _finished(match, 33, [1, 2, 0]))
    # Two wins of three: nobody can catch up.
    assert is_over(match) and match.winner == 33 and match.games == 2


def test_best_of_n_a_tie_is_played_off() -> None:
    match = _match("best_of_3")
    for winner in (11, 22, 33):
        match = record_game(match, _finished(match, winner, [0, 0, 0]))
    assert not is_over(match) and match.games == 3
    match = record_game(match, _finished(match, 22, [1, 0, 2]))
    assert is_over(match) and match.winner == 22


def test_penalty_n_losers_score_their_cards_and_the_lowest_total_wins() -> None:
    match = _match("penalty_2")
    match = record_game(match, _finished(match, 11, [0, 5, 2]))
    assert dict(match.scores) == {11: 0, 22: 5, 33: 2}
    assert not is_over(match)
    match = record_game(match, _finished(match, 33, [4, 1, 0]))
    assert dict(match.scores) == {11: 4, 22: 6, 33: 2}
    assert is_over(match) and match.winner == 33
    assert scoreboard(match) == [(33, 2), (11, 4), (22, 6)]


def test_penalty_at_the_cap_the_winner_scores_nothing_and_a_draw_scores_everyone() -> None:
    match = _match("penalty_3")
    match = record_game(match, _finished(match, 22, [4, 1, 3], EndReason.MOVE_CAP))
    assert dict(match.scores) == {11: 4, 22: 0, 33: 3}
    match = record_game(match, _finished(match, None, [2, 2, 5], EndReason.MOVE_CAP))
    assert dict(match.scores) == {11: 6, 22: 2, 33: 8}


def test_penalty_a_tie_is_played_off() -> None:
    match = _match("penalty_1")
    match = record_game(match, _finished(match, 11, [0, 3, 3], EndReason.WENT_OUT))
    assert is_over(match) and match.winner == 11
    match = _match("penalty_1", players=(*PLAYERS, (44, "Di")))
    match = record_game(match, _finished(match, None, [2, 2, 5, 6], EndReason.MOVE_CAP))
    assert not is_over(match)
    match = record_game(match, _finished(match, 22, [1, 0, 5, 6]))
    assert is_over(match) and match.winner == 22


def test_a_player_who_leaves_leaves_the_match() -> None:
    four = (*PLAYERS, (44, "Di"))
    match = _match("first_to_3", players=four, dealer=2)
    match = record_game(match, _finished(match, 11, [0, 4, 0, 4], left=[33]))
    assert remaining(match) == (PLAYERS[0], PLAYERS[1], (44, "Di"))
    # Cy dealt this game and left: the deal moves on to Di.
    seating = next_seating(match)
    assert seating.players[seating.dealer] == (44, "Di")
    assert scoreboard(match)[-1] == (33, 0)
    # Below the rules' minimum the match ends: the leader among those left wins.
    match = record_game(match, _finished(match, 22, [4, 0, 0], left=[44]))
    assert not is_over(match)
    match = record_game(match, _finished(match, 22, [0, 3], EndReason.LAST_PLAYER, left=[11]))
    assert is_over(match) and match.winner == 22


def test_a_stopped_game_ends_the_match_without_a_winner() -> None:
    match = _match("best_of_5")
    match = record_game(match, _finished(match, 11, [0, 2, 2]))
    match = record_game(match, _finished(match, None, [2, 2, 2], EndReason.STOPPED))
    assert is_over(match) and match.winner is None


def test_a_match_of_real_games_between_computer_players() -> None:
    rng = random.Random(4)
    rules = Rules().with_option("match", "best_of_3")
    match = new_match(rules, random_seating(PLAYERS, rng))
    while not is_over(match):
        state, _ = new_game(rules, next_seating(match), rng)
        while state.phase is not Phase.FINISHED:
            seat = min(awaited(state))
            action = choose_action(state, seat, rng)
            assert action is not None
            state, _ = apply(state, action)
        match = record_game(match, state)
    assert match.winner in {uid for uid, _ in PLAYERS}
    assert match.games >= 2
    assert scoreboard(match)[0][0] == match.winner


def test_unfinished_games_are_not_recorded() -> None:
    match = _match("first_to_2")
    state, _ = new_game(match.rules, next_seating(match), random.Random(1))
    with pytest.raises(ValueError):
        record_game(match, state)
    state, _ = apply(state, Leave(0))
    state, _ = apply(state, Stop())
    assert record_game(match, state).finished
