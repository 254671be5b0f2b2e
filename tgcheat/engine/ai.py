"""Computer players, following the source texts' tips (``seeds/``).

- Play true cards when you can: it is safe (French text); prefer an honest last play (Italian).
- When you must bluff, one card on a small pile is better: a bluff on a big pile costs a lot.
- Count cards: only four of each rank per deck. Holding two queens, a claim of three queens
  is a sure lie (French text, RULES.md worked example 3).
- Challenge large claims: three or four of a kind at the right moment is unlikely (Italian).
- Watch players with few cards left: if they go out unchallenged they win (French).
- Challenge more carefully on a big pile, more boldly on a small one (Italian).

An AI sees what its player sees (a ``view.SeatView``): its own hand, its own open plays, the
number of cards in the pile and in each hand, and the claims; never the pile's faces or
another hand. Whether a pass is allowed is asked of the referee (``SeatView.may_pass``), as a
player would press the button.

Deterministic given the ``rng`` argument: ``random.Random(seed)`` for simulations.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from tgcheat.engine.actions import Accept, Action, Challenge, Pass, PassVote, Play
from tgcheat.engine.cards import CLAIMABLE_RANKS, Card, Rank
from tgcheat.engine.game import challengeable, rank_copies
from tgcheat.engine.rules import Jokers, Passing, RankRule
from tgcheat.engine.state import Claim, GameState, Phase
from tgcheat.engine.view import SeatView, SeenClaim, callers, see

#: A pile this big is "devastating to pick up" (Italian text: 20 or more cards).
BIG_PILE = 20
#: A pile this small is cheap to take: bluff and challenge more boldly.
SMALL_PILE = 5


class AIRandom(Protocol):
    """What the AI needs of a random generator (``random.Random``)."""

    def random(self) -> float: ...


def choose_action(
    state: GameState, seat: int, rng: AIRandom, now_ms: int = 0, *, calls: bool = True
) -> Action | None:
    """What the player at ``seat`` does now, or None when they have nothing to do (it is not
    their turn and they let the last play stand, or the game waits for someone else).

    This is the first computer player, kept as it was: the ``easy`` strategy of
    ``tgcheat.engine.strategies`` (which also has the stronger ones). With ``calls=False`` it
    never calls Cheat! and believes every final play (the ``never`` baseline). It decides on
    what the seat sees (``view.see``), never on the state itself.

    ``now_ms`` is stamped on a Cheat! call (``challenge_priority=clockwise``).
    """
    if state.phase is Phase.FINISHED or not 0 <= seat < len(state.players):
        return None
    return decide(see(state, seat), rng, now_ms, calls=calls)


def decide(view: SeatView, rng: AIRandom, now_ms: int = 0, *, calls: bool = True) -> Action | None:
    """``choose_action`` on what the seat sees."""
    seat = view.seat
    if view.phase is Phase.FINISHED or view.left[seat]:
        return None
    if view.challenges:
        return _join_call(view, now_ms) if calls else None
    if view.phase is Phase.FINAL_CHECK:
        claim = view.final_claim
        if claim is None or seat not in view.awaited:
            return None
        if calls and _challenge_final(view, claim, rng):
            return Challenge(seat, claim.number, now_ms)
        return Accept(seat, claim.number)
    if view.vote_by is not None:
        if view.may_vote:
            return PassVote(seat, agree_to_pass(view, rng))
        return None
    call = _challenge_decision(view, rng, now_ms) if calls else None
    if call is not None:
        return call
    if seat != view.turn:
        return None
    if not view.play_limit and view.seat in view.awaited and view.challengeable():
        # Calling is all the player may do (``penalty=revolver``: nobody else holds cards).
        return Challenge(seat, view.challengeable()[-1].number, now_ms)
    return choose_turn(view, rng)


# --- what a player knows ------------------------------------------------------------------------


def copies_unseen(view: SeatView, rank: Rank) -> int:
    """How many cards that could stand for ``rank`` (its copies, and wild jokers) the seat has
    not seen in its own hand or its own open plays."""
    wild = view.rules.jokers is Jokers.WILD
    known = [*view.hand]
    for claim in view.open_claims:
        known.extend(claim.cards)
    seats = view.seats
    unseen = rank_copies(view.rules, seats, rank) + (
        rank_copies(view.rules, seats, Rank.JOKER) if wild else 0
    )
    for card in known:
        if card.rank is rank or (wild and card.rank is Rank.JOKER):
            unseen -= 1
    return unseen


def sure_lie(view: SeatView, claim: SeenClaim) -> bool:
    """The claim needs more cards of its rank than the seat has not seen: it is a lie for sure
    (RULES.md worked example 3: two queens in hand, three claimed, one deck)."""
    return claim.count > copies_unseen(view, claim.rank)


def named_freely(view: SeatView, claim: SeenClaim) -> bool:
    """Whether the claimant chose the claimed rank: always under ``free``; under ``same`` when
    the claim opened a round (on an empty pile, after a challenge)."""
    match view.rules.rank_rule:
        case RankRule.FREE:
            return True
        case RankRule.SAME:
            return view.pile_size == claim.count
        case RankRule.ASCENDING | RankRule.TABLE:
            return False


def lie_chance(view: SeatView, claim: SeenClaim) -> float:
    """A rough belief that ``claim`` is a lie, from what the seat sees."""
    if sure_lie(view, claim):
        return 1.0
    count = claim.count
    unseen = copies_unseen(view, claim.rank)
    # A player who names the rank names one they hold: only padding can be false.
    chance = (0.1 if named_freely(view, claim) else 0.25) + 0.15 * (count - 1)
    if count >= unseen - 1:
        # The claim needs nearly every copy this player has not seen.
        chance += 0.15
    return min(chance, 0.95)


# --- challenges -----------------------------------------------------------------------------------


def _share(chance: float, challengers: int) -> float:
    """Each of ``challengers`` calls with this probability, so that someone at the table does
    with ``chance``: several computer players must not pile up their calls."""
    if challengers <= 1 or chance >= 1.0:
        return chance
    return 1.0 - float((1.0 - chance) ** (1.0 / challengers))


def _challenge_decision(view: SeatView, rng: AIRandom, now_ms: int) -> Challenge | None:
    open_to_me = view.challengeable()
    if not open_to_me:
        return None
    seat = view.seat
    newest = view.open_claims[-1]
    for claim in open_to_me:
        # An older play (window `two`) was already weighed when it was new: only a sure lie
        # is worth calling now.
        if sure_lie(view, claim):
            return Challenge(seat, claim.number, now_ms)
    if newest not in open_to_me:
        return None
    chance = lie_chance(view, newest) * _worth_calling(view, newest)
    if rng.random() < _share(chance, len(callers(view, newest))):
        return Challenge(seat, newest.number, now_ms)
    return None


def _worth_calling(view: SeatView, claim: SeenClaim) -> float:
    """How much the stakes favour a call: a big pile makes a wrong call costly; a claimant
    close to going out must not be believed lightly."""
    pile = view.pile_size
    weight = 0.4
    if pile >= BIG_PILE:
        weight *= 0.4
    elif pile >= 2 * SMALL_PILE:
        weight *= 0.7
    elif pile <= SMALL_PILE:
        weight *= 1.3
    left = view.hand_sizes[claim.seat]
    if left <= 2:
        weight += 0.35
    elif left <= 4:
        weight += 0.15
    return min(weight, 1.0)


def _challenge_final(view: SeatView, claim: SeenClaim, rng: AIRandom) -> bool:
    """A final play wins the game if it stands: do not believe it lightly (French text)."""
    chance = min(1.0, 0.2 + lie_chance(view, claim))
    return rng.random() < _share(chance, len(view.awaited))


def _join_call(view: SeatView, now_ms: int) -> Challenge | None:
    """While a Cheat! call is collected: join only a sure lie (nothing to lose then, and the
    nearest caller to the claimant wins the right to challenge)."""
    for claim in view.challengeable():
        if sure_lie(view, claim):
            return Challenge(view.seat, claim.number, now_ms)
    return None


# --- passing --------------------------------------------------------------------------------------


def agree_to_pass(view: SeatView, rng: AIRandom) -> bool:
    """Let a player pass unless they are a threat: fewer cards than this player, or close to
    going out."""
    asker = view.vote_by
    assert asker is not None
    theirs = view.hand_sizes[asker]
    mine = len(view.hand)
    if theirs <= 3:
        return False
    if theirs >= mine:
        return True
    return rng.random() < 0.3


# --- the turn -------------------------------------------------------------------------------------


def choose_turn(view: SeatView, rng: AIRandom, named: Rank | None = None) -> Play | Pass | None:
    """The play (or pass) of the player to play; ``named`` is the rank to name when the
    player names one (by default the rank it holds most)."""
    limit = view.play_limit
    if limit == 0:
        return None
    seat = view.seat
    hand = view.hand
    wild = view.rules.jokers is Jokers.WILD
    jokers = sorted(c for c in hand if c.rank is Rank.JOKER) if wild else []
    naming = view.required is None
    rank = view.required or named or rank_held_most(hand)
    naturals = sorted(c for c in hand if c.rank is rank)
    true_cards = naturals + jokers
    if len(true_cards) == len(hand) <= limit:
        # An honest last play: nothing to catch (Italian text: prefer it).
        return Play(seat, tuple(true_cards), rank)
    if naturals:
        chosen = naturals[:limit]
        rest = [c for c in hand if c not in chosen and c.rank is not Rank.JOKER]
        pad = 0.3 if naming else 0.15 if view.pile_size <= SMALL_PILE else 0.0
        if len(chosen) < limit and len(rest) >= 2 and rng.random() < pad:
            # Slip one odd card in with true ones, while the pile is small or when the rank
            # is this player's own choice (a claim nobody would otherwise doubt).
            chosen = [*chosen, junk_card(view, rest)]
        return Play(seat, tuple(chosen), rank)
    passable = view.may_pass
    # Every copy in the pile: a claim of the rank is a sure lie, so never bluff it.
    exhausted = passable and view.rules.passing is Passing.EXHAUSTED
    if jokers and (exhausted or view.pile_size >= 2 * SMALL_PILE or len(hand) <= limit):
        # A joker is a true card that gets rid of one: better than a pass or a bluff.
        return Play(seat, (jokers[0],), rank)
    if passable and (exhausted or view.pile_size >= SMALL_PILE):
        return Pass(seat)
    others = [c for c in hand if c.rank is not Rank.JOKER]
    if 2 <= len(hand) <= min(limit, 3) and rng.random() < 0.2:
        # The decisive bluff of a nearly empty hand (Italian text).
        return Play(seat, hand, rank)
    return Play(seat, (junk_card(view, others or list(hand)),), rank)


def rank_held_most(hand: Sequence[Card]) -> Rank:
    """Name the rank held most (``free``, or opening a round under ``same``): its true cards
    can go down, and under ``same`` the others must follow it."""
    counts: Counter[Rank] = Counter(c.rank for c in hand if c.rank is not Rank.JOKER)
    if not counts:
        return Rank.ACE
    return max(CLAIMABLE_RANKS, key=lambda r: (counts[r], -int(r)))


def junk_card(view: SeatView, cards: list[Card]) -> Card:
    """The card least worth keeping: under ``ascending`` the rank this player will be asked
    for last; otherwise a rank held alone (pairs may make a true play later)."""
    counts = Counter(c.rank for c in cards)
    if view.rules.rank_rule is RankRule.ASCENDING and view.required is not None:
        players = len(view.active_seats())
        current = int(view.required) - 1

        def wait(card: Card) -> int:
            # Turns until this player must claim the card's rank, the sequence moving one step
            # a turn and coming back to this player every `players` steps.
            target = int(card.rank) - 1
            for turns in range(1, 14):
                if (current + turns * players) % 13 == target:
                    return turns
            return 14

        return max(sorted(cards), key=lambda c: (wait(c), -counts[c.rank]))
    return min(sorted(cards), key=lambda c: (counts[c.rank], -int(c.rank)))


def challengers_for(state: GameState, claim: Claim) -> tuple[int, ...]:
    """The seats that may call Cheat! on ``claim`` now (for drivers that ask each in turn)."""
    return tuple(
        s
        for s in state.active_seats()
        if any(c.number == claim.number for c in challengeable(state, s))
    )
