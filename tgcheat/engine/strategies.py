"""Computer players of several levels, and the baselines they are measured against.

A strategy decides what the player at one seat does now from what that seat sees, a
``view.SeatView`` (its hand, the sizes of the others' hands and of the pile, the claims, the
referee's answers to what it may do: no other hand and no pile faces, by its type), and from
that player's memory (``tgcheat.engine.knowledge``). Pure and deterministic given the random
generator.

- ``easy`` remembers nothing beyond the table (its hand and its own open plays) and decides by
  the source texts' rules of thumb with a dice roll: the first computer player
  (``tgcheat.engine.ai.choose_action``), which calls Cheat! far too often.
- ``normal`` also remembers its own cards on the pile, the claims on it and every revealed
  card, and estimates how likely a claim is to be a lie from the copies it cannot place; it
  calls Cheat! when a lie is more likely than not (more than that when several opponents
  share the gain), always answers a final play with Cheat! (if the play stands the game is
  lost anyway), and plays its turn by the rules of thumb, naming a rank the others are
  unlikely to follow.
- ``hard`` also counts the ranks each seat has claimed since it last took a pile (it played
  those), and holds beliefs it checks against this game: how likely each claim is to be a
  lie (counting every card it can place, then calibrated by the reveals: the share of lies
  among the revealed claims it had judged about as likely, the claimant's own after the
  table's, ``calibrated``), and how likely each opponent is to call its own next claim of
  each kind (true, a lie of one card or more, a lie nobody can prove: what that opponent did
  with its settled claims, ``call_chance``; at least the chance the opponent's cards prove
  it). Every decision weighs the expected cost of its hand in cards and turns: a call pays
  when the lie's chance times what the claimant taking the pile is worth to it (a share
  among several opponents, and only as much as the others would not call it anyway) beats
  the chance of taking the pile itself; its turn weighs every honest play, padded play and
  bluff by the chance of being called against the turns and forced bluffs the cards left in
  hand will cost (``_Planner``), so it sheds the cards it will not be able to play truthfully
  soon and keeps an honest last play.
  Head to head under ascending ranks (``head_to_head``) it plans its turn instead by playing
  the rest of the game out from each candidate play (``tgcheat.engine.headtohead``): there
  each player can place every card outside the other's hand and pile cards, so it claims
  within the copies the opponent cannot rule out, and takes a small pile on purpose when the
  game played out says the cards in it shorten its own.
- Baselines: ``random`` (any legal action), ``honest`` (true cards when it can, else the fewest
  cards it must, never calls Cheat!), ``never`` (``easy`` without any call), ``counter``
  (``tgcheat.engine.counter``: counts cards, plays honestly, calls by the expected pile
  cost; written to measure ``hard`` against, not tuned to it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tgcheat.engine.actions import Accept, Action, Challenge, Pass, PassVote, Play
from tgcheat.engine.ai import (
    SMALL_PILE,
    AIRandom,
    agree_to_pass,
    choose_turn,
    decide,
    junk_card,
    named_freely,
    rank_held_most,
)
from tgcheat.engine.cards import CLAIMABLE_RANKS, Card, Rank
from tgcheat.engine.counter import CounterStrategy
from tgcheat.engine.events import Event
from tgcheat.engine.headtohead import RANKS, Duel, Opponent
from tgcheat.engine.knowledge import (
    BINS,
    KINDS,
    SLOTS,
    Counts,
    Knowledge,
    Memory,
    SeatRecord,
    claim_kind,
    count_cards,
    deck_counts,
    judged_bin,
    new_knowledge,
    remember,
    slot,
)
from tgcheat.engine.rules import (
    CHAMBERS,
    AfterChallenge,
    Challengers,
    ChallengeWindow,
    Jokers,
    Passing,
    RankRule,
)
from tgcheat.engine.state import GameState, Phase
from tgcheat.engine.view import SeatView, SeenClaim, callers, see

JOKER = slot(Rank.JOKER)
#: The share of the claims left standing on the pile taken as true.
TRUE_SHARE = 0.7


class Strategy(Protocol):
    """How a computer player decides. ``memory`` is what its knowledge records."""

    name: str
    memory: Memory

    def choose(
        self, view: SeatView, knowledge: Knowledge, rng: AIRandom, now_ms: int
    ) -> Action | None:
        """What the player at ``view.seat`` does now, or None when it has nothing to do (not
        its turn and it lets the open plays stand, or the game waits for someone else).
        ``now_ms`` is stamped on a Cheat! call (``challenge_priority=clockwise``)."""
        ...


def forced_call(view: SeatView, now_ms: int) -> Challenge | None:
    """The call a player must make when it is their turn and calling is all they may do
    (``penalty=revolver``: nobody else holds cards): every strategy makes it."""
    if view.turn != view.seat or view.seat not in view.awaited or view.play_limit:
        return None
    claims = view.challengeable()
    return Challenge(view.seat, claims[-1].number, now_ms) if claims else None


def _may_act(view: SeatView) -> bool:
    return view.phase is not Phase.FINISHED and not view.left[view.seat]


def _pick(rng: AIRandom, count: int) -> int:
    """An index below ``count``, from ``rng.random()`` alone (all a strategy may ask of it)."""
    return min(int(rng.random() * count), count - 1)


# --- baselines -----------------------------------------------------------------------------------


class RandomStrategy:
    """Any legal action, at random: the floor every level must beat."""

    name = "random"
    memory = Memory.HAND

    def choose(
        self, view: SeatView, knowledge: Knowledge, rng: AIRandom, now_ms: int
    ) -> Action | None:
        if not _may_act(view):
            return None
        seat = view.seat
        open_to_me = view.challengeable()
        if view.challenges:
            if open_to_me and rng.random() < 0.3:
                return Challenge(seat, open_to_me[_pick(rng, len(open_to_me))].number, now_ms)
            return None
        if view.phase is Phase.FINAL_CHECK:
            claim = view.final_claim
            if claim is None or seat not in view.awaited:
                return None
            if rng.random() < 0.4:
                return Challenge(seat, claim.number, now_ms)
            return Accept(seat, claim.number)
        if view.vote_by is not None:
            return PassVote(seat, rng.random() < 0.7) if view.may_vote else None
        if open_to_me and rng.random() < 0.2:
            return Challenge(seat, open_to_me[_pick(rng, len(open_to_me))].number, now_ms)
        limit = view.play_limit
        if limit == 0:
            return None
        if view.may_pass and rng.random() < 0.3:
            return Pass(seat)
        ranks = view.claimable_ranks()
        rank = ranks[_pick(rng, len(ranks))]
        pool = list(view.hand)
        chosen = [pool.pop(_pick(rng, len(pool))) for _ in range(1 + _pick(rng, limit))]
        return Play(seat, tuple(chosen), rank)


class HonestStrategy:
    """True cards when it can; otherwise the fewest cards it must (a pass when allowed, else
    one card); never calls Cheat!, believes every final play, lets everyone pass."""

    name = "honest"
    memory = Memory.HAND

    def choose(
        self, view: SeatView, knowledge: Knowledge, rng: AIRandom, now_ms: int
    ) -> Action | None:
        if not _may_act(view) or view.challenges:
            return None
        seat = view.seat
        if view.phase is Phase.FINAL_CHECK:
            claim = view.final_claim
            if claim is None or seat not in view.awaited:
                return None
            return Accept(seat, claim.number)
        if view.vote_by is not None:
            return PassVote(seat, True) if view.may_vote else None
        limit = view.play_limit
        if limit == 0:
            return None
        rank = view.required if view.required is not None else rank_held_most(view.hand)
        true_cards = _true_cards(view, rank)
        if true_cards:
            return Play(seat, tuple(true_cards[:limit]), rank)
        if view.may_pass:
            return Pass(seat)
        return Play(seat, (junk_card(view, list(view.hand)),), rank)


class LegacyStrategy:
    """The first computer player (``ai.choose_action``): ``easy``, or ``never`` without calls."""

    memory = Memory.HAND

    def __init__(self, name: str, *, calls: bool) -> None:
        self.name = name
        self.calls = calls

    def choose(
        self, view: SeatView, knowledge: Knowledge, rng: AIRandom, now_ms: int
    ) -> Action | None:
        return decide(view, rng, now_ms, calls=self.calls)


def _true_cards(view: SeatView, rank: Rank) -> list[Card]:
    """The cards of ``hand`` that are true for a claim of ``rank``: its copies, then wild
    jokers (kept for last: a joker is true for any rank)."""
    hand = view.hand
    naturals = sorted(c for c in hand if c.rank is rank)
    if view.rules.jokers is Jokers.WILD:
        naturals += sorted(c for c in hand if c.rank is Rank.JOKER)
    return naturals


# --- what a seat can tell about a claim ----------------------------------------------------------


def own_on_pile(view: SeatView, knowledge: Knowledge) -> Counts:
    """The seat's own cards on the pile: remembered, or (memory ``hand``) its open plays."""
    if knowledge.memory is not Memory.HAND:
        return knowledge.mine_on_pile
    return count_cards(c for claim in view.open_claims for c in claim.cards)


