"""The awards of a finished game, from its tally: the best liar (most bluffs nobody caught),
the sharpest eye (most bluffs caught) and the unluckiest (the biggest pile taken). An award
nobody earned is not given; players level at the top share it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tgcheat.table.chronicle import GameTally, SeatTally


@dataclass(frozen=True, slots=True)
class Award:
    #: The seats that earned it (more than one: a tie), in seating order.
    seats: tuple[int, ...]
    #: What earned it: bluffs not caught, bluffs caught, or the cards of the pile.
    count: int


def best_liar(tally: GameTally, players: int) -> Award | None:
    return _leaders(tally, players, lambda seat: seat.bluffs_unseen)


def sharpest_eye(tally: GameTally, players: int) -> Award | None:
    return _leaders(tally, players, lambda seat: seat.right_calls)


def unluckiest(tally: GameTally) -> Award | None:
    """Whoever took the biggest pile (the first to take a pile of that size: the tally keeps
    one)."""
    if tally.biggest_pile is None:
        return None
    taken, seat = tally.biggest_pile
    return Award((seat,), taken)


def _leaders(tally: GameTally, players: int, score: Callable[[SeatTally], int]) -> Award | None:
    scores = [score(tally.of(seat)) for seat in range(players)]
    best = max(scores, default=0)
    if best <= 0:
        return None
    return Award(tuple(seat for seat, value in enumerate(scores) if value == best), best)
