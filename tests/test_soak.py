"""The soak (tools/soak.py), briefly: a few games through two webhook processes on one Redis,
with every kind of fault; it must report no violation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SOAK = Path(__file__).resolve().parents[1] / "tools" / "soak.py"


def short_soak(*options: str) -> dict[str, Any]:
    """Three games for 8 seconds; its figures, once it reported no violation."""
    run = subprocess.run(
        [sys.executable, str(SOAK), "--games", "3", "--seconds", "8", "--json", *options],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=SOAK.parents[1],
    )
    assert run.stdout.strip(), run.stderr[-3000:]
    figures: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    assert figures["violations"] == 0, figures["violation_examples"]
    assert run.returncode == 0, run.stderr[-3000:]
    return figures


def test_a_short_soak_reports_no_violation() -> None:
    figures = short_soak("--seed", "3")
    assert figures["games_dealt"] == 3
    assert figures["moves"].get("play", 0) > 0
    # A short run still meets a Redis restart, a 429 and a 502 (tools/soak.py: chaos), a group
    # in a long flood wait and an update that fails on every delivery.
    assert figures["faults"].get("redis_restart", 0) >= 1
    assert figures["faults"].get("http_429", 0) >= 1
    assert figures["faults"].get("http_502", 0) >= 1
    assert figures["faults"].get("long_429", 0) == 1
    assert figures["faults"].get("poison_update", 0) == 1
    # A process killed between a commit and Telegram's answer, outsiders at the join link.
    assert figures["faults"].get("killed", 0) >= 1
    assert figures["faults"].get("outsider_join", 0) == 3
    # What players must see was shown in the end, and no table was left showing an old state.
    assert figures["reveals_lost"] == 0 and figures["results_lost"] == 0
    assert figures["tables_stale"] == 0, figures["stale_examples"]


def test_a_short_soak_with_the_send_budget_binding_loses_and_leaves_nothing() -> None:
    """Computer players at machine speed ask for far more than 30 messages a second: the
    budget refuses and holds most of them for the clock, and nothing is lost or left stale."""
    figures = short_soak("--seed", "4", "--send-rate", "30")
    assert figures["games_dealt"] == 3
    assert figures["moves"].get("play", 0) > 0
    assert figures["reveals_lost"] == 0 and figures["results_lost"] == 0
    assert figures["tables_stale"] == 0, figures["stale_examples"]
