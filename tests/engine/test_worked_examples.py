"""The worked examples of RULES.md, as scenario tests."""

from __future__ import annotations

import dataclasses
import random

import pytest

from tgcheat.engine.actions import Accept, Challenge, Play
from tgcheat.engine.ai import choose_action, sure_lie
from tgcheat.engine.cards import CLAIMABLE_RANKS, Rank
from tgcheat.engine.events import (
    ChallengeResolved,
    Event,
    FinalPlayPending,
    GameEnded,
    TurnStarted,
)
from tgcheat.engine.game import (
    IllegalAction,
    InvalidAction,
    Refusal,
    Seating,
    apply,
    awaited,
    challengeable,
    claimable_ranks,
    new_game,
)
from tgcheat.engine.rules import PRESETS, Jokers, Rules
from tgcheat.engine.state import EndReason, GameState, Phase
from tgcheat.engine.view import see, seen_claim

from .helpers import card, cards, state_with


def test_example_1_lie_caught_claimant_takes_pile_and_challenger_plays_the_next_rank() -> None:
    # 7 is required; the pile holds 5 cards. A plays 7♣ K♦ claiming "two 7s"; B challenges.
    a_hand = cards("7♣", "K♦", "2♠")
    b_hand = cards("8♥", "3♣")
    c_hand = cards("5♦", "9♣")
    pile = cards("A♣", "2♣", "3♦", "4♦", "5♣")
    # The rest of the deck sits with C so that the pile holds exactly five cards.
    state = state_with([a_hand, b_hand, c_hand], pile=pile, required=Rank.SEVEN, rest_to=2)
    assert len(state.pile) == 5

    state, _ = apply(state, Play(0, cards("7♣", "K♦"), Rank.SEVEN))
    assert len(state.pile) == 7 and state.turn == 1 and state.required is Rank.EIGHT
    state, events = apply(state, Challenge(1, claim=1))

    reveal = next(e for e in events if isinstance(e, ChallengeResolved))
    assert reveal.lie and reveal.taker == 0 and reveal.taken == 7
    assert set(reveal.revealed) == {card("7♣"), card("K♦")}
    assert len(state.players[0].hand) == 1 + 7
    assert state.pile == ()
    # B, A's neighbour, plays next and must claim 8, although B was the challenger.
    assert state.turn == 1 and state.required is Rank.EIGHT
    assert TurnStarted(1, Rank.EIGHT) in events
    with pytest.raises(IllegalAction) as refused:
        apply(state, Play(1, cards("8♥"), Rank.SEVEN))
    assert refused.value.reason is Refusal.WRONG_RANK


def test_example_1_unchallenged_cards_stay_on_the_pile() -> None:
    state = state_with([cards("7♣", "K♦", "2♠"), cards("8♥"), cards("5♦")], required=Rank.SEVEN)
    before = len(state.pile)
    state, _ = apply(state, Play(0, cards("7♣", "K♦"), Rank.SEVEN))
    state, _ = apply(state, Play(1, cards("8♥"), Rank.EIGHT))
    assert len(state.pile) == before + 3
    # Once B has played, A's claim can no longer be challenged.
    with pytest.raises(IllegalAction) as refused:
        apply(state, Challenge(2, claim=1))
    assert refused.value.reason is Refusal.NO_SUCH_CLAIM


def _after_final_play(truthful: bool) -> tuple[GameState, list[Event]]:
    """A holds two cards and plays them as "two queens": A's last cards."""
    a_hand = cards("Q♣", "Q♦") if truthful else cards("Q♣", "3♦")
    state = state_with(
        [a_hand, cards("8♥", "9♣"), cards("5♦", "6♣"), cards("J♠")], required=Rank.QUEEN
    )
    state, events = apply(state, Play(0, a_hand, Rank.QUEEN))
    return state, events


def test_example_4_final_play_waits_until_every_other_player_accepts() -> None:
    state, _ = _after_final_play(truthful=False)
    assert state.phase is Phase.FINAL_CHECK
    with pytest.raises(IllegalAction) as refused:
        apply(state, Play(1, cards("8♥"), Rank.KING))
    assert refused.value.reason is Refusal.WAITING_FOR_FINAL
    state, _ = apply(state, Accept(1, 1))
    state, _ = apply(state, Accept(3, 1))
    assert state.phase is Phase.FINAL_CHECK
    with pytest.raises(IllegalAction):
        apply(state, Accept(1, 1))
    state, events = apply(state, Accept(2, 1))
    assert state.phase is Phase.FINISHED
    assert state.result is not None and state.result.winner == 0
    assert state.result.reason is EndReason.WENT_OUT
    # The others are placed by cards left: C and B hold 2, D holds 1.
    assert dict(state.result.places) == {0: 1, 3: 2, 1: 3, 2: 3}
    assert any(isinstance(e, GameEnded) for e in events)