def sure_lie(view: SeatView, knowledge: Knowledge, claim: SeenClaim) -> bool:
    """The claim needs more cards of its rank than can be anywhere but in the seat's own hand
    and own pile cards: certain, whatever the beliefs (RULES.md worked example 3)."""
    total = deck_counts(view)
    hand = count_cards(view.hand)
    mine = own_on_pile(view, knowledge)
    index = slot(claim.rank)
    possible = total[index] - hand[index] - mine[index]
    if view.rules.jokers is Jokers.WILD:
        possible += total[JOKER] - hand[JOKER] - mine[JOKER]
    return claim.count > possible


@dataclass(frozen=True, slots=True)
class Habits:
    """How a claimant is assumed to lie: ``pad`` is the chance of slipping one more card in
    with true ones; a player without the rank claims one card, or more with ``pad`` each."""

    pad: float = 0.1
    #: A player holding more true cards than it claims (keeping some back).
    hold_back: float = 0.15
    #: A player who names the rank (``free``, opening under ``same``) without holding it.
    false_name: float = 0.05


def habits_of(record: SeatRecord) -> Habits:
    """What the reveals taught about a seat: how often its multi-card claims were false
    (a Beta(0.5, 4.5) prior: one in ten, as measured against the first computer player)."""
    pad = (record.multi_lies + 0.5) / (record.multi_shown + 5)
    return Habits(pad=min(max(pad, 0.03), 0.8))


def lie_probability(
    view: SeatView, knowledge: Knowledge, claim: SeenClaim, habits: Habits = Habits()
) -> float:
    """The chance that ``claim`` is a lie, from what the seat of ``knowledge`` can place.

    The copies of the claimed rank it cannot place are spread at random over the cards it
    cannot place (the claimant's hand, the others' hands and the pile's unknown cards; claims
    of the rank already on the pile are taken as mostly true). That gives how many copies the
    claimant may have held (hypergeometric); each holding makes the claim more or less likely
    as a true play or as a lie (``habits``): Bayes' rule over the holdings.
    """
    if sure_lie(view, knowledge, claim):
        return 1.0
    rank = slot(claim.rank)
    wild = view.rules.jokers is Jokers.WILD
    count = claim.count
    traced_true = dict(knowledge.traced_claims).get(claim.number, 0)
    needed = count - traced_true
    if needed <= 0:
        return habits.false_name / 2
    total = deck_counts(view)
    hand = count_cards(view.hand)
    mine = own_on_pile(view, knowledge)
    held = [0] * SLOTS
    for seat, record in enumerate(knowledge.seats):
        if seat != knowledge.seat:
            held = [h + r for h, r in zip(held, record.held, strict=True)]
    placed = [
        h + m + t + o + k
        for h, m, t, o, k in zip(
            hand, mine, knowledge.traced_on_pile, knowledge.out, held, strict=True
        )
    ]
    unknown = [max(0, t - p) for t, p in zip(total, placed, strict=True)]
    copies = unknown[rank] + (unknown[JOKER] if wild else 0)
    unknown_total = sum(unknown)
    # The pile's cards the seat cannot place, apart from the claim's own untraced cards.
    pile_unknown = max(0, view.pile_size - sum(mine) - sum(knowledge.traced_on_pile))
    pile_other = max(0, min(pile_unknown - needed, unknown_total))
    # The pile's unknown cards are mostly what was claimed: a share of the earlier claims of
    # this rank are its copies, and the lies among the other claims are cards of any rank.
    earlier_claimed = knowledge.claimed_on_pile[rank] - count
    earlier_traced = knowledge.traced_on_pile[rank] - traced_true
    claimed_here = max(0, earlier_claimed - earlier_traced)
    believed = min(TRUE_SHARE * claimed_here, pile_other, copies)
    in_pile = believed
    if unknown_total > 0:
        lies_elsewhere = (1.0 - TRUE_SHARE) * max(0, pile_other - claimed_here)
        in_pile += lies_elsewhere * max(0.0, copies - believed) / unknown_total
    copies_out = max(0.0, copies - in_pile)
    # The copies in hands are in the claimant's and in those of the players who have not
    # claimed the rank since they last took a pile (the others played theirs).
    claimant = claim.seat
    draws = 0
    elsewhere = 0.0
    claimant_cleared = 0
    for seat in view.active_seats():
        if seat == knowledge.seat:
            continue
        record = knowledge.seats[seat] if seat < len(knowledge.seats) else SeatRecord()
        unplaced = max(0, view.hand_sizes[seat] - sum(record.held))
        if seat == claimant:
            draws = unplaced + needed
            claimant_cleared = record.cleared & ~(1 << rank)
        elif not record.cleared >> rank & 1:
            elsewhere += unplaced
    # The claimant's own unknown cards are of the ranks it has not cleared: the claimed rank
    # is denser there than elsewhere, as if the other hands were that much smaller.
    if unknown_total > 0:
        kept = sum(n for r, n in enumerate(unknown) if not claimant_cleared >> r & 1)
        elsewhere *= kept / unknown_total
    population = draws + round(elsewhere)
    limit = view.rules.play_limit(view.hand_sizes[claimant] + count)
    named = named_freely(view, claim)
    low = math.floor(copies_out)
    share = copies_out - low
    lie = truth = 0.0
    for successes, weight in ((low, 1.0 - share), (low + 1, share)):
        if weight <= 0.0:
            continue
        successes = min(successes, population)
        for held_copies, chance in _hypergeometric(population, successes, draws):
            available = held_copies + traced_true
            if available >= count:
                exact = available == count or count == limit
                truth += weight * chance * (1.0 if exact else habits.hold_back)
            elif available == 0:
                lie += weight * chance * _forced_lie_size(count, habits, named)
            else:
                lie += weight * chance * habits.pad ** (count - available)
    if lie + truth <= 0.0:
        return 1.0 if needed > copies else 0.5
    return lie / (lie + truth)


