"""Invariants over random games and random valid option sets (hypothesis): cards are conserved
with one or two decks and jokers, exactly one player is to act while playing, every game ends
(within the move cap; and, with no cap, still ends)."""

from __future__ import annotations

import dataclasses
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tgcheat.engine.actions import Action, Leave, Timeout
from tgcheat.engine.game import apply, deck_of, new_game, random_seating
from tgcheat.engine.invariants import violations
from tgcheat.engine.rules import (
    PRESETS,
    AfterChallenge,
    ChallengePriority,
    Challengers,
    ChallengeWindow,
    DeckKind,
    FinalCheck,
    InvalidRules,
    Jokers,
    Passing,
    Penalty,
    RankRule,
    Rules,
)
from tgcheat.engine.state import EndReason, GameState, Phase
from tgcheat.engine.strategies import LEVELS

from .helpers import ComputerTable, ai_action, random_action

#: Bound for games without a move cap: far beyond any game seen (medians are in the hundreds).
UNCAPPED_STEPS = 60_000


@st.composite
def setups(draw: st.DrawFn, *, move_caps: tuple[int, ...] = (10, 60, 300)) -> tuple[Rules, int]:
    """A valid option set (filtered with ``Rules.validate``) and a number of players for it."""
    deck = draw(st.sampled_from(DeckKind))
    short = deck is DeckKind.SHORT
    players = draw(st.integers(min_value=2, max_value=4 if short else 10))
    rules = Rules(
        rank_rule=draw(st.sampled_from(RankRule)),
        challengers=draw(st.sampled_from(Challengers)),
        after_challenge=draw(st.sampled_from(AfterChallenge)),
        challenge_priority=draw(st.sampled_from(ChallengePriority)),
        challenge_grace_s=draw(st.sampled_from([0, 1, 3])),
        challenge_window=draw(st.sampled_from(ChallengeWindow)),
        final_check=draw(st.sampled_from(FinalCheck)),
        max_cards=draw(st.sampled_from([0, 1, 2, 4, 6])),
        decks=draw(st.sampled_from([0, 1, 2])),
        jokers=draw(st.sampled_from(Jokers)),
        passing=draw(st.sampled_from(Passing)),
        move_cap=draw(st.sampled_from(move_caps)),
        min_players=2,
        max_players=4 if short else max(6, players),
        afk_limit=draw(st.sampled_from([1, 3])),
        deck=deck,
        penalty=draw(st.sampled_from(Penalty)),
    )
    try:
        rules.validate()
    except InvalidRules:
        draw(st.nothing())
    return rules, players


def _start(rules: Rules, players: int, seed: int) -> tuple[GameState, random.Random]:
    rng = random.Random(seed)
    seating = random_seating([(i, f"P{i}") for i in range(players)], rng)
    state, _ = new_game(rules, seating, rng)
    assert state.deck_size == len(deck_of(rules, players))
    if rules.deck is DeckKind.STANDARD:
        decks = rules.deck_count(players)
        assert state.deck_size == decks * (54 if rules.jokers is Jokers.WILD else 52)
    sizes = sorted(len(p.hand) for p in state.players)
    assert sizes[-1] - sizes[0] <= 1
    assert violations(state, state.deck_size) == []
    return state, rng