def test_example_4_wrong_challenge_player_wins_and_challenger_takes_the_pile() -> None:
    state, _ = _after_final_play(truthful=True)
    pile = len(state.pile)
    state, _ = apply(state, Challenge(2, 1))
    assert state.phase is Phase.FINISHED and state.result is not None
    assert state.result.winner == 0
    assert len(state.players[2].hand) == 2 + pile


def test_example_4_caught_bluffing_player_takes_the_pile_and_play_goes_on() -> None:
    state, _ = _after_final_play(truthful=False)
    pile = len(state.pile)
    state, events = apply(state, Challenge(3, 1))
    assert state.phase is Phase.PLAYING
    assert len(state.players[0].hand) == pile
    # Play goes on with the claimant's neighbour, with the next rank of the sequence.
    assert state.turn == 1 and state.required is Rank.KING
    assert TurnStarted(1, Rank.KING) in events


def test_deal_starts_after_the_dealer_and_first_players_hold_one_more() -> None:
    players = tuple((i, f"P{i}") for i in range(5))
    state, events = new_game(Rules(), Seating(players, dealer=3), random.Random(1))
    sizes = [len(p.hand) for p in state.players]
    # 52 cards to 5 players: dealt from seat 4, so seats 4 and 0 get the two extra cards.
    assert sizes == [11, 10, 10, 10, 11]
    assert state.turn == 4 and state.required is Rank.ACE
    assert TurnStarted(4, Rank.ACE) in events


# --- 2. (French) `verju`: "two queens" opens the round; the next player's play believes it ---


def test_example_2_verju_round_rank_holds_and_a_play_closes_the_claim() -> None:
    verju = PRESETS["verju"]
    hands = [cards("Q♣", "Q♦", "3♠"), cards("8♥", "9♣"), cards("5♦", "6♣"), cards("J♠", "2♥")]
    state = state_with(hands, required=None, rules=verju)
    # A opens and names any rank.
    assert claimable_ranks(state) == CLAIMABLE_RANKS
    state, _ = apply(state, Play(0, cards("Q♣", "Q♦"), Rank.QUEEN))
    assert state.required is Rank.QUEEN and state.turn == 1
    # Only the next player may cry «Menteur !».
    with pytest.raises(IllegalAction) as refused:
        apply(state, Challenge(2, 1))
    assert refused.value.reason is Refusal.NOT_NEXT_PLAYER
    # Everyone after must claim queens, even without one.
    with pytest.raises(IllegalAction) as refused:
        apply(state, Play(1, cards("8♥"), Rank.EIGHT))
    assert refused.value.reason is Refusal.WRONG_RANK
    state, _ = apply(state, Play(1, cards("8♥"), Rank.QUEEN))
    assert state.required is Rank.QUEEN
    # B played instead of challenging: A's play can no longer be challenged, by anyone.
    for seat in (1, 2, 3):
        with pytest.raises(IllegalAction) as refused:
            apply(state, Challenge(seat, 1))
        assert refused.value.reason in (Refusal.NO_SUCH_CLAIM, Refusal.OWN_CLAIM)
    # B's own play is open to C alone.
    assert challengeable(state, 2) == (state.open_claims[-1],)
    assert challengeable(state, 3) == ()


# --- 3. (French) two queens in hand: a claim of three queens (one deck) is a lie --------------


@pytest.mark.parametrize("preset", ["verju", "cheat"])
def test_example_3_counting_proves_a_claim_of_three_queens_false(preset: str) -> None:
    rules = PRESETS[preset]
    hands = [cards("Q♣", "3♦", "4♦", "9♠"), cards("Q♥", "Q♠", "2♣"), cards("5♦", "6♣")]
    state = state_with(hands, required=Rank.QUEEN, rules=rules)
    state, _ = apply(state, Play(0, cards("Q♣", "3♦", "4♦"), Rank.QUEEN))
    claim = state.open_claims[-1]
    assert sure_lie(see(state, 1), seen_claim(claim, 1))
    # The player who sees only one queen of their own cannot be sure.
    assert not sure_lie(see(state, 2), seen_claim(claim, 2))
    # B challenges, whatever the dice say, and the reveal proves B right.
    for seed in range(20):
        assert choose_action(state, 1, random.Random(seed)) == Challenge(1, claim.number)
    state, events = apply(state, Challenge(1, claim.number))
    reveal = next(e for e in events if isinstance(e, ChallengeResolved))
    assert reveal.lie and reveal.taker == 0


def test_example_3_with_wild_jokers_three_queens_may_be_true() -> None:
    rules = dataclasses.replace(PRESETS["verju"], jokers=Jokers.WILD)
    hands = [cards("Q♣", "★0", "★1", "9♠"), cards("Q♥", "Q♠", "2♣"), cards("5♦", "6♣")]
    state = state_with(hands, required=Rank.QUEEN, rules=rules)
    state, _ = apply(state, Play(0, cards("Q♣", "★0", "★1"), Rank.QUEEN))
    claim = state.open_claims[-1]
    assert not sure_lie(see(state, 1), seen_claim(claim, 1))
    state, events = apply(state, Challenge(1, claim.number))
    reveal = next(e for e in events if isinstance(e, ChallengeResolved))
    # Jokers count as the claimed rank: the claim was true and B takes the pile.
    assert not reveal.lie and reveal.taker == 1