def _forced_lie_size(count: int, habits: Habits, named: bool) -> float:
    """How likely a player without the rank claims ``count`` cards: mostly one."""
    if named:
        return habits.false_name * habits.pad ** (count - 1)
    return 1.0 if count == 1 else 0.3 * habits.pad ** (count - 1)


def _hypergeometric(population: int, successes: int, draws: int) -> list[tuple[int, float]]:
    """P(k successes) for ``draws`` cards drawn from ``population`` holding ``successes``."""
    if population <= 0 or draws <= 0:
        return [(0, 1.0)]
    draws = min(draws, population)
    whole = math.comb(population, draws)
    return [
        (k, math.comb(successes, k) * math.comb(population - successes, draws - k) / whole)
        for k in range(max(0, draws - (population - successes)), min(successes, draws) + 1)
    ]


def threat_weight(view: SeatView, claimant: int) -> float:
    """What the claimant taking a pile is worth to the seat, against the seat taking it
    itself (1): all of it head to head; among several opponents a share, more when the
    claimant leads, most when it is about to go out."""
    seat = view.seat
    others = [s for s in view.active_seats() if s != seat]
    if len(others) <= 1:
        return 1.0
    weight = 1.0 / len(others)
    left = view.hand_sizes[claimant]
    rivals = [view.hand_sizes[s] for s in others if s != claimant]
    if left <= min(rivals, default=left):
        weight = max(weight, 0.5)
    if left <= 2:
        weight = max(weight, 1.0)
    elif left <= 4:
        weight = max(weight, 0.7)
    return weight


# --- normal --------------------------------------------------------------------------------------


class _Counting:
    """What ``normal`` and ``hard`` share: the phases, and how a call is weighed."""

    name: str
    memory: Memory

    def choose(
        self, view: SeatView, knowledge: Knowledge, rng: AIRandom, now_ms: int
    ) -> Action | None:
        if not _may_act(view):
            return None
        seat = view.seat
        if view.challenges:
            # A call is being collected: join only a sure lie (nothing to lose then, and the
            # nearest caller to the claimant becomes the challenger).
            for claim in view.challengeable():
                if sure_lie(view, knowledge, claim):
                    return Challenge(seat, claim.number, now_ms)
            return None
        if view.phase is Phase.FINAL_CHECK:
            final = view.final_claim
            if final is None or seat not in view.awaited:
                return None
            # If the final play stands, the claimant has won: whether a wrong call costs the
            # pile hardly matters then. Believe it only when it is almost certainly true.
            if self.lie_chance(view, knowledge, final) >= 0.02:
                return Challenge(seat, final.number, now_ms)
            return Accept(seat, final.number)
        if view.vote_by is not None:
            if not view.may_vote:
                return None
            return PassVote(seat, self.agree_to_pass(view, rng))
        best: tuple[float, SeenClaim] | None = None
        for claim in view.challengeable():
            p = self.lie_chance(view, knowledge, claim)
            margin = p * self.claimant_weight(view, claim, knowledge) - (1.0 - p)
            if (p >= 1.0 or margin > self.call_margin) and (best is None or margin > best[0]):
                best = (margin, claim)
        if best is not None:
            return Challenge(seat, best[1].number, now_ms)
        if seat != view.turn:
            return None
        return self.turn(view, knowledge, rng)

    #: How much more than even the expected cards must favour a call.
    call_margin = 0.0

    def lie_chance(self, view: SeatView, knowledge: Knowledge, claim: SeenClaim) -> float:
        return lie_probability(view, knowledge, claim)

    def claimant_weight(self, view: SeatView, claim: SeenClaim, knowledge: Knowledge) -> float:
        return threat_weight(view, claim.seat)

    def agree_to_pass(self, view: SeatView, rng: AIRandom) -> bool:
        return agree_to_pass(view, rng)

    def turn(self, view: SeatView, knowledge: Knowledge, rng: AIRandom) -> Action | None:
        return choose_turn(view, rng)


#: How often ``normal`` keeps a true card back when it opens a round.
HOLD_BACK = 0.2
#: How often ``normal`` names any rank it holds rather than the one the others can least
#: follow.
SURPRISE = 0.25


