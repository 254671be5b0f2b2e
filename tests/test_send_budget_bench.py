"""The many-games benchmark of the send budget (benchmarks/send_budget.py), run tiny: a few
groups play for half a virtual minute on one bot against Telegram's limits, and every figure it
reports is there."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "send_budget.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    sys.path.insert(0, str(SCRIPT.parent))  # its own _paths helper
    spec = importlib.util.spec_from_file_location("send_budget", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_three_groups_play_at_once_with_the_budget_on_and_off(bench: ModuleType) -> None:
    runs = asyncio.run(bench.measure([3], minutes=0.5, players=3, seed=5))
    assert [(run["games"], run["send_rate"]) for run in runs] == [(3, 30.0), (3, 0.0)]
    for run in runs:
        # Each group opened a game, dealt it and played in it.
        assert run["games_opened"] == 3
        assert run["plays"] >= 6 and run["plays_per_minute_per_game"] > 0
        requests = run["requests"]
        assert requests["messages"] > 0 and requests["callback_answers"] > 0
        assert requests["all"] == sum(requests["by_method"].values())
        assert run["refused"]["all"] == sum(
            n for kind, n in run["refused"].items() if kind != "all"
        )
        # Every player was dealt a hand, and those whose turn came were told by it.
        delay = run["turn_notification_delay_s"]
        assert delay["turns_told"] >= 3
        assert 0 <= delay["p50"] <= delay["p99"] <= delay["max"]
        assert run["failed_taps"] == 0 and run["violations"] == 0 and run["logged"] == {}
        assert run["wall_s"] > 0


def test_the_percentile_is_the_nearest_rank(bench: ModuleType) -> None:
    values = [float(n) for n in range(1, 101)]
    assert bench.percentile(values, 0.5) == 50.0
    assert bench.percentile(values, 0.99) == 99.0
    assert bench.percentile([7.0], 0.99) == 7.0
    assert bench.percentile([], 0.5) is None


def test_a_private_flood_is_measured_beside_the_same_run_without_it(bench: ModuleType) -> None:
    runs = asyncio.run(
        bench.measure(
            [3],
            minutes=0.25,
            players=3,
            seed=5,
            send_rates=(bench.BUDGET_ON,),
            floods=(False, True),
            flood_at_s=5,
        )
    )
    assert [run["flooded"] for run in runs] == [False, True]
    quiet, flooded = runs
    assert quiet["flood"] == {"requests": 0, "refused_429": 0}
    # The flooder's /help reached the bot: some of it was answered.
    assert flooded["flood"]["requests"] >= 1
    for run in runs:
        counted = run["turns_and_reveals"]
        assert (counted["counted_from_s"], counted["counted_until_s"]) == (5.0, 10.0)
        assert 0 <= counted["refused"] <= counted["asked"]
        assert run["failed_taps"] == 0 and run["violations"] == 0
