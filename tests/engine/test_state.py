"""``evolve``: the engine's fast ``dataclasses.replace`` gives what replace gives."""

from __future__ import annotations

import dataclasses
import random

import pytest

from tests.engine.helpers import random_action
from tgcheat.engine.game import apply, new_game, random_seating
from tgcheat.engine.rules import PRESETS
from tgcheat.engine.state import Phase, evolve


def test_evolve_is_replace_at_every_step_of_a_game() -> None:
    rng = random.Random(3)
    names = [(100 + i, f"P{i}") for i in range(5)]
    state, _ = new_game(PRESETS["cheat"], random_seating(names, rng), rng)
    while state.phase is not Phase.FINISHED:
        changes = {"turn": (state.turn + 1) % 5, "plays": state.plays + 7, "pile": ()}
        assert evolve(state, **changes) == dataclasses.replace(state, **changes)
        player = state.players[0]
        assert evolve(player, timeouts=2) == dataclasses.replace(player, timeouts=2)
        assert evolve(state) == state and evolve(state) is not state
        state, _ = apply(state, random_action(state, rng))


def test_evolve_refuses_a_name_that_is_no_field() -> None:
    rng = random.Random(1)
    state, _ = new_game(PRESETS["cheat"], random_seating([(1, "A"), (2, "B")], rng), rng)
    with pytest.raises(TypeError, match="no field"):
        evolve(state, turns=1)
