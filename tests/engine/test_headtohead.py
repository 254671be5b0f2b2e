"""``hard`` head to head (``tgcheat.engine.headtohead``): claims within the copies the
opponent cannot rule out, games played out to the end, and a small pile taken on purpose."""

from __future__ import annotations

import dataclasses
import random

from tgcheat.engine.actions import Play
from tgcheat.engine.cards import Rank
from tgcheat.engine.game import apply
from tgcheat.engine.headtohead import RANKS, WIN, Duel, Opponent, play_out
from tgcheat.engine.knowledge import Memory, count_cards, new_knowledge, remember, slot
from tgcheat.engine.strategies import duel_of, head_to_head, opponent_of, strategy
from tgcheat.engine.view import see

from .helpers import cards, state_with

#: An opponent that calls what it can prove and nothing else, but every final play.
PROVES_ONLY = Opponent(proves=0.95, doubts=(0.0,) * 5, final=1.0)


def counts(*symbols: str) -> list[int]:
    """Counts per rank slot of the ranks named by their symbols (``A``, ``2``, …, ``K``)."""
    result = [0] * RANKS
    for symbol in symbols:
        result[slot(next(r for r in Rank if r.symbol == symbol))] += 1
    return result


def duel(mine: list[int], theirs: list[int], pile: list[int], rank: str) -> Duel:
    """A position whose pile holds only the opponent's true claims ``pile``."""
    return Duel(
        mine=mine,
        mine_pile=[0] * RANKS,
        mine_claimed=[0] * RANKS,
        theirs=theirs,
        theirs_pile=list(pile),
        theirs_claimed=list(pile),
        rank=slot(next(r for r in Rank if r.symbol == rank)),
        limit=4,
    )


def test_a_claim_within_its_own_copies_is_covered() -> None:
    # One king in hand and one of its own kings played under another claim: nobody else can
    # place those two, so a claim of two kings (with any cards) cannot be proved false.
    position = duel(counts("K", "5"), counts("A", "2"), [0] * RANKS, "K")
    position.mine_pile = counts("K")
    position.mine_claimed = counts("9")
    assert position.cover() == 2
    assert position.candidates() == [(1, 0), (1, 1), (2, 1)]
    # Its own earlier claim of a king on the pile counts as one of those already.
    position.mine_claimed = counts("K")
    assert position.cover() == 1


def test_the_game_played_out_goes_to_whoever_is_not_caught() -> None:
    def from_ace(mine: list[int], theirs: list[int]) -> float:
        empty = [[0] * RANKS for _ in range(4)]
        return play_out(mine, empty[0], empty[1], theirs, empty[2], empty[3], 0, 4)

    # The opponent holds the ace it must claim, and nothing else: it goes out at once.
    assert from_ace(counts("2", "2"), counts("A")) == -WIN
    # It holds no ace: its lie is caught, and this player's two 2s go out on its next turn.
    assert from_ace(counts("2", "2"), counts("6", "6")) == WIN - 1


def test_a_small_pile_is_taken_on_purpose_when_the_game_played_out_says_so() -> None:
    # This player must claim kings holding A 2 3 4 J K; the opponent holds A K, its two
    # queens on the pile. The king alone loses the game played out; a king and another card,
    # a lie the opponent proves (it holds the only other king it cannot see), takes the
    # pile and its queens back, and wins it.
    position = duel(counts("A", "2", "3", "4", "J", "K"), counts("A", "K"), counts("Q", "Q"), "K")
    values = {
        (count, true): position.value(position.played(count, true), PROVES_ONLY)
        for count, true in position.candidates()
    }
    assert values[(1, 1)] < 0 < values[(2, 1)]
    assert max(values, key=lambda option: values[option]) == (2, 1)
    # Against an opponent caught lying with several cards, no pile is taken on purpose.
    position.takes_piles = False
    assert all(count <= position.cover() for count, _ in position.candidates())


def _hard_after_two_queens(multi_lies: int) -> Play:
    """The position of the last test in a real game: three seats, the third gone with the
    rest of the deck (this player saw it go), the opponent's two queens just claimed."""
    hard_hand = cards("A♣", "2♣", "3♣", "4♣", "J♣", "K♣")
    state = state_with(
        [hard_hand, cards("A♦", "K♦", "Q♣", "Q♦"), ()],
        required=Rank.QUEEN,
        turn=1,
        rest_to=2,
    )
    gone = state.players[2]
    state = dataclasses.replace(
        state,
        players=(*state.players[:2], dataclasses.replace(gone, hand=(), left=True)),
        set_aside=gone.hand,
    )
    knowledge = dataclasses.replace(
        new_knowledge(state, 0, Memory.FULL), out=count_cards(gone.hand)
    )
    before = state
    state, events = apply(state, Play(1, cards("Q♣", "Q♦"), Rank.QUEEN))
    knowledge = remember(knowledge, before, events, state)
    seats = list(knowledge.seats)
    seats[1] = dataclasses.replace(seats[1], multi_lies=multi_lies, multi_shown=multi_lies)
    knowledge = dataclasses.replace(knowledge, seats=tuple(seats))
    view = see(state, 0)
    assert head_to_head(view)
    position = duel_of(view, knowledge, opponent_of(knowledge.seats[1]))
    assert position.theirs == counts("A", "K") and position.theirs_pile == counts("Q", "Q")
    action = strategy("hard").choose(view, knowledge, random.Random(0), 0)
    assert isinstance(action, Play) and action.rank is Rank.KING
    return action


def test_hard_head_to_head_takes_the_small_pile_the_game_played_out_favours() -> None:
    play = _hard_after_two_queens(multi_lies=0)
    assert len(play.cards) == 2 and cards("K♣")[0] in play.cards
    # Once the opponent was caught padding a lie, it claims no more than it covers.
    assert len(_hard_after_two_queens(multi_lies=1).cards) == 1
