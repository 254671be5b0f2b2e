"""``tgcheat simulate``: deterministic figures, and no invariant violation under any preset."""

from __future__ import annotations

import argparse
import json

import pytest

from tgcheat import simulate
from tgcheat.engine.rules import PRESETS
from tgcheat.engine.strategies import DEFAULT_STRATEGY


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tgcheat")
    simulate.add_parser(parser.add_subparsers(dest="command"))
    return parser


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    args = _parser().parse_args(["simulate", *argv])
    assert args.run is simulate.run
    code = simulate.run(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_same_seed_same_output(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("--preset", "cheat", "--players", "4", "--games", "15", "--seed", "7")
    code, first, _ = _run(capsys, *argv)
    _, second, _ = _run(capsys, *argv)
    _, other, _ = _run(capsys, *argv[:-1], "8")
    assert code == 0
    lines = first.splitlines()
    # Only the speed, printed last, may differ.
    assert lines[-1].startswith("games per second: ")
    assert lines[:-1] == second.splitlines()[:-1]
    assert lines[:-1] != other.splitlines()[:-1]
    assert "games: 15" in lines
    assert "invariant violations: 0" in lines


def test_json_output_keeps_the_speed_apart(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("--preset", "free", "--players", "3", "--games", "10", "--seed", "2", "--json")
    _, first, _ = _run(capsys, *argv)
    _, second, _ = _run(capsys, *argv)
    one, two = json.loads(first), json.loads(second)
    assert one.pop("timing")["games_per_second"] > 0
    two.pop("timing")
    assert one == two
    assert one["games"] == 10 and one["players"] == 3
    assert sum(one["wins_by_seat"]) + one["draws"] == 10
    assert len(one["wins_by_seat"]) == 3
    assert 0.0 <= one["lies_caught_share"] <= 1.0
    assert one["plays_per_game"] > 0 and one["invariant_violations"] == 0


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_no_violations_under_any_preset(preset: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        capsys, "--preset", preset, "--players", "4", "--games", "25", "--seed", "1", "--json"
    )
    report = json.loads(out)
    assert code == 0 and report["invariant_violations"] == 0
    endings = report["endings"]
    if preset == "liars":
        # The last alive wins: every game ends by the revolver, and its pulls are counted.
        assert endings == {"last_alive": 25}
        assert report["pulls_per_game"] >= report["shots_per_game"] == 3
    else:
        assert endings.get("went_out", 0) + endings.get("move_cap", 0) == 25


@pytest.mark.parametrize(
    ("preset", "players", "options"),
    [
        ("cheat", 7, ["jokers=wild", "challenge_priority=clockwise"]),
        ("cheat", 5, ["passing=vote", "challenge_window=two", "max_cards=any"]),
        ("verju", 3, ["passing=exhausted", "decks=2", "move_cap=none"]),
        ("free", 2, ["final_check=next", "after_challenge=winner_opens", "move_cap=100"]),
        ("liars", 2, ["max_cards=1", "challenge_priority=clockwise"]),
        ("liars", 3, ["challengers=anyone", "rank_rule=free", "players=2-3", "jokers=off"]),
        ("cheat", 4, ["penalty=revolver"]),
    ],
)
def test_no_violations_with_other_options(
    preset: str, players: int, options: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    sets = [arg for option in options for arg in ("--set", option)]
    code, out, _ = _run(
        capsys, "--preset", preset, "--players", str(players), "--games", "8", "--json", *sets
    )
    assert code == 0 and json.loads(out)["invariant_violations"] == 0


def test_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "--preset", "verju", "--set", "challenge_window=two")
    assert code == 2 and "next_with_window_two" in err
    code, _, err = _run(capsys, "--players", "11")
    assert code == 2
    code, _, err = _run(capsys, "--set", "nonsense")
    assert code == 2 and "unknown_option" in err
    # One deck cannot seat seven.
    code, _, err = _run(capsys, "--players", "7", "--set", "decks=1")
    assert code == 2 and "one_deck_too_many_players" in err


def test_seats_name_each_players_strategy(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("--seats", "hard,honest,random", "--games", "12", "--seed", "3", "--json")
    code, out, _ = _run(capsys, *argv)
    report = json.loads(out)
    assert code == 0 and report["invariant_violations"] == 0
    assert report["players"] == 3 and report["seats"] == ["hard", "honest", "random"]
    # The keys of before, and the new ones.
    for key in ("games", "wins_by_seat", "endings", "draws", "lies_caught_share", "timing"):
        assert key in report
    wins = report["wins_by_seat"]
    assert len(wins) == 3 and sum(wins) + report["draws"] == 12
    assert sum(report["wins_by_position"]) == sum(wins)
    by_strategy = report["wins_by_strategy"]
    assert list(by_strategy) == ["hard", "honest", "random"]
    for name, figures in by_strategy.items():
        assert figures["wins"] == wins[report["seats"].index(name)]
        assert figures["low"] <= figures["share"] <= figures["high"]
        assert figures["seats"] == 1 and figures["fair_share"] == round(1 / 3, 4)
    assert 0.0 <= report["cap_share"] <= 1.0
    for calls in report["calls_by_strategy"].values():
        assert calls["guessed"] <= calls["calls"]
    # Same seed, same figures.
    _, again, _ = _run(capsys, *argv)
    second = json.loads(again)
    report.pop("timing"), second.pop("timing")
    assert report == second


def test_a_strategy_keeps_its_player_wherever_the_seating_puts_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # `never` never calls Cheat!: whatever the seating, its player is never a caller.
    code, out, _ = _run(capsys, "--seats", "never,easy,never", "--games", "20", "--json")
    report = json.loads(out)
    assert code == 0
    assert set(report["calls_by_strategy"]) <= {"easy"}
    assert report["wins_by_strategy"]["never"]["seats"] == 2


def test_players_alone_means_the_default_strategy(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, "--players", "3", "--games", "3", "--json")
    report = json.loads(out)
    assert report["seats"] == [DEFAULT_STRATEGY] * 3
    _, out, _ = _run(capsys, "--seats", "normal,normal", "--players", "2", "--games", "3")
    assert "seats: normal,normal" in out.splitlines()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--seats", "hard,perfect"), "unknown strategy 'perfect'"),
        (("--seats", "hard,,honest"), "unknown strategy ''"),
        (("--seats", "hard,honest", "--players", "3"), "names 2 players but --players is 3"),
        (("--seats", "hard"), "--players must be 2–10"),
        (("--seats", ",".join(["honest"] * 11)), "--players must be 2–10"),
    ],
)
def test_bad_seats_are_refused(
    argv: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, *argv, "--games", "2")
    assert code == 2 and out == ""
    assert message in err


def test_the_wilson_interval() -> None:
    low, high = simulate.wilson(50, 100)
    assert 0.40 < low < 0.41 and 0.59 < high < 0.60
    assert simulate.wilson(0, 10)[0] == 0.0 and simulate.wilson(10, 10)[1] == 1.0
    assert simulate.wilson(0, 0) == (0.0, 1.0)


def test_who_plays_first_goes_round_the_players(capsys: pytest.CaptureFixture[str]) -> None:
    """Playing first is worth much with two players: each player opens as many games as the
    other, whatever the random seating."""
    argv = ("--seats", "hard,counter", "--games", "10", "--seed", "3", "--json")
    _, out, _ = _run(capsys, *argv)
    assert json.loads(out)["opened_by_seat"] == [5, 5]
    _, out, _ = _run(capsys, "--players", "3", "--games", "7", "--seed", "3", "--json")
    assert json.loads(out)["opened_by_seat"] == [3, 2, 2]


def test_opened_by_moves_the_dealer_before_the_player() -> None:
    seating = simulate.Seating(((1002, "c"), (1000, "a"), (1001, "b")), dealer=0)
    for player, dealer in ((0, 0), (1, 1), (2, 2)):
        assert simulate.opened_by(seating, player).dealer == dealer
        assert simulate.opened_by(seating, player).players == seating.players
