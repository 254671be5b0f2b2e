"""Building explicit game states and driving random games, for the engine's tests."""

from __future__ import annotations

import random
from collections.abc import Sequence

from tgcheat.engine.actions import Accept, Action, Challenge, Play
from tgcheat.engine.cards import Card, Rank, Suit, full_deck
from tgcheat.engine.game import apply, awaited, challengeable, claimable_ranks, play_limit
from tgcheat.engine.rules import Rules
from tgcheat.engine.state import GameState, Phase, Player


def card(label: str, deck: int = 0) -> Card:
    """A card from a label such as ``7♣``, ``10♦`` or ``K♠``."""
    rank_part, suit_symbol = label[:-1], label[-1]
    rank = next(r for r in Rank if r.symbol == rank_part)
    suit = next(s for s in Suit if s.symbol == suit_symbol)
    return Card.make(rank, suit, deck)


def cards(*labels: str) -> tuple[Card, ...]:
    return tuple(card(label) for label in labels)


def state_with(
    hands: Sequence[Sequence[Card]],
    *,
    pile: Sequence[Card] = (),
    required: Rank | None = Rank.ACE,
    turn: int = 0,
    rules: Rules | None = None,
    plays: int = 0,
) -> GameState:
    """A game in progress with explicit hands; the rest of the deck sits in the pile (so cards
    are conserved) unless ``pile`` names it."""
    names = "ABCDEFGHIJ"
    held = {c for hand in hands for c in hand} | set(pile)
    rest = tuple(c for c in full_deck() if c not in held)
    return GameState(
        rules=rules or Rules(),
        players=tuple(
            Player(user_id=100 + i, name=names[i], hand=tuple(sorted(hand)))
            for i, hand in enumerate(hands)
        ),
        dealer=len(hands) - 1,
        turn=turn,
        required=required,
        pile=tuple(pile) + rest,
        plays=plays,
    )


def random_action(state: GameState, rng: random.Random) -> Action:
    """A legal action chosen at random, with bluffs, challenges and accepts."""
    if state.phase is Phase.FINAL_CHECK:
        seat = rng.choice(sorted(awaited(state)))
        claim = state.open_claims[-1]
        if rng.random() < 0.4:
            return Challenge(seat, claim.number)
        return Accept(seat, claim.number)
    challengers = [
        (seat, claim)
        for seat in state.active_seats()
        for claim in challengeable(state, seat)
    ]
    if challengers and rng.random() < 0.25:
        seat, claim = rng.choice(challengers)
        return Challenge(seat, claim.number)
    seat = state.turn
    hand = list(state.players[seat].hand)
    count = rng.randint(1, play_limit(state, seat))
    rank = rng.choice(claimable_ranks(state))
    true_cards = [c for c in hand if c.rank is rank]
    if true_cards and rng.random() < 0.7:
        chosen = true_cards[:count]
    else:
        chosen = rng.sample(hand, count)
    return Play(seat, tuple(chosen), rank)


def play_out(state: GameState, rng: random.Random, max_steps: int = 10_000) -> GameState:
    for _ in range(max_steps):
        if state.phase is Phase.FINISHED:
            return state
        state, _events = apply(state, random_action(state, rng))
    raise AssertionError("game did not end")
