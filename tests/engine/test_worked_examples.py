"""The worked examples of RULES.md, as scenario tests."""

from __future__ import annotations

import pytest

from tgcheat.engine.actions import Accept, Challenge, Play
from tgcheat.engine.cards import Rank
from tgcheat.engine.events import ChallengeResolved, Event, GameEnded, TurnStarted
from tgcheat.engine.game import IllegalAction, Refusal, apply
from tgcheat.engine.state import EndReason, GameState, Phase

from .helpers import card, cards, state_with


def test_example_1_lie_caught_claimant_takes_pile_and_challenger_plays_the_next_rank() -> None:
    # 7 is required; the pile holds 5 cards. A plays 7♣ K♦ claiming "two 7s"; B challenges.
    a_hand = cards("7♣", "K♦", "2♠")
    b_hand = cards("8♥", "3♣")
    c_hand = cards("5♦", "9♣")
    pile = cards("A♣", "2♣", "3♦", "4♦", "5♣")
    state = state_with([a_hand, b_hand, c_hand], pile=pile, required=Rank.SEVEN)
    # The rest of the deck sits with C so that the pile holds exactly five cards.
    rest = tuple(c for c in state.pile if c not in pile)
    state = state_with([a_hand, b_hand, c_hand + rest], pile=pile, required=Rank.SEVEN)
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
    import random

    from tgcheat.engine.game import Seating, new_game
    from tgcheat.engine.rules import Rules

    players = tuple((i, f"P{i}") for i in range(5))
    state, events = new_game(Rules(), Seating(players, dealer=3), random.Random(1))
    sizes = [len(p.hand) for p in state.players]
    # 52 cards to 5 players: dealt from seat 4, so seats 4 and 0 get the two extra cards.
    assert sizes == [11, 10, 10, 10, 11]
    assert state.turn == 4 and state.required is Rank.ACE
    assert TurnStarted(4, Rank.ACE) in events