def _check_end(state: GameState) -> None:
    result = state.result
    assert result is not None
    if result.reason is EndReason.WENT_OUT:
        assert result.winner is not None
        assert state.players[result.winner].hand == ()
    if result.winner is not None:
        assert dict(result.places)[result.winner] == 1


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.integers(min_value=3, max_value=6),
    seed=st.integers(min_value=0, max_value=2**32),
    leave_chance=st.sampled_from([0.0, 0.0, 0.01]),
    timeout_chance=st.sampled_from([0.0, 0.05]),
)
def test_random_cheat_games_conserve_cards_and_end(
    players: int, seed: int, leave_chance: float, timeout_chance: float
) -> None:
    rules = PRESETS["cheat"]
    state, rng = _start(rules, players, seed)
    assert state.deck_size == 52
    _drive(state, rng, random_action, leave_chance, timeout_chance, 3 * rules.move_cap)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    setup=setups(),
    seed=st.integers(min_value=0, max_value=2**32),
    leave_chance=st.sampled_from([0.0, 0.005]),
    timeout_chance=st.sampled_from([0.0, 0.03]),
)
def test_random_games_under_any_valid_options_keep_the_invariants(
    setup: tuple[Rules, int], seed: int, leave_chance: float, timeout_chance: float
) -> None:
    rules, players = setup
    state, rng = _start(rules, players, seed)
    # Between two moves (plays and passes) only a bounded number of answers can happen:
    # challenges, accepts, votes, the clock.
    per_move = 4 * players + 4
    # Under the revolver no cap counts plays: the bullets end the game.
    steps = UNCAPPED_STEPS if rules.revolver else per_move * rules.move_cap
    _drive(state, rng, random_action, leave_chance, timeout_chance, steps)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    setup=setups(move_caps=(0,)),
    seed=st.integers(min_value=0, max_value=2**32),
    leave_chance=st.sampled_from([0.0, 0.002]),
    timeout_chance=st.sampled_from([0.0, 0.02]),
)
def test_games_without_a_cap_between_computer_players_end(
    setup: tuple[Rules, int], seed: int, leave_chance: float, timeout_chance: float
) -> None:
    rules, players = setup
    state, rng = _start(rules, players, seed)
    _drive(state, rng, ai_action, leave_chance, timeout_chance, UNCAPPED_STEPS)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    setup=setups(move_caps=(0,)),
    seed=st.integers(min_value=0, max_value=2**32),
    picks=st.lists(st.sampled_from(LEVELS), min_size=10, max_size=10),
)
def test_games_without_a_cap_between_computer_players_with_memory_end(
    setup: tuple[Rules, int], seed: int, picks: list[str]
) -> None:
    rules, players = setup
    # As for random play: two players claiming one card at a time can play a very long game
    # without a cap (one of them far ahead, the other always caught); the cap ends those.
    if players == 2 and rules.max_cards == 1:
        rules = dataclasses.replace(rules, max_cards=2)
    state, rng = _start(rules, players, seed)
    _drive(state, rng, ComputerTable(state, picks[:players]), 0.0, 0.0, UNCAPPED_STEPS)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=setups(move_caps=(0,)), seed=st.integers(min_value=0, max_value=2**32))
def test_random_games_without_a_cap_end(setup: tuple[Rules, int], seed: int) -> None:
    rules, players = setup
    # Bounded examples: random play with one card a play and two players is a long random
    # walk; keep to the tables the bot is for.
    rules = dataclasses.replace(rules, max_cards=rules.max_cards or 4)
    players = max(players, 3)
    if rules.max_cards < 2:
        rules = dataclasses.replace(rules, max_cards=2)
    state, rng = _start(rules.validate(), players, seed)
    _drive(state, rng, random_action, 0.0, 0.02, UNCAPPED_STEPS)


def _drive(
    state: GameState,
    rng: random.Random,
    chooser: object,
    leave_chance: float,
    timeout_chance: float,
    max_steps: int,
) -> None:
    deck_size = state.deck_size
    rules = state.rules
    steps = 0
    now = 0
    while state.phase is not Phase.FINISHED:
        steps += 1
        assert steps <= max_steps, "the game did not end"
        now += 700
        roll = rng.random()
        action: Action
        if roll < leave_chance:
            action = Leave(rng.choice(state.active_seats()))
        elif (
            roll < leave_chance + timeout_chance and not state.challenges and state.pull_by is None
        ):
            action = Timeout(state.plays, state.phase is Phase.FINAL_CHECK, now)
        else:
            action = chooser(state, rng, now)  # type: ignore[operator]
        before = state
        state, events = apply(state, action)
        if isinstance(chooser, ComputerTable):
            chooser.seen(before, events, state)
        assert violations(state, deck_size) == [], action
    if rules.move_cap and not rules.revolver:
        assert state.plays <= rules.move_cap
    _check_end(state)


def test_two_computer_players_under_same_rank_pairs_end() -> None:
    """Found by the explore profile: the first computer players (who remember nothing) could
    play this game on for ever; players of the default strategy, who remember their cards on
    the pile, end it."""
    rules = Rules(
        rank_rule=RankRule.SAME,
        after_challenge=AfterChallenge.WINNER_OPENS,
        challenge_window=ChallengeWindow.TWO,
        max_cards=2,
        passing=Passing.EXHAUSTED,
        move_cap=0,
        afk_limit=1,
    ).validate()
    state, rng = _start(rules, 2, 0)
    _drive(state, rng, ComputerTable(state), 0.0, 0.0, UNCAPPED_STEPS)
