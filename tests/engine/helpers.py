"""Building explicit game states and driving random games, for the engine's tests."""

from __future__ import annotations

import random
from collections.abc import Sequence

from tgcheat.engine.actions import (
    Accept,
    Action,
    Challenge,
    Pass,
    PassVote,
    Play,
    PullTrigger,
    ResolveChallenges,
)
from tgcheat.engine.autoplay import next_action
from tgcheat.engine.cards import Card, Rank, Suit, full_deck
from tgcheat.engine.events import Event
from tgcheat.engine.game import (
    apply,
    awaited,
    can_pass,
    challengeable,
    claimable_ranks,
    must_call,
    pending_deadline_ms,
    play_limit,
)
from tgcheat.engine.rules import Jokers, Rules
from tgcheat.engine.state import GameState, Phase, Player
from tgcheat.engine.strategies import DEFAULT_STRATEGY, ComputerPlayers


def card(label: str, deck: int = 0) -> Card:
    """A card from a label such as ``7♣``, ``10♦``, ``K♠`` or ``★`` (a joker)."""
    if label.startswith("★"):
        return Card.make(Rank.JOKER, Suit(int(label[1:] or 0)), deck)
    rank_part, suit_symbol = label[:-1], label[-1]
    rank = next(r for r in Rank if r.symbol == rank_part)
    suit = next(s for s in Suit if s.symbol == suit_symbol)
    return Card.make(rank, suit, deck)


def cards(*labels: str, deck: int = 0) -> tuple[Card, ...]:
    return tuple(card(label, deck) for label in labels)


def state_with(
    hands: Sequence[Sequence[Card]],
    *,
    pile: Sequence[Card] | None = None,
    required: Rank | None = Rank.ACE,
    turn: int = 0,
    rules: Rules | None = None,
    plays: int = 0,
    rest_to: int | None = None,
) -> GameState:
    """A game in progress with explicit hands. The rest of the deck(s) sits in the pile (so
    cards are conserved), or in the hand of seat ``rest_to`` when given (then the pile is
    exactly ``pile``)."""
    rules = rules or Rules()
    names = "ABCDEFGHIJ"
    pile = tuple(pile or ())
    held = {c for hand in hands for c in hand} | set(pile)
    deck = full_deck(rules.deck_count(len(hands)), rules.jokers is Jokers.WILD)
    rest = tuple(c for c in deck if c not in held)
    final_hands = [tuple(hand) for hand in hands]
    if rest_to is None:
        pile = pile + rest
    else:
        final_hands[rest_to] += rest
    return GameState(
        rules=rules,
        players=tuple(
            Player(user_id=100 + i, name=names[i], hand=tuple(sorted(hand)))
            for i, hand in enumerate(final_hands)
        ),
        dealer=len(hands) - 1,
        turn=turn,
        required=required,
        pile=pile,
        plays=plays,
    )


def random_action(state: GameState, rng: random.Random, now_ms: int = 0) -> Action:
    """A legal action chosen at random, with bluffs, challenges, accepts, passes and votes."""
    deadline = pending_deadline_ms(state)
    if state.pull_by is not None and deadline is not None:
        return PullTrigger(max(now_ms, deadline))
    if deadline is not None:
        joiners = [(s, c) for s in state.active_seats() for c in challengeable(state, s)]
        if joiners and now_ms <= deadline and rng.random() < 0.4:
            seat, claim = rng.choice(joiners)
            return Challenge(seat, claim.number, now_ms)
        return ResolveChallenges(max(now_ms, deadline))
    if state.phase is Phase.FINAL_CHECK:
        seat = rng.choice(sorted(awaited(state)))
        claim = state.open_claims[-1]
        if rng.random() < 0.4:
            return Challenge(seat, claim.number, now_ms)
        return Accept(seat, claim.number)
    if state.vote_by is not None and rng.random() < 0.9:
        seat = rng.choice(sorted(awaited(state)))
        return PassVote(seat, rng.random() < 0.7)
    challengers = [
        (seat, claim) for seat in state.active_seats() for claim in challengeable(state, seat)
    ]
    if challengers and rng.random() < 0.25:
        seat, claim = rng.choice(challengers)
        return Challenge(seat, claim.number, now_ms)
    seat = state.turn
    if must_call(state):
        return Challenge(seat, state.open_claims[-1].number, now_ms)
    if can_pass(state, seat) and rng.random() < 0.3:
        return Pass(seat)
    hand = list(state.players[seat].hand)
    count = rng.randint(1, play_limit(state, seat))
    rank = rng.choice(claimable_ranks(state))
    true_cards = [c for c in hand if c.rank is rank]
    chosen = true_cards[:count] if true_cards and rng.random() < 0.7 else rng.sample(hand, count)
    return Play(seat, tuple(chosen), rank)


def ai_action(state: GameState, rng: random.Random, now_ms: int = 0) -> Action:
    """The next action of a table of the first computer players (``ai.choose_action``, who
    remember nothing) who act only when the game waits for them (the clock when it waits for
    it): ``next_action`` without bystanders."""
    action = next_action(state, rng, now_ms, None)
    if action is None:
        raise AssertionError("nobody can act")
    return action


class ComputerTable:
    """A driver of computer players with memory, for tests that apply actions themselves:
    call it for the next action (``next_action`` without bystanders), and tell it every
    ``apply`` with ``seen`` so that each player remembers what it saw."""

    def __init__(self, state: GameState, strategies: Sequence[str] | None = None) -> None:
        names = strategies or [DEFAULT_STRATEGY] * len(state.players)
        self.players = ComputerPlayers.seat(state, names)

    def __call__(self, state: GameState, rng: random.Random, now_ms: int = 0) -> Action:
        action = next_action(state, rng, now_ms, None, players=self.players)
        if action is None:
            raise AssertionError("nobody can act")
        return action

    def seen(self, before: GameState, events: Sequence[Event], after: GameState) -> None:
        self.players = self.players.remember(before, events, after)


def play_out(state: GameState, rng: random.Random, max_steps: int = 10_000) -> GameState:
    for step in range(max_steps):
        if state.phase is Phase.FINISHED:
            return state
        state, _events = apply(state, random_action(state, rng, step * 1000))
    raise AssertionError("game did not end")