class NormalStrategy(_Counting):
    """Remembers its own pile cards and the reveals; counts copies to judge a claim, with
    the same assumed habits for everyone; plays its turn by the rules of thumb."""

    name = "normal"
    memory = Memory.OWN
    call_margin = 0.1

    def turn(self, view: SeatView, knowledge: Knowledge, rng: AIRandom) -> Action | None:
        """The rules of thumb (true cards when it can, an honest last play, one card to bluff
        with, a pass on a big pile when allowed), with the ties drawn at random: two players
        who always name the same rank and bluff with the same card can deal the same hands
        back and forth for ever."""
        limit = view.play_limit
        if limit == 0:
            return None
        seat = view.seat
        hand = view.hand
        rank = view.required or self._rank_to_name(view, hand, knowledge, rng)
        true_cards = _true_cards(view, rank)
        if len(true_cards) == len(hand) <= limit:
            return Play(seat, tuple(true_cards), rank)
        others = [c for c in hand if c not in true_cards]
        if true_cards:
            chosen = true_cards[:limit]
            if view.required is None and len(chosen) > 1 and rng.random() < HOLD_BACK:
                # Opening, keep one back now and then: under ``same`` with two players,
                # opening with every copy lets both deal pairs back and forth for ever.
                chosen = chosen[:-1]
            small_pile = view.pile_size <= SMALL_PILE
            if len(chosen) < limit and len(others) >= 2 and small_pile and rng.random() < 0.15:
                chosen.append(self._bluff_card(view, others, rng))
            return Play(seat, tuple(chosen), rank)
        if view.may_pass and (
            view.rules.passing is Passing.EXHAUSTED or view.pile_size >= SMALL_PILE
        ):
            return Pass(seat)
        return Play(seat, (self._bluff_card(view, others, rng),), rank)

    @staticmethod
    def _rank_to_name(
        view: SeatView, hand: Sequence[Card], knowledge: Knowledge, rng: AIRandom
    ) -> Rank:
        """A rank it holds many of and that the others are least likely to hold: under
        ``same`` they must follow it, and better they cannot (copies known in another hand
        count double; those it cannot place, once). Ties are drawn at random, and now and
        then any rank it holds: with two players under ``same``, always naming the rank the
        other cannot follow hands the pile back and forth for ever."""
        counts = count_cards(hand)
        if max(counts[:JOKER]) == 0:
            return Rank.ACE
        total = deck_counts(view)
        known = list(knowledge.mine_on_pile)
        for source in (knowledge.traced_on_pile, knowledge.out):
            known = [k + n for k, n in zip(known, source, strict=True)]
        held = [0] * SLOTS
        for seat, record in enumerate(knowledge.seats):
            if seat != knowledge.seat:
                held = [h + n for h, n in zip(held, record.held, strict=True)]

        def score(rank: Rank) -> int:
            index = slot(rank)
            unplaced = max(0, total[index] - counts[index] - known[index] - held[index])
            return counts[index] - 2 * held[index] - unplaced

        ranks = [r for r in CLAIMABLE_RANKS if counts[slot(r)]]
        if rng.random() < SURPRISE:
            return ranks[_pick(rng, len(ranks))]
        best = max(score(r) for r in ranks)
        ties = [r for r in ranks if score(r) == best]
        return ties[_pick(rng, len(ties))]

    @staticmethod
    def _bluff_card(view: SeatView, cards: list[Card], rng: AIRandom) -> Card:
        """One of the cards least worth keeping (``ai.junk_card``'s measure), at random."""
        worst = junk_card(view, cards)
        alike = [c for c in cards if c.rank is worst.rank]
        if view.rules.rank_rule is not RankRule.ASCENDING:
            counts = count_cards(cards)
            alike = [c for c in cards if counts[slot(c.rank)] == counts[slot(worst.rank)]]
        return alike[_pick(rng, len(alike))]


# --- hard ----------------------------------------------------------------------------------------

#: What going out is worth, in the units of ``_Planner.cost`` (turns still needed).
WIN_VALUE = 12.0
#: What one card taken into the hand costs, in turns.
CARD_COST = 0.5
#: A final bluff is two lies: caught, it costs the whole pile when the hand was nearly empty.
FINAL_LIE_WEIGHT = 2.0
#: The paddings ``hard`` weighs one by one (and then only the largest allowed).
MAX_PADDING = 4
#: The spread, in turns, within which ``hard`` treats its options as equal.
TIE_NOISE = 0.25
#: Hands of this many cards or fewer are planned exactly to the end.
ENDGAME = 6
#: What ``hard`` assumes, before it has seen any, of how one opponent treats its claims:
#: the chance it calls each kind (``knowledge.claim_kind``: true one card, true more, a lie
#: of one card, a lie of more, a lie it held the copies for), and how many claims that
#: belief weighs. Deliberately mild: a few settled claims outweigh it.
CALL_PRIOR = (0.05, 0.08, 0.2, 0.3, 0.15)
CALL_PRIOR_WEIGHT = 3.0
#: How many judged reveals the table's tally weighs as a prior for one claimant's, and the
#: judgement itself for the table's.
CLAIMANT_PRIOR = 4.0
TABLE_PRIOR = 3.0


def call_chance(record: SeatRecord, kind: int) -> float:
    """How likely one opponent is to call this player's next claim of ``kind``: what it did
    with this player's settled claims of that kind in this game, after a mild prior."""
    chances = record.on_mine[kind]
    calls = record.on_mine[KINDS + kind]
    prior = CALL_PRIOR[kind]
    return (calls + prior * CALL_PRIOR_WEIGHT) / (chances + CALL_PRIOR_WEIGHT)


#: What the claimant taking the pile is worth to ``hard`` when the claimant leads with three
#: cards or fewer.
LEADER_WEIGHT = 0.3
#: The share of claims assumed to be lies, to turn a seat's right calls into a call rate.
LIE_SHARE = 0.35


def lie_call_rate(record: SeatRecord) -> float:
    """How likely a seat is to call a lie (its right calls against the lies it could have
    caught, a share ``LIE_SHARE`` of its chances; a prior of one in three)."""
    rate = (record.right_calls + 0.5) / (LIE_SHARE * record.chances + 1.5)
    return min(max(rate, 0.0), 0.95)


def final_call_rate(record: SeatRecord) -> float:
    """How likely a seat is to challenge a final play (a prior of almost always)."""
    return (record.final_calls + 2.0) / (record.final_chances + 2.0)


def calibrated(chance: float, knowledge: Knowledge, claimant: int) -> float:
    """``chance`` (a lie, by counting) as the reveals of this game say it fares: the share
    of lies among the revealed claims judged about as likely, the claimant's own after the
    whole table's, and the table's after the judgement itself. A certain lie stays one."""
    if chance >= 1.0:
        return chance
    index = judged_bin(chance)
    shown = sum(r.judged[index] for r in knowledge.seats)
    lies = sum(r.judged[BINS + index] for r in knowledge.seats)
    table = (lies + TABLE_PRIOR * chance) / (shown + TABLE_PRIOR)
    record = knowledge.seats[claimant]
    own = record.judged[index]
    return (record.judged[BINS + index] + CLAIMANT_PRIOR * table) / (own + CLAIMANT_PRIOR)


def _last_first(inverse: int, now: int) -> tuple[int, ...]:
    return tuple(sorted(range(13), key=lambda r: -((r - now) % 13 * inverse % 13)))


#: For each inverse of a table's step modulo 13, then each rank of a turn: the ranks by how
#: many of the player's turns later they come, the last first (``_Planner``).
_LAST_FIRST = {
    inverse: tuple(_last_first(inverse, now) for now in range(13)) for inverse in range(1, 13)
}


