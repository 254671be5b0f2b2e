"""Computer players follow the source texts' tips, deterministically for a given rng."""

from __future__ import annotations

import dataclasses
import random

from tgcheat.engine.actions import Accept, Challenge, Pass, PassVote, Play
from tgcheat.engine.ai import choose_action, copies_unseen, lie_chance, sure_lie
from tgcheat.engine.cards import Rank
from tgcheat.engine.game import Seating, apply, new_game
from tgcheat.engine.rules import PRESETS, Rules
from tgcheat.engine.state import GameState, Phase
from tgcheat.engine.view import see, seen_claim

from .helpers import ai_action, cards, state_with

BIG_HAND = cards("7♣", "7♦", "K♦", "2♠", "3♠", "4♥", "5♥", "9♦", "10♣", "J♥")


def _calls(state: GameState, seat: int, tries: int = 400) -> int:
    return sum(
        isinstance(choose_action(state, seat, random.Random(i)), Challenge) for i in range(tries)
    )


def test_same_seed_same_game() -> None:
    def game(seed: int) -> list[object]:
        rng = random.Random(seed)
        seating = Seating(tuple((i, f"P{i}") for i in range(4)), dealer=0)
        state, _ = new_game(Rules(), seating, rng)
        actions: list[object] = []
        while state.phase is not Phase.FINISHED:
            action = ai_action(state, rng)
            actions.append(action)
            state, _ = apply(state, action)
        return actions

    assert game(3) == game(3)
    assert game(3) != game(4)


def test_plays_true_cards_when_it_can() -> None:
    state = state_with([BIG_HAND, cards("8♥"), cards("9♣")], required=Rank.SEVEN)
    for seed in range(30):
        action = choose_action(state, 0, random.Random(seed))
        assert isinstance(action, Play) and action.rank is Rank.SEVEN
        assert set(cards("7♣", "7♦")) <= set(action.cards)
        assert len(action.cards) <= 3


def test_without_the_rank_it_bluffs_with_one_card() -> None:
    state = state_with([BIG_HAND, cards("8♥"), cards("9♣")], required=Rank.QUEEN, rest_to=2)
    for seed in range(30):
        action = choose_action(state, 0, random.Random(seed))
        assert isinstance(action, Play) and len(action.cards) == 1
        assert action.rank is Rank.QUEEN


def test_under_ascending_it_bluffs_with_the_rank_it_needs_last() -> None:
    # Three players, queens required: this player next claims 2, then 5, 8, J, A, 4...
    hand = cards("2♠", "5♥", "6♦", "K♣")
    state = state_with([hand, cards("8♥"), cards("9♣")], required=Rank.QUEEN, rest_to=2)
    action = choose_action(state, 0, random.Random(0))
    assert isinstance(action, Play) and action.cards == cards("6♦")


def test_an_honest_last_play_goes_out() -> None:
    state = state_with([cards("7♣", "7♦"), cards("8♥"), cards("9♣")], required=Rank.SEVEN)
    for seed in range(10):
        assert choose_action(state, 0, random.Random(seed)) == Play(
            0, cards("7♣", "7♦"), Rank.SEVEN
        )


def test_names_the_rank_it_holds_most() -> None:
    hand = cards("9♣", "9♦", "9♥", "K♦", "2♠", "3♠", "4♥", "5♥")
    for preset in ("free", "verju"):
        state = state_with([hand, cards("8♥"), cards("9♠")], required=None, rules=PRESETS[preset])
        action = choose_action(state, 0, random.Random(1))
        assert isinstance(action, Play) and action.rank is Rank.NINE


def test_challenges_large_claims_more_than_single_cards() -> None:
    def claim_of(played: tuple[object, ...]) -> GameState:
        hands = [BIG_HAND, cards("8♥", "3♣", "4♣", "5♣", "6♣"), cards("9♣", "10♦")]
        state = state_with(hands, required=Rank.SEVEN, rest_to=2)
        state, _ = apply(state, Play(0, played, Rank.SEVEN))  # type: ignore[arg-type]
        return state

    single = _calls(claim_of(cards("K♦")), 1)
    four = _calls(claim_of(cards("K♦", "2♠", "3♠", "4♥")), 1)
    assert four > 1.5 * single


