"""``counter``: a card-counting opponent written from the rules, to measure ``hard`` against
a player nobody tuned it against.

It plays as a careful person who counts would: true cards whenever it holds the rank (all it
may), a lone card it needs least when it must bluff, a pass when the referee allows one on a
pile worth avoiding, the rank it holds most when it names one. It calls Cheat! when the
expected pile cost favours it: from the copies of the claimed rank it cannot place (its hand,
its own cards on the pile, the revealed cards and where they went, the earlier claims of the
rank on the pile taken as true), the chance that the claimant held as many as it claims
(hypergeometric over the other players' hands); a lie is taken to be as likely as the
claimant not holding them. A call pays when that chance times
what the claimant taking the pile is worth to it (a share among several opponents, all of it
when the claimant would be left with one card or none) exceeds the chance of taking the pile
itself. A final play is called unless it is almost surely true.
"""

from __future__ import annotations

import math

from tgcheat.engine.actions import Accept, Action, Challenge, Pass, PassVote, Play
from tgcheat.engine.ai import AIRandom, junk_card, rank_held_most
from tgcheat.engine.cards import Rank
from tgcheat.engine.knowledge import (
    SLOTS,
    Knowledge,
    Memory,
    count_cards,
    deck_counts,
    slot,
)
from tgcheat.engine.rules import Jokers
from tgcheat.engine.state import Phase
from tgcheat.engine.view import SeatView, SeenClaim

#: Below this chance of a lie, a final play is believed.
FINAL_DOUBT = 0.05
#: A pile this small is not worth a pass.
CHEAP_PILE = 3


class CounterStrategy:
    """See the module's docstring."""

    name = "counter"
    memory = Memory.OWN

    def choose(
        self, view: SeatView, knowledge: Knowledge, rng: AIRandom, now_ms: int
    ) -> Action | None:
        seat = view.seat
        if view.phase is Phase.FINISHED or view.left[seat]:
            return None
        if view.challenges:
            for claim in view.challengeable():
                if lie_chance(view, knowledge, claim) >= 1.0:
                    return Challenge(seat, claim.number, now_ms)
            return None
        if view.phase is Phase.FINAL_CHECK:
            final = view.final_claim
            if final is None or seat not in view.awaited:
                return None
            if lie_chance(view, knowledge, final) >= FINAL_DOUBT:
                return Challenge(seat, final.number, now_ms)
            return Accept(seat, final.number)
        if view.vote_by is not None:
            if not view.may_vote:
                return None
            return PassVote(seat, view.hand_sizes[view.vote_by] > 3)
        for claim in view.challengeable():
            p = lie_chance(view, knowledge, claim)
            if p * worth(view, claim) > 1.0 - p:
                return Challenge(seat, claim.number, now_ms)
        if seat != view.turn or view.play_limit == 0:
            return None
        return self.turn(view)

    @staticmethod
    def turn(view: SeatView) -> Action:
        seat = view.seat
        hand = view.hand
        rank = view.required if view.required is not None else rank_held_most(hand)
        true_cards = sorted(c for c in hand if c.rank is rank)
        if view.rules.jokers is Jokers.WILD:
            true_cards += sorted(c for c in hand if c.rank is Rank.JOKER)
        if true_cards:
            return Play(seat, tuple(true_cards[: view.play_limit]), rank)
        if view.may_pass and view.pile_size > CHEAP_PILE:
            return Pass(seat)
        return Play(seat, (junk_card(view, list(hand)),), rank)


def worth(view: SeatView, claim: SeenClaim) -> float:
    """What the claimant taking the pile is worth against taking it oneself: all of it head
    to head or when the claimant would be left with a card or none; else a share."""
    opponents = len(view.active_seats()) - 1
    if opponents <= 1 or view.hand_sizes[claim.seat] <= 1:
        return 1.0
    return 1.0 / opponents


def lie_chance(view: SeatView, knowledge: Knowledge, claim: SeenClaim) -> float:
    """The chance the claimant did not hold the cards it claims (see the module)."""
    index = slot(claim.rank)
    total = deck_counts(view)
    hand = count_cards(view.hand)
    mine = knowledge.mine_on_pile
    known = [0] * SLOTS
    for source in (knowledge.traced_on_pile, knowledge.out):
        known = [k + n for k, n in zip(known, source, strict=True)]
    for seat, record in enumerate(knowledge.seats):
        if seat not in (claim.seat, knowledge.seat):
            known = [k + n for k, n in zip(known, record.held, strict=True)]
    copies = total[index] - hand[index] - mine[index] - known[index]
    wild = view.rules.jokers is Jokers.WILD
    if wild:
        jokers = slot(Rank.JOKER)
        copies += total[jokers] - hand[jokers] - mine[jokers] - known[jokers]
    copies = max(0, copies)
    traced = dict(knowledge.traced_claims).get(claim.number, 0)
    if claim.count - traced > copies:
        return 1.0
    # The earlier claims of the rank left on the pile are taken as true: those copies are
    # there. The others are in the hands of the other players, the claimant's (before its
    # play) drawn from them at random.
    earlier = knowledge.claimed_on_pile[index] - claim.count
    earlier_traced = knowledge.traced_on_pile[index] - traced
    copies = max(0, copies - max(0, earlier - earlier_traced))
    # Cards of the claim known to come from the claimant's hand (it took them with a pile).
    needed = max(0, claim.count - traced)
    if needed == 0:
        return 0.0
    if needed > copies:
        return 1.0
    others = [s for s in view.active_seats() if s != view.seat]
    population = sum(view.hand_sizes[s] for s in others) + claim.count
    population -= sum(sum(knowledge.seats[s].held) for s in others if s != claim.seat)
    draws = view.hand_sizes[claim.seat] + claim.count
    population = max(population, draws, copies)
    return 1.0 - _at_least(population, copies, draws, needed)


def _at_least(population: int, successes: int, draws: int, wanted: int) -> float:
    """P(at least ``wanted`` successes) drawing ``draws`` from ``population``."""
    whole = math.comb(population, draws)
    if whole == 0:
        return 0.0
    return (
        sum(
            math.comb(successes, k) * math.comb(population - successes, draws - k)
            for k in range(wanted, min(successes, draws) + 1)
        )
        / whole
    )
