"""Invariants over random games (hypothesis): cards are conserved, exactly one player is to act,
every game ends within the move cap."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tgcheat.engine.actions import Leave, Timeout
from tgcheat.engine.game import apply, awaited, new_game, random_seating
from tgcheat.engine.rules import PRESETS
from tgcheat.engine.state import EndReason, GameState, Phase

from .helpers import random_action


def _check_invariants(state: GameState, deck_size: int) -> None:
    assert state.deck_size == deck_size
    every_card = [c for p in state.players for c in p.hand] + [*state.pile, *state.set_aside]
    assert len(set(every_card)) == deck_size
    if state.phase is Phase.PLAYING:
        assert len(awaited(state)) == 1
        assert not state.players[state.turn].left
        assert state.players[state.turn].hand
    elif state.phase is Phase.FINAL_CHECK:
        assert awaited(state)
        assert state.open_claims and state.open_claims[-1].final
    else:
        assert awaited(state) == frozenset()
        assert state.result is not None


@settings(max_examples=150, deadline=None)
@given(
    players=st.integers(min_value=3, max_value=6),
    seed=st.integers(min_value=0, max_value=2**32),
    leave_chance=st.sampled_from([0.0, 0.0, 0.01]),
    timeout_chance=st.sampled_from([0.0, 0.05]),
)
def test_random_cheat_games_conserve_cards_and_end(
    players: int, seed: int, leave_chance: float, timeout_chance: float
) -> None:
    rng = random.Random(seed)
    rules = PRESETS["cheat"]
    seating = random_seating([(i, f"P{i}") for i in range(players)], rng)
    state, _ = new_game(rules, seating, rng)
    deck_size = state.deck_size
    assert deck_size == 52
    sizes = sorted(len(p.hand) for p in state.players)
    assert sizes[-1] - sizes[0] <= 1
    steps = 0
    while state.phase is not Phase.FINISHED:
        steps += 1
        assert state.plays <= rules.move_cap
        roll = rng.random()
        if roll < leave_chance:
            action = Leave(rng.choice(state.active_seats()))
        elif roll < leave_chance + timeout_chance:
            action = Timeout(state.plays, state.phase is Phase.FINAL_CHECK)
        else:
            action = random_action(state, rng)
        state, _ = apply(state, action)
        _check_invariants(state, deck_size)
    assert state.result is not None
    assert state.plays <= rules.move_cap
    if state.result.reason is EndReason.WENT_OUT:
        assert state.result.winner is not None
        assert state.players[state.result.winner].hand == ()
    assert steps <= 3 * rules.move_cap