class _Planner:
    """Turns and bluffs the cards of a hand will still cost the player at one seat."""

    def __init__(self, view: SeatView, lie_cost: float) -> None:
        self.rules = view.rules
        self.wild = view.rules.jokers is Jokers.WILD
        self.step = len(view.active_seats())
        self.limit = view.rules.max_cards or 52
        self.lie_cost = lie_cost
        self.held_ranks = len({c.rank for c in view.hand if c.rank is not Rank.JOKER})
        # Turns until a rank comes back: the sequence moves ``step`` ranks between two turns
        # of this player, so rank r is ``(r - now) * step⁻¹ mod 13`` of its turns away (13
        # is prime and a table has fewer than 13 players, so the inverse exists).
        self.inverse = pow(self.step % 13, -1, 13)
        self._memo: dict[tuple[tuple[int, ...], int, int], float] = {}
        # For each rank of a turn, the ranks by how many turns later they come, the last
        # first (the waits differ: ``inverse`` is a bijection modulo 13).
        self._last_first = _LAST_FIRST[self.inverse]
        required = view.required
        # The rank of this player's next turn under ``ascending`` (a challenge does not
        # reset the sequence; a pass moves it on like a play).
        self.next_rank = (
            (int(required) - 1 + self.step) % 13
            if required is not None and view.rules.rank_rule is RankRule.ASCENDING
            else None
        )

    def cost(self, counts: Sequence[int]) -> float:
        """Expected cost of the hand ``counts`` (per slot): its turns, and its bluffs at
        ``lie_cost`` each; going out (an empty hand) is worth ``WIN_VALUE``."""
        if sum(counts) == 0:
            return -WIN_VALUE
        if self.next_rank is not None:
            return self._ascending(list(counts), self.next_rank)
        turns, lies = self._groups(counts)
        return turns + self.lie_cost * lies

    def _ascending(self, counts: list[int], rank: int) -> float:
        """A big hand is played down greedily (the true cards of each turn's rank, else one
        bluffed card, the one whose rank comes last); the last ``ENDGAME`` cards are planned
        exactly (``_endgame``), as the end is where a wrong card kept costs a final bluff."""
        jokers = counts[JOKER] if self.wild else 0
        cost = 0.0
        for _ in range(3 * 13):
            left = sum(counts[:JOKER]) + jokers
            if left <= ENDGAME:
                return cost + self._endgame(tuple(counts[:JOKER]), jokers, rank)
            cost += 1.0
            if counts[rank]:
                counts[rank] -= min(counts[rank], self.limit)
            else:
                counts[self._farthest(counts, rank)] -= 1
                cost += self.lie_cost
            rank = (rank + self.step) % 13
        return cost + sum(counts)

    def _farthest(self, counts: Sequence[int], rank: int) -> int:
        """The rank held (jokers aside) whose turn comes last from ``rank``'s turn on."""
        return next(r for r in self._last_first[rank] if counts[r])

    def _endgame(self, counts: tuple[int, ...], jokers: int, rank: int) -> float:
        """The least cost of going out from a small hand, this turn's rank being ``rank``:
        each turn plays its true cards, or bluffs one card or more (the ranks that come last
        first), or keeps some for an honest last play; a last play that is not all true is a
        final bluff (``FINAL_LIE_WEIGHT`` bluffs)."""
        key = (counts, jokers, rank)
        known = self._memo.get(key)
        if known is not None:
            return known
        left = sum(counts) + jokers
        true = counts[rank]
        if true + jokers == left and left <= self.limit:
            best = 1.0
        else:
            nxt = (rank + self.step) % 13
            best = math.inf
            played = list(counts)
            played[rank] = 0
            shown = min(true, self.limit)
            if true and shown < left:
                after = list(counts)
                after[rank] -= shown
                best = 1.0 + self._endgame(tuple(after), jokers, nxt)
            # Bluffs: the true cards with 1, 2, … of the cards whose turn comes last.
            after = list(counts)
            after[rank] -= shown
            for _ in range(self.limit - shown):
                if sum(after) == 0:
                    break
                after[self._farthest_other(after, rank)] -= 1
                if sum(after) + jokers == 0:
                    best = min(best, 1.0 + FINAL_LIE_WEIGHT * self.lie_cost)
                    break
                best = min(best, 1.0 + self.lie_cost + self._endgame(tuple(after), jokers, nxt))
            if best is math.inf:
                best = 1.0 + FINAL_LIE_WEIGHT * self.lie_cost
        self._memo[key] = best
        return best

    def _farthest_other(self, counts: Sequence[int], rank: int) -> int:
        """Like ``_farthest``, never ``rank`` itself unless nothing else is left."""
        for r in self._last_first[rank]:
            if counts[r] and r != rank:
                return r
        return rank

    def _groups(self, counts: Sequence[int]) -> tuple[float, float]:
        """When ranks are named (``free``; ``same`` for whoever opens): one turn a group of a
        rank; under ``same`` a player mostly follows others' ranks, so some turns are bluffs."""
        groups = sum(-(-c // self.limit) for c in counts[:JOKER] if c)
        if groups == 0:
            groups = 1
        if self.rules.rank_rule is RankRule.FREE:
            return float(groups), 0.0
        # The share of rounds whose rank it cannot follow, from the hand it holds now (a
        # share taken from each candidate's cards would make shedding a rank look costly).
        return float(groups), groups * (1.0 - min(1.0, self.held_ranks / 13))


class HardStrategy(_Counting):
    """Counts every card it can place, judges each claim by it and calibrates that judgement
    against the reveals; learns how each opponent treats its own claims; calls, bluffs and
    plans its turn by the expected cost of its hand (see the module's docstring)."""

    name = "hard"
    memory = Memory.FULL
    #: The reveals it calibrates on are the claims someone chose to call, more often lies
    #: than the claims it weighs: a call must pay by this much more than even.
    call_margin = 0.15

    def choose(
        self, view: SeatView, knowledge: Knowledge, rng: AIRandom, now_ms: int
    ) -> Action | None:
        if view.rules.revolver and _may_act(view):
            return _Revolver(self, view, knowledge, rng).decide(now_ms)
        return super().choose(view, knowledge, rng, now_ms)

    def judge(self, view: SeatView, knowledge: Knowledge, claim: SeenClaim) -> float:
        """The chance of a lie by counting alone (with the claimant's padding habits), before
        calibration: what ``knowledge.remember`` tallies against the reveals."""
        record = knowledge.seats[claim.seat] if claim.seat < len(knowledge.seats) else None
        habits = habits_of(record) if record is not None else Habits()
        return lie_probability(view, knowledge, claim, habits)

    def lie_chance(self, view: SeatView, knowledge: Knowledge, claim: SeenClaim) -> float:
        return calibrated(self.judge(view, knowledge, claim), knowledge, claim.seat)

    def claimant_weight(self, view: SeatView, claim: SeenClaim, knowledge: Knowledge) -> float:
        """What the claimant taking the pile is worth, in this player's cards, against taking
        it itself (1). Head to head all of it. Among several opponents a share (it changes
        this player's standing against one of them), and only as much as the others would
        not call the lie themselves if this player let it pass (how often each has caught
        lies in this game); more when the claimant leads near the end, all of it when it has
        a card left."""
        others = [s for s in view.active_seats() if s != view.seat]
        if len(others) <= 1:
            return 1.0
        left = view.hand_sizes[claim.seat]
        weight = 1.0 / len(others)
        for seat in callers(view, claim):
            if seat not in (view.seat, claim.seat):
                weight *= 1.0 - lie_call_rate(knowledge.seats[seat])
        rivals = [view.hand_sizes[s] for s in others if s != claim.seat]
        if left <= 3 and left <= min(rivals, default=left):
            weight = max(weight, LEADER_WEIGHT)
        return weight

    def agree_to_pass(self, view: SeatView, rng: AIRandom) -> bool:
        """Let a player pass unless it is a threat: near going out, or ahead of this one."""
        asker = view.vote_by
        assert asker is not None
        theirs = view.hand_sizes[asker]
        return theirs > 4 and theirs >= len(view.hand)

    def turn(self, view: SeatView, knowledge: Knowledge, rng: AIRandom) -> Action | None:
        limit = view.play_limit
        if limit == 0:
            return None
        if head_to_head(view):
            return _duel_turn(view, knowledge, rng)
        seat = view.seat
        hand = view.hand
        doubt = _Doubt(view, knowledge)
        pile = view.pile_size
        steps = len(view.active_seats())
        # A later bluff will be weighed on a bigger pile: this one plus a round of plays. It
        # is most often one card of a rank this player holds none of.
        later_pile = pile + 2.0 * steps
        lie_risk = doubt.risk(lie=True, count=1, deficit=1, outside=doubt.total_of(None))
        planner = _Planner(view, lie_risk * CARD_COST * later_pile)
        counts = count_cards(hand)
        keep_cost = planner.cost(counts)
        caught_cost = keep_cost + CARD_COST * pile
        # A true claim called hands the pile to an opponent: worth a share of it.
        others = max(1, steps - 1)
        best: tuple[float, Action] | None = None
        ranks = (view.required,) if view.required is not None else self._ranks_to_name(hand)
        for rank in ranks:
            true_cards = _true_cards(view, rank)
            junk = self._junk_order(planner, hand, rank)
            # Copies the others cannot know are not in this player's hand or its pile cards.
            covered = len(true_cards) + doubt.own_on_pile(rank)
            outside = doubt.total_of(rank) - covered
            for shown in range(min(len(true_cards), limit), -1, -1):
                most = min(limit - shown, len(junk))
                # Every padding up to a few cards, and the most it may play (with
                # ``max_cards=any`` the range is the hand: too many to weigh each).
                paddings = sorted({*range(min(most, MAX_PADDING) + 1), most})
                for padded in paddings:
                    if shown + padded == 0:
                        continue
                    played = (*true_cards[:shown], *junk[:padded])
                    lie = padded > 0
                    risk = doubt.risk(
                        lie=lie,
                        count=len(played),
                        deficit=len(played) - covered,
                        outside=outside,
                        covered=len(played) <= covered,
                    )
                    value = self._value(
                        planner,
                        counts,
                        played,
                        lie=lie,
                        final=len(played) == len(hand),
                        risk=risk,
                        final_risk=doubt.final_risk,
                        caught_cost=caught_cost,
                    )
                    if not lie:
                        value -= risk * CARD_COST * (pile + len(played)) / others
                    # Nearly equal options are drawn at random: a player that always picks
                    # the same one can be read, and two of them can repeat a cycle of plays
                    # for ever.
                    value += TIE_NOISE * rng.random()
                    if best is None or value < best[0]:
                        best = (value, Play(seat, played, rank))
        if view.may_pass:
            # Nothing shed and nothing risked (a vote that fails only means playing after all).
            value = keep_cost + 0.05
            if best is None or value < best[0]:
                best = (value, Pass(seat))
        assert best is not None
        return best[1]

    @staticmethod
    def _value(
        planner: _Planner,
        counts: Counts,
        played: Sequence[Card],
        *,
        lie: bool,
        final: bool,
        risk: float,
        final_risk: float,
        caught_cost: float,
    ) -> float:
        """The expected cost of the hand after ``played`` (``_Planner.cost``): a lie called
        costs the pile and the cards back (``caught_cost``)."""
        left = list(counts)
        for card in played:
            left[slot(card.rank)] -= 1
        if final:
            if not lie:
                return -WIN_VALUE
            return (1.0 - final_risk) * -WIN_VALUE + final_risk * caught_cost
        after = planner.cost(left)
        if not lie:
            return after
        return (1.0 - risk) * after + risk * caught_cost

    @staticmethod
    def _ranks_to_name(hand: Sequence[Card]) -> tuple[Rank, ...]:
        held = tuple(r for r in CLAIMABLE_RANKS if any(c.rank is r for c in hand))
        return held or (Rank.ACE,)

    @staticmethod
    def _junk_order(planner: _Planner, hand: Sequence[Card], rank: Rank) -> list[Card]:
        """The cards to bluff with, least worth keeping first: under ``ascending`` the ranks
        whose turn comes last, keeping the rank the next player must claim (held back, it
        may leave that player nothing true to play); otherwise lone cards before groups.
        Jokers are never bluffed."""
        others = [c for c in hand if c.rank is not rank and c.rank is not Rank.JOKER]
        start = planner.next_rank
        if start is not None:
            blocked = rank.next_in_sequence()

            def wait(card: Card) -> int:
                return (slot(card.rank) - start) % 13 * planner.inverse % 13

            return sorted(others, key=lambda c: (c.rank is blocked, -wait(c), int(c)))
        sizes = count_cards(others)
        return sorted(others, key=lambda c: (sizes[slot(c.rank)], -int(c.rank), int(c)))


def head_to_head(view: SeatView) -> bool:
    """Whether ``hard`` plans its turn by playing the game out (``headtohead``): two players
    left, the ranks ascending on a deck without wild jokers, the pile going to whoever loses
    a call of the last play, and no passing."""
    rules = view.rules
    return (
        len(view.active_seats()) == 2
        and view.required is not None
        and rules.rank_rule is RankRule.ASCENDING
        and rules.jokers is Jokers.OFF
        and rules.challenge_window is ChallengeWindow.LAST
        and rules.after_challenge is AfterChallenge.CONTINUE
        and rules.passing is Passing.NEVER
        and not rules.revolver
    )


def duel_of(view: SeatView, knowledge: Knowledge, opponent: Opponent) -> Duel:
    """The head-to-head position as the seat believes it (``headtohead``): of the cards it
    cannot place, the opponent's claims on the pile are taken as true, the others are in the
    opponent's hand (any beyond its size were set aside by a player who left)."""
    total = deck_counts(view)[:RANKS]
    mine = list(count_cards(view.hand)[:RANKS])
    mine_pile = list(knowledge.mine_on_pile[:RANKS])
    theirs_claimed = list(knowledge.claimed_on_pile[:RANKS])
    unplaced = [
        max(0, t - m - p - o)
        for t, m, p, o in zip(total, mine, mine_pile, knowledge.out[:RANKS], strict=True)
    ]
    theirs_pile = [min(u, c) for u, c in zip(unplaced, theirs_claimed, strict=True)]
    # A lie of the opponent's left standing puts the counts off: its share of the pile is
    # as big as it is, the most numerous beliefs giving way first.
    _fit(theirs_pile, unplaced, view.pile_size - sum(mine_pile))
    theirs = [u - p for u, p in zip(unplaced, theirs_pile, strict=True)]
    seat = _opponent_seat(view)
    _fit(theirs, theirs, view.hand_sizes[seat])
    return Duel(
        mine=mine,
        mine_pile=mine_pile,
        mine_claimed=list(knowledge.mine_claimed[:RANKS]),
        theirs=theirs,
        theirs_pile=theirs_pile,
        theirs_claimed=theirs_claimed,
        rank=slot(view.required) if view.required is not None else 0,
        limit=view.rules.max_cards or sum(total),
        final_called=opponent.calls_finals,
        takes_piles=knowledge.seats[seat].multi_lies == 0,
    )


def _fit(counts: list[int], most: Sequence[int], size: int) -> None:
    """Make ``counts`` add up to ``size`` (or as near as ``0 <= counts <= most`` allows),
    taking from the largest counts and adding where the most is spare."""
    excess = sum(counts) - size
    while excess > 0:
        counts[counts.index(max(counts))] -= 1
        excess -= 1
    while excess < 0:
        spare = [m - c for m, c in zip(most, counts, strict=True)]
        if max(spare) <= 0:
            return
        counts[spare.index(max(spare))] += 1
        excess += 1


def _opponent_seat(view: SeatView) -> int:
    return next(s for s in view.active_seats() if s != view.seat)


def opponent_of(record: SeatRecord) -> Opponent:
    """What this game has shown of how the opponent answers this player's claims
    (``call_chance``, ``proof_rate``, ``final_call_rate``)."""
    return Opponent(
        proves=proof_rate(record),
        doubts=tuple(call_chance(record, kind) for kind in range(KINDS)),
        final=final_call_rate(record),
    )


def _duel_turn(view: SeatView, knowledge: Knowledge, rng: AIRandom) -> Play:
    """``hard``'s turn head to head: the candidate play whose games played out score best
    (``headtohead``), nearly equal ones drawn at random."""
    assert view.required is not None
    opponent = opponent_of(knowledge.seats[_opponent_seat(view)])
    duel = duel_of(view, knowledge, opponent)
    best: tuple[float, list[int]] | None = None
    for count, true in duel.candidates():
        cards = duel.played(count, true)
        value = duel.value(cards, opponent) + DUEL_NOISE * rng.random()
        if best is None or value > best[0]:
            best = (value, cards)
    assert best is not None
    wanted = best[1]
    chosen = []
    for card in sorted(view.hand):
        index = slot(card.rank)
        if index < RANKS and wanted[index]:
            wanted[index] -= 1
            chosen.append(card)
    return Play(view.seat, tuple(chosen), view.required)


#: The spread, in plies of a game played out, within which head-to-head plays count as equal.
DUEL_NOISE = 0.25


def _callers_of(view: SeatView) -> list[int]:
    """Who may call Cheat! on this seat's next play."""
    if view.rules.challengers is Challengers.NEXT:
        return [view.next_active(view.seat)]
    return [s for s in view.active_seats() if s != view.seat]


#: How likely a player who calls at all is to call a lie its own cards prove.
PROVEN_CALL = 0.95
#: Each chance to call that a seat let pass without any call so far makes it that much less
#: likely to call a provable lie.
SILENCE = 0.85


def proof_rate(record: SeatRecord) -> float:
    """How likely a seat is to call a lie its own cards prove: almost surely for any player
    who has called Cheat! at all; for one who has let every chance pass, less and less."""
    if record.calls > 0:
        return PROVEN_CALL
    return PROVEN_CALL * SILENCE**record.chances


class _Doubt:
    """How likely the others are to call this player's next claim: for each opponent, what
    it did with this player's claims of the same kind in this game (``call_chance``), and at
    least the chance that its own cards prove the claim false (a player can refute a claim of
    n cards of a rank when the copies it knows of leave fewer than n for the claimant) times
    how surely it calls what it can prove."""

    def __init__(self, view: SeatView, knowledge: Knowledge) -> None:
        self.knowledge = knowledge
        self._memo: dict[tuple[bool, int, int, int, bool], float] = {}
        self.totals = deck_counts(view)
        self.wild = view.rules.jokers is Jokers.WILD
        seat = view.seat
        records = knowledge.seats
        self.callers = _callers_of(view)
        self.records = [records[s] if s < len(records) else SeatRecord() for s in self.callers]
        self.proofs = [proof_rate(r) for r in self.records]
        self.final_risk = 1.0 - math.prod(1.0 - final_call_rate(r) for r in self.records)
        # Each other player's share of the cards this player cannot see: its hand and its
        # part of the pile (the pile's unknown cards split evenly), all of which it knows.
        others = [s for s in view.active_seats() if s != seat]
        pile_unknown = max(0, view.pile_size - sum(knowledge.mine_on_pile))
        unseen = sum(view.hand_sizes[s] for s in others) + pile_unknown
        self.shares = [
            (view.hand_sizes[s] + pile_unknown / max(len(others), 1)) / max(unseen, 1)
            for s in self.callers
        ]

    def total_of(self, rank: Rank | None) -> int:
        """Copies that stand for ``rank`` (any rank for None): its own and wild jokers."""
        index = 0 if rank is None else slot(rank)
        return self.totals[index] + (self.totals[JOKER] if self.wild else 0)

    def own_on_pile(self, rank: Rank) -> int:
        """Its own cards on the pile that stand for ``rank``, less its own claims of the rank
        there (the others count those as copies on the pile already)."""
        mine = self.knowledge.mine_on_pile
        held = mine[slot(rank)] + (mine[JOKER] if self.wild else 0)
        return max(0, held - self.knowledge.mine_claimed[slot(rank)])

    def risk(
        self, *, lie: bool, count: int, deficit: int, outside: int, covered: bool = False
    ) -> float:
        """The chance someone calls a claim of ``count`` cards (a lie or not) that needs
        ``deficit`` copies more than this player holds and has on the pile, ``outside``
        copies being elsewhere; ``covered``: a lie of no more cards than it holds of the
        rank (it keeps them back)."""
        key = (lie, count, deficit, outside, covered)
        known = self._memo.get(key)
        if known is not None:
            return known
        kind = claim_kind(lie, count, covered)
        believed = 1.0
        for record, proof, share in zip(self.records, self.proofs, self.shares, strict=True):
            chance = call_chance(record, kind)
            if lie and deficit > 0:
                # It must know of more than ``outside - deficit`` of the outside copies.
                provable = _binomial_tail(outside, share, outside - deficit + 1)
                chance = max(chance, provable * proof)
            believed *= 1.0 - chance
        self._memo[key] = 1.0 - believed
        return 1.0 - believed


def _binomial_tail(trials: int, chance: float, at_least: int) -> float:
    """P(X >= at_least) for X ~ Binomial(trials, chance)."""
    if at_least <= 0:
        return 1.0
    if at_least > trials:
        return 0.0
    chance = min(max(chance, 0.0), 1.0)
    return sum(
        math.comb(trials, k) * chance**k * (1.0 - chance) ** (trials - k)
        for k in range(at_least, trials + 1)
    )


# --- hard under the revolver ---------------------------------------------------------------------

#: What ``hard`` assumes, before it has seen any, of how likely the next player is to call a
#: lie of its own under the revolver (``knowledge.claim_kind``: true one card, true more, a
#: lie of one card, of more, a covered lie).
REVOLVER_CALL_PRIOR = (0.2, 0.3, 0.45, 0.6, 0.35)


def death_chance(view: SeatView, seat: int) -> float:
    """The chance that ``seat``'s next pull of the trigger shoots (one bullet, the chambers
    pulled so far empty)."""
    pulls = view.pulls[seat] if seat < len(view.pulls) else 0
    return 1.0 / max(1, CHAMBERS - pulls)


class _Revolver:
    """``hard`` under ``penalty=revolver``: no pile to take, a round ends at the first call
    and whoever was wrong pulls the trigger. A call is weighed by the chances of each pull
    shooting (the caller's own against the claimant's, that one worth a share among several
    opponents); a turn plays true cards (the rank and jokers) while it holds any, keeping one
    back for the next turn when it also holds cards it would have to lie with, and lies with
    as few cards as it can, the fewer the less a lie is called. Going without cards is safe
    for the rest of the round."""

    def __init__(
        self, hard: HardStrategy, view: SeatView, knowledge: Knowledge, rng: AIRandom
    ) -> None:
        self.hard = hard
        self.view = view
        self.knowledge = knowledge
        self.rng = rng

    def decide(self, now_ms: int) -> Action | None:
        view = self.view
        seat = view.seat
        claims = view.challengeable()
        if claims and seat in view.awaited:
            claim = claims[-1]
            if view.play_limit == 0 or self._calls(claim):
                return Challenge(seat, claim.number, now_ms)
        if seat != view.turn or view.play_limit == 0:
            return None
        return self._turn()

    def _opponent_weight(self) -> float:
        """What an opponent's pull is worth against one's own: all of it head to head."""
        alive = len(self.view.active_seats()) - 1
        return 1.0 if alive <= 1 else 1.0 / alive

    def _calls(self, claim: SeenClaim) -> bool:
        view = self.view
        p = self.hard.lie_chance(view, self.knowledge, claim)
        if p >= 1.0:
            return True
        mine = death_chance(view, view.seat)
        theirs = death_chance(view, claim.seat) * self._opponent_weight()
        calling = (1.0 - p) * mine - p * theirs
        # Letting it stand: this player plays on, and a lie of its own may be called.
        honest = bool(_true_cards(view, view.required or claim.rank))
        nxt = view.next_in_round(view.seat)
        lie_kind = claim_kind(True, 1)
        called = self._call_chance(nxt, lie_kind)
        playing_on = 0.0 if honest else called * mine
        return calling < playing_on - REVOLVER_MARGIN * mine

    def _call_chance(self, seat: int, kind: int) -> float:
        record = self.knowledge.seats[seat] if seat < len(self.knowledge.seats) else SeatRecord()
        chances = record.on_mine[kind]
        calls = record.on_mine[KINDS + kind]
        prior = REVOLVER_CALL_PRIOR[kind]
        return (calls + prior * CALL_PRIOR_WEIGHT) / (chances + CALL_PRIOR_WEIGHT)

    def _turn(self) -> Action:
        view = self.view
        seat = view.seat
        rank = view.required if view.required is not None else rank_held_most(view.hand)
        true_cards = _true_cards(view, rank)
        # Naturals first, jokers last: a joker is true for any rank of a later round too.
        false_cards = [c for c in view.hand if c not in true_cards]
        limit = view.play_limit
        if true_cards:
            shown = true_cards[:limit]
            if false_cards:
                # One true card a turn while it also holds cards it would have to lie with:
                # every later turn of the round then has a true card too.
                shown = shown[:1]
            return Play(seat, tuple(shown), rank)
        return Play(seat, (false_cards[_pick(self.rng, len(false_cards))],), rank)


#: How much of its own pull's chance a call must save over playing on.
REVOLVER_MARGIN = 0.0


# --- the registry --------------------------------------------------------------------------------

STRATEGIES: dict[str, Strategy] = {
    strategy.name: strategy
    for strategy in (
        LegacyStrategy("easy", calls=True),
        NormalStrategy(),
        HardStrategy(),
        RandomStrategy(),
        HonestStrategy(),
        LegacyStrategy("never", calls=False),
        CounterStrategy(),
    )
}
#: The strategy of a computer player when none is named.
DEFAULT_STRATEGY = "normal"
#: The levels offered to people, weakest first (the others are baselines for measuring).
LEVELS = ("easy", "normal", "hard")


def strategy(name: str) -> Strategy:
    """The strategy called ``name``; KeyError for an unknown name."""
    return STRATEGIES[name]


def remember_as(
    name: str, knowledge: Knowledge, before: GameState, events: Sequence[Event], after: GameState
) -> Knowledge:
    """``knowledge.remember`` for a player of strategy ``name``: one that calibrates its
    beliefs (``hard``) has each revealed claim judged as it saw it."""
    played = STRATEGIES[name]
    judge = played.judge if isinstance(played, HardStrategy) else None
    return remember(knowledge, before, events, after, judge)


# --- a table's computer players ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ComputerPlayers:
    """The computer players of one game: a strategy name per seat (None for a person) and
    each one's knowledge. Immutable: ``remember`` returns the next value."""

    strategies: tuple[str | None, ...]
    knowledge: tuple[Knowledge | None, ...]

    @classmethod
    def seat(cls, state: GameState, strategies: Sequence[str | None]) -> ComputerPlayers:
        """Computer players for the seats of a game just dealt (``strategies`` by seat)."""
        if len(strategies) != len(state.players):
            raise ValueError("one strategy (or None) per seat is expected")
        return cls(
            strategies=tuple(strategies),
            knowledge=tuple(
                None if name is None else new_knowledge(state, seat, STRATEGIES[name].memory)
                for seat, name in enumerate(strategies)
            ),
        )

    def remember(
        self, before: GameState, events: Sequence[Event], after: GameState
    ) -> ComputerPlayers:
        """After one ``apply``: each computer player remembers what it saw."""
        return ComputerPlayers(
            self.strategies,
            tuple(
                None if k is None or name is None else remember_as(name, k, before, events, after)
                for name, k in zip(self.strategies, self.knowledge, strict=True)
            ),
        )

    def choose(self, state: GameState, seat: int, rng: AIRandom, now_ms: int) -> Action | None:
        """What the computer player at ``seat`` does now (None for a person's seat): its
        strategy is given what the seat sees (``view.see``) and its memory, nothing else."""
        name = self.strategies[seat]
        knowledge = self.knowledge[seat]
        if name is None or knowledge is None:
            return None
        if state.phase is Phase.FINISHED or not 0 <= seat < len(state.players):
            return None
        view = see(state, seat)
        return STRATEGIES[name].choose(view, knowledge, rng, now_ms) or forced_call(view, now_ms)

    def to_data(self) -> dict[str, Any]:
        return {
            "strategies": list(self.strategies),
            "knowledge": [None if k is None else k.to_data() for k in self.knowledge],
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> ComputerPlayers:
        names = tuple(None if n is None else str(n) for n in data["strategies"])
        for name in names:
            if name is not None and name not in STRATEGIES:
                raise ValueError(f"unknown strategy {name!r}")
        return cls(
            names, tuple(None if k is None else Knowledge.from_data(k) for k in data["knowledge"])
        )
