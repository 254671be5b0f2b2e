"""Achievements (tgcheat.table.achievements): each is earned by a game (or figures) that earn it
and not by the nearest one that does not; "in a row" and "last cards" are read from the story."""

from __future__ import annotations

import dataclasses

import pytest

from tgcheat.table.achievements import (
    CODES,
    SeatGame,
    earned_in_game,
    earned_over_time,
)
from tgcheat.table.stats import Row

#: A plain game: a loss of four people with the Cheat rules, nothing remarkable.
PLAIN = SeatGame(
    won=False,
    players=4,
    plays=60,
    preset="cheat",
    with_computers=False,
    match_won=False,
    own_plays=12,
    bluffs=2,
    bluffs_caught=1,
    right_calls=1,
    wrong_calls=1,
    biggest_pile=8,
    calls_in_a_row=1,
    out_on_a_bluff=False,
)
WIN = dataclasses.replace(PLAIN, won=True)

#: For each achievement of one game: a game that earns it, and one that does not.
GAMES: dict[str, tuple[SeatGame, SeatGame]] = {
    "w1": (WIN, PLAIN),
    "pc": (WIN, dataclasses.replace(WIN, preset="verju")),
    "pv": (dataclasses.replace(WIN, preset="verju"), WIN),
    "pf": (dataclasses.replace(WIN, preset="free"), dataclasses.replace(PLAIN, preset="free")),
    "cw": (dataclasses.replace(WIN, with_computers=True), WIN),
    "pk": (
        dataclasses.replace(PLAIN, bluffs=6, bluffs_caught=1),
        dataclasses.replace(PLAIN, bluffs=6, bluffs_caught=2),
    ),
    "ee": (
        dataclasses.replace(PLAIN, calls_in_a_row=3),
        dataclasses.replace(PLAIN, calls_in_a_row=2, right_calls=4),
    ),
    "sh": (
        dataclasses.replace(PLAIN, right_calls=5, wrong_calls=0),
        dataclasses.replace(PLAIN, right_calls=5, wrong_calls=1),
    ),
    "cb": (dataclasses.replace(WIN, biggest_pile=20), dataclasses.replace(PLAIN, biggest_pile=25)),
    "ha": (dataclasses.replace(WIN, bluffs=0, bluffs_caught=0), WIN),
    "ut": (dataclasses.replace(WIN, biggest_pile=0), WIN),
    "ll": (dataclasses.replace(WIN, out_on_a_bluff=True), WIN),
    "lt": (dataclasses.replace(WIN, plays=20), dataclasses.replace(WIN, plays=21)),
    "mr": (dataclasses.replace(PLAIN, plays=150), dataclasses.replace(PLAIN, plays=149)),
    "mt": (
        dataclasses.replace(PLAIN, biggest_pile=30),
        dataclasses.replace(PLAIN, biggest_pile=29),
    ),
    "fh": (dataclasses.replace(PLAIN, players=10), dataclasses.replace(PLAIN, players=9)),
    "rh": (dataclasses.replace(PLAIN, bluffs=3, bluffs_caught=3), PLAIN),
    "pa": (dataclasses.replace(PLAIN, wrong_calls=3), dataclasses.replace(PLAIN, wrong_calls=2)),
    "mw": (dataclasses.replace(WIN, match_won=True), WIN),
}

#: For each achievement over time: figures (and a rating) that earn it, and ones that do not.
FIGURES: dict[str, tuple[tuple[Row, int], tuple[Row, int]]] = {
    "s3": ((Row(best_streak=3), 1000), (Row(best_streak=2, streak=2), 1000)),
    "s5": ((Row(best_streak=5), 1000), (Row(best_streak=4), 1000)),
    "gx": ((Row(games=25), 1000), (Row(games=24), 1000)),
    "gc": ((Row(games=100), 1000), (Row(games=99), 1000)),
    "wx": ((Row(wins=25, games=40), 1000), (Row(wins=24, games=40), 1000)),
    "rg": ((Row(), 1400), (Row(), 1399)),
    "rd": ((Row(), 1800), (Row(), 1799)),
}


def test_every_achievement_has_its_check() -> None:
    assert set(GAMES) | set(FIGURES) | {"g1"} == set(CODES)
    assert len(CODES) >= 25


@pytest.mark.parametrize("code", sorted(GAMES))
def test_a_game_earns_it_and_the_nearest_other_does_not(code: str) -> None:
    earning, not_earning = GAMES[code]
    assert code in earned_in_game(earning)
    assert code not in earned_in_game(not_earning)


@pytest.mark.parametrize("code", sorted(FIGURES))
def test_figures_earn_it_and_the_nearest_others_do_not(code: str) -> None:
    (row, rating), (other_row, other_rating) = FIGURES[code]
    assert code in earned_over_time(row, rating)
    assert code not in earned_over_time(other_row, other_rating)


def test_a_game_with_computer_players_earns_only_the_firsts() -> None:
    everything = dataclasses.replace(
        WIN, with_computers=True, players=10, plays=200, biggest_pile=40, out_on_a_bluff=True
    )
    assert set(earned_in_game(everything)) == {"g1", "cw"}
    assert "g1" in earned_in_game(PLAIN)