def test_challenges_nearly_empty_hands_more_and_is_careful_on_a_big_pile() -> None:
    def claim(hand_after: int, pile: int) -> GameState:
        a = BIG_HAND[: hand_after + 1]
        hands = [a, cards("8♥", "3♣", "4♣", "5♣", "6♣"), cards("9♣", "10♦")]
        state = state_with(hands, required=Rank.SEVEN, rest_to=2)
        rest = state.players[2].hand
        moved = rest[:pile]
        c = dataclasses.replace(state.players[2], hand=rest[pile:])
        state = dataclasses.replace(state, pile=moved, players=(*state.players[:2], c))
        state, _ = apply(state, Play(0, (a[-1],), Rank.SEVEN))
        return state

    many_cards, few_cards = _calls(claim(8, 2), 1), _calls(claim(1, 2), 1)
    assert few_cards > 1.5 * many_cards
    small_pile, big_pile = _calls(claim(8, 2), 1), _calls(claim(8, 25), 1)
    assert small_pile > 1.5 * big_pile


def test_card_counting() -> None:
    hands = [cards("Q♣", "3♦", "4♦", "9♠"), cards("Q♥", "Q♠", "2♣"), cards("5♦", "6♣")]
    state = state_with(hands, required=Rank.QUEEN)
    assert copies_unseen(see(state, 1), Rank.QUEEN) == 2
    state, _ = apply(state, Play(0, cards("Q♣", "3♦"), Rank.QUEEN))
    claim = state.open_claims[-1]
    # Two queens claimed, two unseen: possible, but it needs every one of them.
    assert not sure_lie(see(state, 1), seen_claim(claim, 1))
    holder = lie_chance(see(state, 1), seen_claim(claim, 1))
    assert holder > lie_chance(see(state, 2), seen_claim(claim, 2))
    # The claimant knows their own play.
    assert copies_unseen(see(state, 0), Rank.QUEEN) == 3


def test_answers_a_final_play_and_only_when_awaited() -> None:
    hands = [cards("Q♣", "3♦"), cards("8♥", "9♣"), cards("5♦", "6♣")]
    state = state_with(hands, required=Rank.QUEEN, rules=PRESETS["verju"])
    state, _ = apply(state, Play(0, cards("Q♣", "3♦"), Rank.QUEEN))
    answers = {type(choose_action(state, 1, random.Random(i))) for i in range(50)}
    assert answers == {Challenge, Accept}
    assert choose_action(state, 2, random.Random(0)) is None
    assert choose_action(state, 0, random.Random(0)) is None


def test_passes_when_the_rank_is_exhausted() -> None:
    rules = Rules().with_option("passing", "exhausted")
    hands = [cards("K♦", "2♠", "3♠"), cards("8♥", "3♣")]
    state = state_with(
        [*hands, cards("5♦")],
        pile=cards("7♣", "7♦", "7♥", "7♠"),
        required=Rank.SEVEN,
        rules=rules,
        rest_to=2,
    )
    assert choose_action(state, 0, random.Random(0)) == Pass(0)


def test_votes_and_asks_to_pass() -> None:
    rules = Rules().with_option("passing", "vote")
    hands = [BIG_HAND, cards("8♥", "3♣"), cards("5♦", "6♦", "9♥", "9♠")]
    state = state_with(hands, required=Rank.QUEEN, rules=rules, rest_to=2)
    state, _ = apply(state, Pass(0))
    # The asker holds many cards: no threat, so a player with fewer agrees.
    assert choose_action(state, 1, random.Random(0)) == PassVote(1, True)
    assert choose_action(state, 0, random.Random(0)) is None


def test_nothing_to_do_returns_none() -> None:
    state = state_with([BIG_HAND, cards("8♥"), cards("9♣")], required=Rank.SEVEN)
    assert choose_action(state, 1, random.Random(0)) is None
    assert choose_action(state, 7, random.Random(0)) is None
