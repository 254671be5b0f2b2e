"""``hard`` head to head: its turn planned by playing the rest of the game out.

With two players and the ranks ascending, almost everything is known to both: the cards a
player cannot see are the other's hand and the other's cards on the pile, and a claim is
provably false exactly when it needs more copies of its rank than the claimant can still have
(its hand and its own pile cards, less its earlier claims of the rank on the pile: the other
takes those as copies already there). So the player can *cover* a claim of the rank it must
claim with any cards, as long as it claims no more than those copies; every card beyond that
is a lie the other can prove.

The position is kept as counts per rank (``Duel``): this player's hand, its cards and its
claims on the pile, and the opponent's hand, cards and claims as this player believes them
(every card it cannot place is the opponent's; the opponent's claims left standing are taken
as true, the cards of a pile it took are known). Each candidate play (how many cards, how
many of them true, the others those whose rank comes last) is weighed by playing the game out
from it (``play_out``), both sides by a fixed, simple policy: the opponent plays every true
card it holds, else one card, the one whose rank comes last for it, and calls what it can
prove; this player claims as many cards as it covers, true ones first, and is caught when it
covers none.

A lie the opponent can prove is weighed too while this player could have covered its claim:
taking a small pile on purpose often shortens its game (the copies of ranks it lacks come
with it). The plan assumes an opponent who lies only with one card when it must: one caught
in a lie of several cards does not play so, and against it no pile is taken on purpose (two
players doing so would hand piles back and forth for ever).

What the opponent does with this player's claim right after the candidate is what this game
has shown of it (``Opponent``): how surely it calls a claim it can prove, how often one it
cannot, and how often it challenges a final play; each outcome is played out and weighed by
its chance.

A played-out game scores ``WIN`` less the plies it took when this player goes out first,
``-WIN`` plus the plies when the opponent does (a loss put off leaves more for the plan to get
wrong), and the difference in hand sizes when it has not ended within ``PLIES``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

#: The claimable ranks, A to K, by slot (``knowledge.slot``).
RANKS = 13
#: With two players the required rank moves two steps between one player's turns.
STEP = 2
#: What going out first scores, less the plies it took.
WIN = 1000.0
#: Plies a game is played out for at most.
PLIES = 60
#: What a card more in the opponent's hand than in this player's is worth in a game played
#: out to ``PLIES`` without an end.
CARD = 5.0
#: An outcome weighed less than this is not played out.
NEGLIGIBLE = 0.1
#: ``knowledge.claim_kind`` of a true claim of one card, of more, and of a covered lie.
TRUE_ONE = 0
TRUE_MORE = 1
COVERED_LIE = 4


@dataclass(frozen=True, slots=True)
class Opponent:
    """What this game has shown of how the one opponent answers this player's claims."""

    #: The chance it calls a claim its cards prove false.
    proves: float
    #: The chance it calls a claim it cannot prove false, by ``knowledge.claim_kind``.
    doubts: Sequence[float]
    #: The chance it challenges a final play it cannot prove false.
    final: float

    @property
    def calls_finals(self) -> bool:
        """Whether a final bluff is more likely called than not (how a game is played out)."""
        return self.final >= 0.5


@dataclass(slots=True)
class Duel:
    """A head-to-head position, as this player believes it, counts per rank slot."""

    mine: list[int]
    mine_pile: list[int]
    mine_claimed: list[int]
    theirs: list[int]
    theirs_pile: list[int]
    theirs_claimed: list[int]
    #: The slot of the rank this player must claim now.
    rank: int
    #: Most cards in one play.
    limit: int
    #: Whether a final bluff of this player is called when the game is played out.
    final_called: bool = True
    #: Whether it weighs a lie the opponent can prove while it covers its claim (taking the
    #: pile on purpose, for the cards in it).
    takes_piles: bool = True
    #: The score of the game played out after a lie of this turn is caught (the same for
    #: every lie: its cards come back with the pile), once known.
    _caught: float | None = field(default=None, init=False, repr=False)

    def cover(self) -> int:
        """How many cards this player can claim of its rank now without the opponent being
        able to prove the claim false."""
        r = self.rank
        return max(0, self.mine[r] + self.mine_pile[r] - self.mine_claimed[r])

    def candidates(self) -> list[tuple[int, int]]:
        """The plays worth weighing, as (cards, true cards among them): every number of
        cards it covers, with as many true ones as it can and as few; and one card more than
        it covers (more is caught all the same): a lie the opponent can prove, forced when it
        covers nothing, else weighed only when ``takes_piles``."""
        held = self.mine[self.rank]
        size = sum(self.mine)
        most = min(self.limit, size, self.cover() + 1)
        options = []
        for count in range(1, most + 1):
            if count > self.cover():
                if self.takes_piles or count == 1:
                    options.append((count, min(count, held)))
                continue
            low, high = max(0, count - (size - held)), min(count, held)
            options.extend((count, true) for true in sorted({low, high}))
        return options

    def played(self, count: int, true: int) -> list[int]:
        """The cards of a candidate play: ``true`` of the rank, the others those whose rank
        comes last for this player."""
        cards = [0] * RANKS
        cards[self.rank] = true
        left = list(self.mine)
        left[self.rank] = 0
        for _ in range(count - true):
            other = farthest(left, self.rank)
            left[other] -= 1
            cards[other] += 1
        return cards

    def value(self, cards: Sequence[int], opponent: Opponent) -> float:
        """The expected score of playing ``cards`` now (see the module)."""
        r = self.rank
        count = sum(cards)
        mine = [m - c for m, c in zip(self.mine, cards, strict=True)]
        mine_pile = [p + c for p, c in zip(self.mine_pile, cards, strict=True)]
        mine_claimed = list(self.mine_claimed)
        mine_claimed[r] += count
        provable = mine_claimed[r] > mine[r] + mine_pile[r]
        honest = cards[r] == count
        final = not any(mine)
        if final and honest:
            return WIN
        if provable:
            called = opponent.proves
        elif final:
            called = opponent.final
        elif honest:
            called = opponent.doubts[TRUE_MORE if count > 1 else TRUE_ONE]
        else:
            called = opponent.doubts[COVERED_LIE]
        score = 0.0
        after = (r + 1) % RANKS
        if called < 1.0 - NEGLIGIBLE:
            stands = WIN if final else self._out(mine, mine_pile, mine_claimed, after, None)
            score += (1.0 - called) * stands
        if called > NEGLIGIBLE:
            if honest:
                caught = self._out(mine, mine_pile, mine_claimed, after, "theirs")
            else:
                # Whatever the lie, its cards come back with the pile: one game to play out.
                if self._caught is None:
                    self._caught = self._out(mine, mine_pile, mine_claimed, after, "mine")
                caught = self._caught
            score += called * caught
        return score

    def _out(
        self,
        mine: list[int],
        mine_pile: list[int],
        mine_claimed: list[int],
        rank: int,
        taker: str | None,
    ) -> float:
        """``play_out`` from the opponent's turn at ``rank``, after ``taker`` took the pile."""
        mine = list(mine)
        theirs = list(self.theirs)
        mine_pile = list(mine_pile)
        theirs_pile = list(self.theirs_pile)
        mine_claimed = list(mine_claimed)
        theirs_claimed = list(self.theirs_claimed)
        if taker is not None:
            hand = mine if taker == "mine" else theirs
            _take(hand, mine_pile, theirs_pile, mine_claimed, theirs_claimed)
        return play_out(
            mine,
            mine_pile,
            mine_claimed,
            theirs,
            theirs_pile,
            theirs_claimed,
            rank,
            self.limit,
            final_called=self.final_called,
        )


