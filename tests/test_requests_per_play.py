"""The human-pace request count (benchmarks/requests_per_play.py): whole games played tap by
tap on a virtual clock, with the group's budget on, add up."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "requests_per_play.py"


@pytest.fixture(scope="module")
def counter() -> ModuleType:
    sys.path.insert(0, str(SCRIPT.parent))  # its own _paths helper
    spec = importlib.util.spec_from_file_location("requests_per_play", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_two_games_at_a_human_pace_are_counted_whole(counter: ModuleType) -> None:
    result = asyncio.run(counter.measure(2, 3, "cheat", 2_000, 5))
    assert result["games"] == 2 and result["plays"] > 10
    per_play = result["per_play"]
    # The group's budget is on and counts on the same clock as the taps: a table edit held
    # for it is shown a few seconds later (on the wall clock it would never be), and the table
    # is edited as the game goes.
    assert result["seconds_waited_for_a_button"] < result["plays"] / 2
    assert per_play["group"] >= 0.5
    assert per_play["without_callback_answers"] == pytest.approx(
        per_play["group"] + per_play["private"], abs=0.002
    )
    by_cause = sum(figures["count"] for figures in result["by_cause"].values())
    by_method = sum(figures["count"] for figures in result["by_method"].values())
    assert by_cause == by_method
