"""Ranks, cards and decks.

A card is an ``int`` subclass so that a hand serialises as a plain JSON list of numbers and
still reads as ``card.rank`` in the engine. Suits never matter for a rule (RULES.md); they
exist only to show a revealed play with some flavour.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping

CARDS_PER_DECK = 52
JOKERS_PER_DECK = 2
# Room for the 52 cards and 2 jokers of each deck, so that a card's deck follows from its number.
CODES_PER_DECK = CARDS_PER_DECK + JOKERS_PER_DECK


class Rank(enum.IntEnum):
    """A card's rank, in the order of the ascending sequence (A, 2–10, J, Q, K)."""

    ACE = 1
    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    JOKER = 14

    @property
    def symbol(self) -> str:
        """The short name a player reads on a card: A, 2–10, J, Q, K or ★ for a joker."""
        return _SYMBOLS[self]

    @property
    def code(self) -> str:
        """One character that names the rank, for compact callback data."""
        return _CODES[self]

    @classmethod
    def from_code(cls, code: str) -> Rank:
        try:
            return _BY_CODE[code]
        except KeyError:
            raise ValueError(f"no rank has code {code!r}") from None

    def next_in_sequence(self) -> Rank:
        """The rank that follows in the ascending sequence: K is followed by A again."""
        return Rank.ACE if self is Rank.KING else Rank(self + 1)


#: The ranks a claim may name (a joker is never claimed: it stands for the claimed rank).
CLAIMABLE_RANKS: tuple[Rank, ...] = tuple(r for r in Rank if r is not Rank.JOKER)

_SYMBOLS = {r: str(int(r)) for r in Rank} | {
    Rank.ACE: "A",
    Rank.JACK: "J",
    Rank.QUEEN: "Q",
    Rank.KING: "K",
    Rank.JOKER: "★",
}
_CODES = {r: _SYMBOLS[r] for r in Rank} | {Rank.TEN: "T", Rank.JOKER: "W"}
_BY_CODE = {code: rank for rank, code in _CODES.items()}


class Suit(enum.IntEnum):
    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    @property
    def symbol(self) -> str:
        return "♣♦♥♠"[self]


class Card(int):
    """One physical card: its number says its deck, suit and rank, so two decks never clash."""

    __slots__ = ()

    @classmethod
    def make(cls, rank: Rank, suit: Suit = Suit.CLUBS, deck: int = 0) -> Card:
        if rank is Rank.JOKER:
            return cls(deck * CODES_PER_DECK + CARDS_PER_DECK + (suit % JOKERS_PER_DECK))
        return cls(deck * CODES_PER_DECK + suit * 13 + (rank - 1))

    @property
    def deck(self) -> int:
        return int(self) // CODES_PER_DECK

    @property
    def rank(self) -> Rank:
        return _RANK_AT[int(self) % CODES_PER_DECK]

    @property
    def suit(self) -> Suit | None:
        return _SUIT_AT[int(self) % CODES_PER_DECK]

    @property
    def label(self) -> str:
        """How a revealed card is shown: rank and suit, e.g. ``7♣`` or ``★``."""
        suit = self.suit
        return self.rank.symbol + (suit.symbol if suit is not None else "")

    def __repr__(self) -> str:
        return f"Card({self.label}{'' if self.deck == 0 else f'/{self.deck}'})"


# A card's rank and suit by its index within its deck (a lookup: ranks are read very often).
_RANK_AT: tuple[Rank, ...] = tuple(
    Rank.JOKER if i >= CARDS_PER_DECK else Rank(i % 13 + 1) for i in range(CODES_PER_DECK)
)
_SUIT_AT: tuple[Suit | None, ...] = tuple(
    None if i >= CARDS_PER_DECK else Suit(i // 13) for i in range(CODES_PER_DECK)
)


def full_deck(decks: int = 1, jokers: bool = False) -> tuple[Card, ...]:
    """Every card of ``decks`` 52-card decks, with two jokers per deck when ``jokers``."""
    cards: list[Card] = []
    for deck in range(decks):
        base = deck * CODES_PER_DECK
        cards.extend(Card(base + i) for i in range(CARDS_PER_DECK))
        if jokers:
            cards.extend(Card(base + CARDS_PER_DECK + j) for j in range(JOKERS_PER_DECK))
    return tuple(cards)


def count_by_rank(cards: Iterable[Card]) -> dict[Rank, int]:
    """How many cards of each rank, in rank order (how a hand is shown: grouped by rank)."""
    # Counted by rank number in a list: every hand is counted for every play shown.
    counts = [0] * (len(_RANKS) + 1)
    for card in cards:
        counts[_RANK_AT[card % CODES_PER_DECK]] += 1
    return {rank: counts[rank] for rank in _RANKS if counts[rank]}


_RANKS = tuple(Rank)


def pick_by_rank(hand: Iterable[Card], wanted: Mapping[Rank, int]) -> tuple[Card, ...] | None:
    """Cards of ``hand`` with ``wanted[rank]`` cards of each rank, or None if the hand lacks them.

    Players choose cards by rank because suits never matter; which copy is played is the
    engine's choice, made deterministically (lowest number first) so a retried transaction
    picks the same cards.
    """
    chosen: list[Card] = []
    for rank, count in wanted.items():
        if count <= 0:
            return None
        of_rank = sorted(card for card in hand if card.rank is rank)
        if len(of_rank) < count:
            return None
        chosen.extend(of_rank[:count])
    return tuple(chosen)