def _last_first(rank: int) -> tuple[int, ...]:
    return tuple((rank + STEP * turns) % RANKS for turns in range(RANKS - 1, 0, -1))


#: For the player who claims each rank now, the other ranks by how late their turn comes,
#: the last first.
LAST_FIRST = tuple(_last_first(rank) for rank in range(RANKS))


def farthest(counts: Sequence[int], rank: int) -> int:
    """The rank held (never ``rank`` itself while another is) whose turn comes last for the
    player who claims ``rank`` now; -1 for an empty hand."""
    for other in LAST_FIRST[rank]:
        if counts[other]:
            return other
    return rank if counts[rank] else -1


def _take(
    hand: list[int],
    mine_pile: list[int],
    theirs_pile: list[int],
    mine_claimed: list[int],
    theirs_claimed: list[int],
) -> None:
    """The pile goes into ``hand``; the pile and its claims are emptied."""
    hand[:] = [h + m + t for h, m, t in zip(hand, mine_pile, theirs_pile, strict=True)]
    mine_pile[:] = theirs_pile[:] = mine_claimed[:] = theirs_claimed[:] = _NONE


_NONE = (0,) * RANKS


def play_out(
    mine: list[int],
    mine_pile: list[int],
    mine_claimed: list[int],
    theirs: list[int],
    theirs_pile: list[int],
    theirs_claimed: list[int],
    rank: int,
    limit: int,
    *,
    final_called: bool = True,
) -> float:
    """The score (see the module) of the game played out from the opponent's turn at
    ``rank`` by both sides' fixed policies; ``final_called``: a last play of this player that
    is not all true is called (and it takes the pile). The lists are changed."""
    mine_size = sum(mine)
    theirs_size = sum(theirs)
    pile = sum(mine_pile) + sum(theirs_pile)
    order = LAST_FIRST
    for ply in range(0, PLIES, 2):
        # The opponent: every true card it holds, else one card, the one whose rank comes
        # last for it.
        held = theirs[rank]
        if held:
            count = held if held < limit else limit
            theirs[rank] = held - count
            theirs_pile[rank] += count
            theirs_claimed[rank] += count
            theirs_size -= count
            pile += count
            if theirs_size == 0:
                return -WIN + ply
        else:
            for other in order[rank]:
                if theirs[other]:
                    break
            theirs[other] -= 1
            theirs_pile[other] += 1
            theirs_claimed[rank] += 1
            theirs_size -= 1
            pile += 1
            # This player calls a lie it can prove, and every final play.
            if theirs_size == 0 or theirs_claimed[rank] > theirs_pile[rank]:
                _take(theirs, mine_pile, theirs_pile, mine_claimed, theirs_claimed)
                theirs_size += pile
                pile = 0
        rank = rank + 1 if rank < RANKS - 1 else 0
        # This player: as many cards as it covers, true ones first.
        covered = mine[rank] + mine_pile[rank] - mine_claimed[rank]
        count = min(limit, covered, mine_size)
        if count <= 0:
            # Nothing covers the rank: a lie the opponent proves.
            _take(mine, mine_pile, theirs_pile, mine_claimed, theirs_claimed)
            mine_size += pile
            pile = 0
        else:
            true = mine[rank] if mine[rank] < count else count
            mine[rank] -= true
            mine_pile[rank] += true
            for _ in range(count - true):
                for other in order[rank]:
                    if mine[other]:
                        break
                mine[other] -= 1
                mine_pile[other] += 1
            mine_claimed[rank] += count
            mine_size -= count
            pile += count
            if mine_size == 0:
                if true == count or not final_called:
                    return WIN - ply - 1
                _take(mine, mine_pile, theirs_pile, mine_claimed, theirs_claimed)
                mine_size += pile
                pile = 0
        rank = rank + 1 if rank < RANKS - 1 else 0
    return CARD * (theirs_size - mine_size)
