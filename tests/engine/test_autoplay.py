"""The shared driver of computer players (``tgcheat.engine.autoplay.next_action``): what it
returns is always legal, whom it asks and in which order, and when the clock acts."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tgcheat.engine.actions import Challenge, Play, ResolveChallenges, Stop
from tgcheat.engine.autoplay import PRESS_MS, Asked, next_action
from tgcheat.engine.cards import Rank
from tgcheat.engine.game import apply, new_game, pending_deadline_ms, random_seating, refusal
from tgcheat.engine.rules import PRESETS, ChallengePriority, Rules
from tgcheat.engine.state import GameState, Phase

from .helpers import cards, random_action, state_with

OPTION_SETS = [
    ("cheat", ()),
    ("verju", ()),
    ("free", ()),
    ("cheat", ("challenge_priority=clockwise", "jokers=wild")),
    ("cheat", ("challenge_priority=clockwise", "challenge_window=two", "challenge_grace_s=1")),
    ("cheat", ("passing=vote", "challenge_window=two", "max_cards=any")),
    ("verju", ("passing=exhausted", "challenge_priority=clockwise")),
    ("free", ("final_check=next", "after_challenge=winner_opens", "challengers=next")),
]
#: Time between two steps of a game, drawn so that presses land before and after deadlines.
STEP_MS = (100, 700, 1500, 4000)


def _rules(preset: str, options: tuple[str, ...]) -> Rules:
    rules = PRESETS[preset]
    for option in (*options, "players=2-10"):
        name, _, value = option.partition("=")
        rules = rules.with_option(name, value)
    return rules.validate()


def _check(state: GameState, asked: Asked, now: int) -> None:
    """``next_action`` on ``state``, with and without the clock, on copies of ``asked``."""
    action = next_action(state, random.Random(now), now, set(asked))
    assert action is not None, f"nobody acts in a game in play: {state}"
    assert refusal(state, action) is None, (action, state)
    apply(state, action)
    deadline = pending_deadline_ms(state)
    without_clock = next_action(state, random.Random(now), now, set(asked), clock=False)
    if deadline is None:
        assert without_clock == action
    else:
        assert without_clock is None or isinstance(without_clock, Challenge)
        if without_clock is not None:
            assert refusal(state, without_clock) is None
            assert without_clock.now_ms <= deadline


@pytest.mark.parametrize(("preset", "options"), OPTION_SETS)
@pytest.mark.parametrize("players", [2, 4, 7])
def test_every_action_it_returns_is_legal(
    preset: str, options: tuple[str, ...], players: int
) -> None:
    rules = _rules(preset, options)
    for seed in range(2):
        rng = random.Random(seed)
        seating = random_seating([(i, f"P{i}") for i in range(players)], rng)
        state, _ = new_game(rules, seating, rng)
        asked: Asked = set()
        now = 0
        while state.phase is not Phase.FINISHED:
            now += rng.choice(STEP_MS)
            _check(state, asked, now)
            # Mostly as the driver plays; sometimes at random, for states it would not reach.
            if rng.random() < 0.3:
                action = random_action(state, rng, now)
            else:
                found = next_action(state, rng, now, asked)
                assert found is not None
                action = found
            state, _ = apply(state, action)
        assert next_action(state, rng, now, asked) is None


class Scripted:
    """A random source whose draws are given (then 0.99: nobody calls), and whose shuffle
    reverses, so that the order players are asked in is known."""

    def __init__(self, *draws: float) -> None:
        self.draws = list(draws)

    def random(self) -> float:
        return self.draws.pop(0) if self.draws else 0.99

    def shuffle(self, x: list[Any]) -> None:
        x.reverse()


def _after_a_lie() -> GameState:
    """Seat 0 has just claimed two aces with a 2 and a 3; seat 1 (to play) holds three aces, so
    it knows the claim is a lie; seats 2 and 3 cannot tell."""
    rules = Rules(challenge_priority=ChallengePriority.CLOCKWISE)
    hands = [
        cards("2♠", "3♠", "K♦"),
        cards("A♣", "A♦", "A♥", "5♣"),
        cards("7♣", "8♣"),
        cards("9♣", "10♣"),
    ]
    state = state_with(hands, required=Rank.ACE, rules=rules)
    state, _ = apply(state, Play(0, cards("2♠", "3♠"), Rank.ACE))
    assert state.turn == 1 and state.open_claims[-1].number == 1
    return state


def test_asks_each_bystander_once_in_a_random_order_with_spaced_presses() -> None:
    state = _after_a_lie()
    asked: Asked = set()
    # Seats 2 and 3 are asked, reversed: 3 lets it stand, then 2 calls a press later.
    action = next_action(state, Scripted(0.99, 0.0), 10_000, asked)
    assert action == Challenge(2, 1, 10_000 + PRESS_MS)
    assert asked == {(3, 1), (2, 1)}
    # Asked once: now only the player to play acts, and nobody is asked again.
    action = next_action(state, Scripted(0.0, 0.0), 10_000, asked)
    assert isinstance(action, Challenge) and action.seat == 1
    assert asked == {(3, 1), (2, 1)}


def test_without_bystanders_only_the_awaited_player_acts() -> None:
    state = _after_a_lie()
    action = next_action(state, Scripted(0.0, 0.0, 0.0), 10_000, None)
    # Seat 1 holds three aces: a claim of two is a sure lie, called without a draw.
    assert action == Challenge(1, 1, 10_000)


def test_the_clock_settles_a_collected_call_unless_the_bot_runs_it() -> None:
    state = _after_a_lie()
    # Seat 2 calls; seat 1 sits nearer the claimant and could still press: the call is
    # collected until the grace period ends.
    state, _ = apply(state, Challenge(2, 1, 10_000))
    deadline = pending_deadline_ms(state)
    assert deadline == 10_000 + 1000 * state.rules.challenge_grace_s
    asked: Asked = {(2, 1), (3, 1)}
    late = deadline + 5_000
    # Seat 1 is asked now (the player to play too, while a call is collected), and joins a
    # sure lie, pressing within the grace period.
    action = next_action(state, Scripted(), late, set(asked))
    assert action == Challenge(1, 1, deadline)
    assert refusal(state, action) is None
    # Everyone asked: the clock, at the deadline or now when that is later.
    asked.add((1, 1))
    assert next_action(state, Scripted(), late, asked) == ResolveChallenges(late)
    assert next_action(state, Scripted(), 10_500, asked) == ResolveChallenges(deadline)
    assert next_action(state, Scripted(), late, None) == ResolveChallenges(late)
    assert next_action(state, Scripted(), late, asked, clock=False) is None


def test_nobody_acts_in_a_finished_game() -> None:
    state, _ = apply(_after_a_lie(), Stop())
    assert state.phase is Phase.FINISHED
    assert next_action(state, Scripted(0.0), 0, set()) is None
