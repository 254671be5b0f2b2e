"""What a finished game adds to the statistics, and how /top ranks (pure)."""

from __future__ import annotations

import dataclasses

from tests.engine.helpers import cards, state_with
from tgcheat.engine.state import EndReason, Phase, Result
from tgcheat.table.chronicle import SeatTally
from tgcheat.table.session import Session
from tgcheat.table.stats import Outcome, Row, game_record, leaderboards


def _finished(user_ids: list[int], winner: int) -> Session:
    state = state_with([cards("2♣"), cards("3♣"), cards("4♣")], rest_to=2)
    players = tuple(
        dataclasses.replace(p, user_id=uid, name=f"P{uid}")
        for p, uid in zip(state.players, user_ids, strict=True)
    )
    result = Result(EndReason.WENT_OUT, winner, ((0, 1), (1, 2), (2, 3)))
    game = dataclasses.replace(state, players=players, phase=Phase.FINISHED, result=result)
    return Session(-100, "abc", user_ids[0], game=game)


def test_a_game_with_computer_players_counts_apart_for_the_people_only() -> None:
    record = game_record(_finished([1, -1, 2], winner=0))
    assert record is not None and record.with_computers and not record.group_rows
    assert [line.user_id for line in record.lines] == [1, 2]
    ann, bob = record.lines
    assert ann.added == Row(computer_games=1, computer_wins=1) and ann.outcome == Outcome.APART
    assert bob.added == Row(computer_games=1)


def test_a_game_between_people_counts_places_and_streaks() -> None:
    record = game_record(_finished([1, 2, 3], winner=1))
    assert record is not None and record.group_rows and record.key == "-100:abc"
    first, second, third = record.lines
    assert first.added.games == 1 and first.added.wins == 0 and first.outcome == Outcome.LOST
    assert second.added.wins == 1 and second.outcome == Outcome.WON
    assert third.added.third == 1


def test_a_stopped_game_is_no_record() -> None:
    session = _finished([1, 2, 3], winner=0)
    assert session.game is not None and session.game.result is not None
    stopped = dataclasses.replace(session.game.result, reason=EndReason.STOPPED, winner=None)
    game = dataclasses.replace(session.game, result=stopped)
    assert game_record(dataclasses.replace(session, game=game)) is None


def test_top_ranks_by_win_rate_from_the_minimum_then_games() -> None:
    rows = {
        1: ("Ann", Row(games=4, wins=2, bluffs=5, bluffs_unseen=1, right_calls=3)),
        2: ("Bob", Row(games=2, wins=2, bluffs=9, bluffs_unseen=7)),
        3: ("Cy", Row(games=6, wins=3, right_calls=2, wrong_calls=1)),
        4: ("Di", Row(games=3, wins=2, right_calls=1, wrong_calls=3)),
    }
    boards = leaderboards(rows)
    # Bob has too few games; Di 67%; Ann and Cy 50%, Cy with more games first.
    assert [r.name for r in boards.wins] == ["Di", "Cy", "Ann"]
    assert [r.name for r in boards.bluffers] == ["Bob", "Ann"]
    # Ann 3/3, Cy 2/3, Di 1/4.
    assert [r.name for r in boards.detectives] == ["Ann", "Cy", "Di"]


def _walked_out(session: Session, plays: tuple[int, ...]) -> Session:
    """``session``'s game ended with its winner the last at the table, each seat having made
    ``plays`` plays."""
    assert session.game is not None and session.game.result is not None
    result = dataclasses.replace(session.game.result, reason=EndReason.LAST_PLAYER)
    tally = dataclasses.replace(
        session.tally, seats=tuple(SeatTally(plays=count) for count in plays)
    )
    return dataclasses.replace(
        session, game=dataclasses.replace(session.game, result=result), tally=tally
    )


def test_a_game_the_others_walked_out_of_counts_only_as_far_as_it_was_played() -> None:
    session = _finished([1, 2, 3], winner=1)
    # Nobody but the winner played: nothing counts.
    assert game_record(_walked_out(session, (0, 1, 0))) is None
    # Two played: the game counts for those two, the win with it; not for the third.
    record = game_record(_walked_out(session, (2, 3, 0)))
    assert record is not None
    assert [line.user_id for line in record.lines] == [1, 2]
    assert record.lines[1].added.wins == 1 and record.lines[1].outcome == Outcome.WON