# --- 4. (French) `verju`: the next player answers the last cards -----------------------------


def _verju_final_play(truthful: bool) -> GameState:
    a_hand = cards("Q♣", "Q♦") if truthful else cards("Q♣", "3♦")
    hands = [a_hand, cards("8♥", "9♣"), cards("5♦", "6♣"), cards("J♠")]
    state = state_with(hands, required=Rank.QUEEN, rules=PRESETS["verju"])
    state, events = apply(state, Play(0, a_hand, Rank.QUEEN))
    assert state.phase is Phase.FINAL_CHECK
    assert FinalPlayPending(state.open_claims[-1], frozenset({1})) in events
    return state


def test_example_4_verju_only_the_next_player_answers() -> None:
    state = _verju_final_play(truthful=False)
    assert awaited(state) == {1}
    for seat in (2, 3):
        for action in (Accept(seat, 1), Challenge(seat, 1)):
            with pytest.raises(IllegalAction) as refused:
                apply(state, action)
            assert refused.value.reason is Refusal.NOT_NEXT_PLAYER
    with pytest.raises(IllegalAction) as refused:
        apply(state, Play(1, cards("8♥"), Rank.QUEEN))
    assert refused.value.reason is Refusal.WAITING_FOR_FINAL


def test_example_4_verju_believed_the_player_wins_even_a_bluff() -> None:
    state = _verju_final_play(truthful=False)
    state, _ = apply(state, Accept(1, 1))  # «Je te crois»
    assert state.result is not None and state.result.winner == 0
    assert state.result.reason is EndReason.WENT_OUT


def test_example_4_verju_wrongly_challenged_the_player_wins_and_the_challenger_takes_the_pile() -> (
    None
):
    state = _verju_final_play(truthful=True)
    pile = len(state.pile)
    state, _ = apply(state, Challenge(1, 1))  # «Menteur !»
    assert state.result is not None and state.result.winner == 0
    assert len(state.players[1].hand) == 2 + pile


def test_example_4_verju_caught_bluffing_takes_the_pile_and_the_winner_opens() -> None:
    state = _verju_final_play(truthful=False)
    pile = len(state.pile)
    state, events = apply(state, Challenge(1, 1))
    assert state.phase is Phase.PLAYING
    assert len(state.players[0].hand) == pile and state.pile == ()
    # `winner_opens`: B, who unmasked the bluff, opens a new round and names any rank.
    assert state.turn == 1 and state.required is None
    assert TurnStarted(1, None) in events


# --- 5. (Italian) two decks: 104 cards, a play is still 1–4 cards -----------------------------


@pytest.mark.parametrize(("players", "decks"), [(7, "auto"), (10, "auto"), (6, "2")])
def test_example_5_two_decks(players: int, decks: str) -> None:
    rules = Rules().with_option("players", "3-10").with_option("decks", decks)
    seating = Seating(tuple((i, f"P{i}") for i in range(players)), dealer=0)
    state, _ = new_game(rules, seating, random.Random(5))
    assert state.deck_size == 104
    assert len({c for p in state.players for c in p.hand}) == 104
    sizes = [len(p.hand) for p in state.players]
    assert max(sizes) - min(sizes) <= 1
    # Dealt from the player after the dealer: they hold the extra cards.
    assert sizes[1] == max(sizes)
    seat = state.turn
    hand = state.players[seat].hand
    with pytest.raises(InvalidAction) as refused:
        apply(state, Play(seat, hand[:5], Rank.ACE))
    assert refused.value.reason is Refusal.BAD_CARD_COUNT
    state, _ = apply(state, Play(seat, hand[:4], Rank.ACE))
    assert len(state.pile) == 4


def test_example_5_one_deck_up_to_six_players() -> None:
    seating = Seating(tuple((i, f"P{i}") for i in range(6)), dealer=2)
    state, _ = new_game(Rules(), seating, random.Random(5))
    assert state.deck_size == 52
    # Two queens in two decks: eight copies exist, so three queens are possible.
    rules = Rules(decks=2)
    hands = [cards("Q♣", "3♦", "4♦", "9♠"), cards("Q♥", "Q♠", "2♣"), cards("5♦", "6♣")]
    state = state_with(hands, required=Rank.QUEEN, rules=rules)
    state, _ = apply(state, Play(0, cards("Q♣", "3♦", "4♦"), Rank.QUEEN))
    assert state.deck_size == 104
    assert not sure_lie(see(state, 1), seen_claim(state.open_claims[-1], 1))
