"""What one player legitimately knows about a game: a computer player's memory.

A player at the table sees the current state only in part: their own hand, how many cards
each hand and the pile hold, the claims (seat, number of cards, rank), and the cards a
challenge reveals. What they *remember* on top of that is this module's ``Knowledge``: a small,
immutable, JSON-able value that ``remember`` folds over the events of every ``apply``. It is
built from the facts the seat saw and nothing else: never the pile's faces, another hand, or
the cards of another player's unrevealed play.

Counts are kept per rank (suits never matter), so the value stays bounded whatever the length
of the game: for each seat a count per rank and a few tallies, nothing that grows with the
number of plays.

Three depths of memory (``Memory``), so that computer players of different levels differ by
what they remember as well as by how they decide:

- ``hand``: nothing beyond what the table shows now (own hand, own plays still open);
- ``own``: also every card it put on the pile itself, the claims on the pile, and where known
  cards went: when a pile is taken, its own cards and the revealed ones go to the taker's
  hand; a player who took known cards and then claims their rank is taken to play them;
- ``full``: also, for each seat, the ranks it claimed since it last took a pile (it played
  its copies of those), how often its revealed claims were lies, how often it calls Cheat!
  and challenges a final play, and what a pass under ``passing=exhausted`` tells; how it
  treated the rememberer's own claims of each kind (called or let stand); and, given the
  player's own judge, how each revealed claim of that seat fared against the chance of a lie
  the player had judged it (the player's calibration).

Some of these facts are beliefs, not certainties (a player who took a known 7 may have
played it under another claim): they are kept apart from the certain ones, which are the
player's own cards, so that a "sure lie" is only ever called on certain counts.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tgcheat.engine.cards import CODES_PER_DECK, Card, Rank
from tgcheat.engine.events import (
    CardsPlayed,
    ChallengeResolved,
    Event,
    FinalAccepted,
    Passed,
    PlayerLeft,
    RoundDealt,
)
from tgcheat.engine.game import rank_copies
from tgcheat.engine.rules import Challengers, Jokers, Passing
from tgcheat.engine.state import GameState
from tgcheat.engine.view import (
    SeatView,
    SeenAccept,
    SeenChallenge,
    SeenClaim,
    SeenEvent,
    SeenPlay,
    see,
    seen_events,
)

#: One count per rank: A, 2–10, J, Q, K, then the joker.
SLOTS = len(Rank)
#: Version of ``Knowledge.to_data``'s format; ``from_data`` also reads version 1 (a game
#: stored before the tallies of version 2, which start from nothing), and refuses another.
DATA_VERSION = 2
#: The number of tallies after ``held`` in a seat's record of version 1.
V1_TALLIES = 10
#: Kinds of claim whose calls are tallied apart (``claim_kind``).
KINDS = 5
#: The judged chances of a lie are tallied in bins with these lower bounds (``judged_bin``).
BIN_EDGES = (0.0, 0.3, 0.5, 0.7, 0.85, 0.95)
BINS = len(BIN_EDGES)

Counts = tuple[int, ...]
ZERO: Counts = (0,) * SLOTS


class Memory(enum.StrEnum):
    HAND = "hand"
    OWN = "own"
    FULL = "full"


def slot(rank: Rank) -> int:
    return int(rank) - 1


def judged_bin(chance: float) -> int:
    """The bin of a judged chance of a lie (``BIN_EDGES``)."""
    return max(i for i, edge in enumerate(BIN_EDGES) if chance >= edge)


def claim_kind(lie: bool, count: int, covered: bool = False) -> int:
    """The kind of a claim whose calls are tallied apart: true, of one card or more (0, 1);
    a lie that needs copies the claimant did not hold, of one card or more (2, 3), which a
    player holding the other copies can prove false; a lie it held enough copies to make
    true (4: it kept them back), which nobody can prove."""
    if lie and covered:
        return 4
    return 2 * lie + (count > 1)


#: A judge: the chance that another seat's claim is a lie, as the rememberer sees it.
Judge = Callable[[SeatView, "Knowledge", SeenClaim], float]


def count_cards(cards: Iterable[Card]) -> Counts:
    counts = [0] * SLOTS
    for card in cards:
        counts[_SLOT_OF_CODE[card % CODES_PER_DECK]] += 1
    return tuple(counts)


# The slot of each card code within a deck (counting is the memory's most frequent step).
_SLOT_OF_CODE = tuple(slot(Card(code).rank) for code in range(CODES_PER_DECK))


def deck_counts(game: GameState | SeatView) -> Counts:
    """How many cards of each rank the game's deck(s) hold."""
    seats = len(game.hand_sizes) if isinstance(game, SeatView) else len(game.players)
    return tuple(rank_copies(game.rules, seats, Rank(s + 1)) for s in range(SLOTS))


@dataclass(frozen=True, slots=True)
class SeatRecord:
    """What a player remembers of one seat (its own included, where only the tallies of
    how others treated it matter)."""

    #: Cards known to have gone into this seat's hand (a pile it took, with cards the
    #: rememberer knows) and not traced out of it since: a belief, capped by its hand size.
    held: Counts = ZERO
    #: Its claims that a challenge revealed, and how many of those were lies; single-card and
    #: multi-card claims apart (a lone card is most often a forced lie, a group a padded one).
    single_shown: int = 0
    single_lies: int = 0
    multi_shown: int = 0
    multi_lies: int = 0
    #: Others' non-final plays it could have called Cheat! on, and its calls (any play).
    chances: int = 0
    calls: int = 0
    #: Its calls that caught a lie.
    right_calls: int = 0
    #: Final plays it answered (accepted or challenged), and those it challenged.
    final_chances: int = 0
    final_calls: int = 0
    #: The ranks it claimed since it last took a pile, one bit per rank (1 << slot): a player
    #: plays every true card of the rank it is asked for, so it likely holds none of those.
    cleared: int = 0
    #: How it treated the rememberer's own claims (``full``): for each kind of claim
    #: (``claim_kind``: true or a lie, one card or more, a lie it could have made true), the
    #: claims it could call that were
    #: settled, then its calls on them (a claim another called first is not counted for it).
    on_mine: tuple[int, ...] = (0,) * (2 * KINDS)
    #: Its claims revealed by a challenge that the rememberer had judged (``full`` with a
    #: judge), by the judged chance of a lie (``judged_bin``): how many, then how many of
    #: those were lies (what the judge expected against what happened: its calibration).
    judged: tuple[int, ...] = (0,) * (2 * BINS)

    def to_data(self) -> list[Any]:
        return [
            list(self.held),
            self.single_shown,
            self.single_lies,
            self.multi_shown,
            self.multi_lies,
            self.chances,
            self.calls,
            self.right_calls,
            self.final_chances,
            self.final_calls,
            self.cleared,
            list(self.on_mine),
            list(self.judged),
        ]

    @classmethod
    def from_data(cls, data: Sequence[Any]) -> SeatRecord:
        if len(data) == 1 + V1_TALLIES:
            # Version 1: nothing tallied yet of the rememberer's own claims or its judgements.
            data = [*data, [0] * (2 * KINDS), [0] * (2 * BINS)]
        held, *tallies, on_mine, judged = data
        if len(on_mine) != 2 * KINDS or len(judged) != 2 * BINS:
            raise ValueError("a tally per kind of claim and per judged chance is expected")
        (
            single_shown,
            single_lies,
            multi_shown,
            multi_lies,
            chances,
            calls,
            right_calls,
            final_chances,
            final_calls,
            cleared,
        ) = (int(t) for t in tallies)
        return cls(
            _counts(held),
            single_shown=single_shown,
            single_lies=single_lies,
            multi_shown=multi_shown,
            multi_lies=multi_lies,
            chances=chances,
            calls=calls,
            right_calls=right_calls,
            final_chances=final_chances,
            final_calls=final_calls,
            cleared=cleared,
            on_mine=tuple(int(n) for n in on_mine),
            judged=tuple(int(n) for n in judged),
        )


@dataclass(frozen=True, slots=True)
class Knowledge:
    """What the player at ``seat`` remembers; what it sees now is read from the state."""

    seat: int
    memory: Memory
    #: Its own cards on the current pile (``own`` and ``full``; with ``hand`` it sees only its
    #: plays still open, in the state).
    mine_on_pile: Counts = ZERO
    #: Others' cards it believes are on the current pile (``own`` and ``full``): cards it saw
    #: go into a hand, traced back out by a claim of their rank, or (``full``) every copy of a
    #: rank after a pass under ``passing=exhausted``.
    traced_on_pile: Counts = ZERO
    #: Cards claimed by others on the current pile, per claimed rank (``own`` and ``full``).
    claimed_on_pile: Counts = ZERO
    #: Cards it knows were set aside by players who left (``own`` and ``full``).
    out: Counts = ZERO
    #: One record per seat (``own`` keeps only ``held``; ``full`` all of it).
    seats: tuple[SeatRecord, ...] = ()
    #: For each open play of another seat: (claim number, how many of its cards were traced
    #: from that seat's known holdings), so the lie estimate counts them as true cards.
    traced_claims: tuple[tuple[int, int], ...] = ()
    #: Its own open plays that are not final (``full``): (claim number, ``claim_kind``), to
    #: tally who called them once they are settled.
    mine_open: tuple[tuple[int, int], ...] = ()
    #: Cards it claimed itself on the current pile, per claimed rank (``full``): the others
    #: take its earlier claims of a rank as copies of it on the pile.
    mine_claimed: Counts = ZERO

    def to_data(self) -> dict[str, Any]:
        """Plain JSON-able data (``from_data`` reads it back)."""
        return {
            "v": DATA_VERSION,
            "seat": self.seat,
            "memory": self.memory.value,
            "mine_on_pile": list(self.mine_on_pile),
            "traced_on_pile": list(self.traced_on_pile),
            "claimed_on_pile": list(self.claimed_on_pile),
            "out": list(self.out),
            "seats": [record.to_data() for record in self.seats],
            "traced_claims": [list(pair) for pair in self.traced_claims],
            "mine_open": [list(pair) for pair in self.mine_open],
            "mine_claimed": list(self.mine_claimed),
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Knowledge:
        if data.get("v") not in (1, DATA_VERSION):
            raise ValueError(f"unknown knowledge format {data.get('v')!r}")
        return cls(
            seat=int(data["seat"]),
            memory=Memory(data["memory"]),
            mine_on_pile=_counts(data["mine_on_pile"]),
            traced_on_pile=_counts(data["traced_on_pile"]),
            claimed_on_pile=_counts(data["claimed_on_pile"]),
            out=_counts(data["out"]),
            seats=tuple(SeatRecord.from_data(record) for record in data["seats"]),
            traced_claims=tuple((int(n), int(t)) for n, t in data["traced_claims"]),
            mine_open=tuple((int(n), int(k)) for n, k in data.get("mine_open", ())),
            mine_claimed=_counts(data.get("mine_claimed", ZERO)),
        )


def _counts(data: Sequence[Any]) -> Counts:
    counts = tuple(int(x) for x in data)
    if len(counts) != SLOTS or min(counts) < 0:
        raise ValueError("a count per rank is expected")
    return counts


def new_knowledge(state: GameState, seat: int, memory: Memory = Memory.FULL) -> Knowledge:
    """The knowledge of ``seat`` when the cards are dealt (or when a computer player takes
    over a seat mid-game: then it starts from what the table shows)."""
    return first_knowledge(see(state, seat), memory)


def first_knowledge(view: SeatView, memory: Memory = Memory.FULL) -> Knowledge:
    """``new_knowledge`` from what the seat sees."""
    mine = ZERO
    if memory is not Memory.HAND:
        mine = count_cards(c for claim in view.open_claims for c in claim.cards)
    return Knowledge(
        seat=view.seat,
        memory=memory,
        mine_on_pile=mine,
        seats=tuple(SeatRecord() for _ in view.hand_sizes),
    )


def remember(
    knowledge: Knowledge,
    before: GameState,
    events: Sequence[Event],
    after: GameState,
    judge: Judge | None = None,
) -> Knowledge:
    """``knowledge`` after one ``apply`` that turned ``before`` into ``after`` with ``events``:
    ``recall`` of what the seat saw of them (``view.see``, ``view.seen_events``), the one
    place where a memory meets the full state, and only to redact it."""
    if knowledge.memory is Memory.HAND or not any(isinstance(e, _REMEMBERED) for e in events):
        return knowledge
    seat = knowledge.seat
    return recall(knowledge, see(before, seat), seen_events(events, seat), see(after, seat), judge)


def recall(
    knowledge: Knowledge,
    before: SeatView,
    events: Sequence[SeenEvent],
    after: SeatView,
    judge: Judge | None = None,
) -> Knowledge:
    """``knowledge`` after one ``apply``, from what the seat saw of it: ``before`` and
    ``after`` as it saw the table, and the events as it saw them (a play's claim, its cards
    only for its own plays; a challenge's revealed cards and who took the pile; a final play
    accepted; a pass and why; who left; a new deal). Its types hold no other hand and no
    pile face: a memory cannot learn what its seat did not see.

    ``judge`` (``full`` memory): the player's own estimate of how likely a claim is to be a
    lie; each claim a challenge reveals is judged as the player saw it just before, and the
    estimate is tallied against the truth (``SeatRecord.judged``).
    """
    if knowledge.memory is Memory.HAND:
        return knowledge
    full = knowledge.memory is Memory.FULL
    me = knowledge.seat
    mine = list(knowledge.mine_on_pile)
    traced = list(knowledge.traced_on_pile)
    claimed = list(knowledge.claimed_on_pile)
    out = list(knowledge.out)
    seats = _Seats(knowledge.seats)
    traced_claims = dict(knowledge.traced_claims)
    mine_open = dict(knowledge.mine_open)
    mine_claimed = list(knowledge.mine_claimed)
    wild = before.rules.jokers is Jokers.WILD
    for event in events:
        match event:
            case SeenPlay(claim=claim):
                if claim.seat == me:
                    if full and not claim.final:
                        mine_open[claim.number] = _own_kind(before, claim, mine, wild)
                    if full:
                        mine_claimed[slot(claim.rank)] += claim.count
                    for card in claim.cards:
                        mine[slot(card.rank)] += 1
                    continue
                rank = slot(claim.rank)
                claimed[rank] += claim.count
                claimant = seats[claim.seat]
                if full:
                    claimant.cleared |= 1 << rank
                    for seat in _could_call(before, claim.seat):
                        seats[seat].chances += 1
                # A player who took known cards of the claimed rank is assumed to play them
                # when the rank comes (what every sensible player does); wild jokers too.
                take = min(claim.count, claimant.held[rank])
                claimant.held[rank] -= take
                traced[rank] += take
                if wild and take < claim.count:
                    jokers = min(claim.count - take, claimant.held[slot(Rank.JOKER)])
                    claimant.held[slot(Rank.JOKER)] -= jokers
                    traced[slot(Rank.JOKER)] += jokers
                    take += jokers
                traced_claims[claim.number] = take
            case SeenAccept(seat=seat) if full:
                seats[seat].final_chances += 1
            case SeenChallenge(claim=claim):
                if full and claim.seat == me:
                    kind = mine_open.pop(claim.number, -1)
                    if kind >= 0:
                        for seat in event.callers or (event.challenger,):
                            seats[seat].on_mine[kind] += 1
                            seats[seat].on_mine[KINDS + kind] += 1
                elif full and judge is not None:
                    chance = judge(before, knowledge, claim)
                    index = judged_bin(chance)
                    seats[claim.seat].judged[index] += 1
                    seats[claim.seat].judged[BINS + index] += event.lie
                _take_pile(event, me, full, mine, traced, seats)
                mine = [0] * SLOTS
                traced = [0] * SLOTS
                claimed = [0] * SLOTS
                mine_claimed = [0] * SLOTS
                traced_claims = {}
            case Passed(rank=rank, by_vote=False) if (
                full and rank is not None and before.rules.passing is Passing.EXHAUSTED
            ):
                # The referee let the pass through: every copy of the rank is out of the hands.
                index = slot(rank)
                total = deck_counts(before)[index]
                traced[index] = max(0, total - mine[index] - out[index])
                for seat in range(len(seats)):
                    if seats.record(seat).held[index]:
                        seats[seat].held[index] = 0
            case PlayerLeft(seat=seat):
                out = [o + h for o, h in zip(out, seats[seat].held, strict=True)]
                seats[seat].held = [0] * SLOTS
            case RoundDealt():
                # Every card is gathered and dealt anew (``penalty=revolver``): where cards
                # were tells nothing any more; how each seat plays and calls still does.
                mine = [0] * SLOTS
                traced = [0] * SLOTS
                claimed = [0] * SLOTS
                mine_claimed = [0] * SLOTS
                out = [0] * SLOTS
                traced_claims = {}
                mine_open = {}
                for seat in range(len(seats)):
                    record = seats.record(seat)
                    if any(record.held) or record.cleared:
                        seats[seat].held = [0] * SLOTS
                        seats[seat].cleared = 0
            case _:
                pass
    # A hand holds no more known cards than it has cards: what was played under another claim
    # is forgotten, the most numerous belief first.
    for seat in range(len(seats)):
        held = seats.record(seat).held
        if seat == me:
            if any(held):
                seats[seat].held = [0] * SLOTS
            continue
        size = after.hand_sizes[seat]
        if sum(held) > size:
            record = seats[seat]
            while sum(record.held) > size:
                record.held[record.held.index(max(record.held))] -= 1
    open_numbers = {claim.number for claim in after.open_claims}
    for number, kind in list(mine_open.items()):
        if number not in open_numbers:
            # Settled without a call: everyone who could have called it let it stand.
            del mine_open[number]
            for seat in _could_call(after, me):
                seats[seat].on_mine[kind] += 1
    return Knowledge(
        seat=me,
        memory=knowledge.memory,
        mine_on_pile=tuple(mine),
        traced_on_pile=tuple(traced),
        claimed_on_pile=tuple(claimed),
        out=tuple(out),
        seats=seats.freeze(),
        traced_claims=tuple(sorted((n, t) for n, t in traced_claims.items() if n in open_numbers)),
        mine_open=tuple(sorted(mine_open.items())),
        mine_claimed=tuple(mine_claimed),
    )


def _own_kind(before: SeatView, claim: SeenClaim, mine: Sequence[int], wild: bool) -> int:
    """The ``claim_kind`` of the rememberer's own claim: a lie is covered when it held (in
    its hand, or among its own cards already on the pile, which nobody else can place either)
    as many cards true for the rank as it claimed."""
    held = sum(1 for card in before.hand if _stands_for(card, claim.rank, wild))
    held += mine[slot(claim.rank)] + (mine[slot(Rank.JOKER)] if wild else 0)
    lie = any(not _stands_for(card, claim.rank, wild) for card in claim.cards)
    return claim_kind(lie, claim.count, covered=claim.count <= held)


def _stands_for(card: Card, rank: Rank, wild: bool) -> bool:
    """Whether ``card`` is true for a claim of ``rank`` (RULES.md ``jokers``)."""
    return card.rank is rank or (wild and card.rank is Rank.JOKER)


#: The events that change a memory (the others, such as a turn starting, change nothing).
_REMEMBERED = (CardsPlayed, ChallengeResolved, FinalAccepted, Passed, PlayerLeft, RoundDealt)


def _could_call(view: SeatView, claimant: int) -> tuple[int, ...]:
    """Who could call Cheat! on a new play by ``claimant`` (RULES.md ``challengers``)."""
    if view.rules.challengers is Challengers.NEXT:
        return (view.next_active(claimant),)
    return tuple(s for s in view.active_seats() if s != claimant)


def _take_pile(
    event: SeenChallenge,
    me: int,
    full: bool,
    mine: list[int],
    traced: list[int],
    seats: _Seats,
) -> None:
    """The pile went to ``event.taker``: the cards the rememberer knew in it go with it."""
    claim = event.claim
    revealed = count_cards(event.revealed)
    if claim.seat == me:
        # Its own cards, already counted on the pile.
        revealed = ZERO
    else:
        # The revealed cards left the claimant's hand: known ones must not be counted twice
        # (those of the claimed rank were traced out when the play was made).
        known = seats[claim.seat].held
        for index, shown in enumerate(revealed):
            if index != slot(claim.rank):
                known[index] -= min(known[index], shown)
    others = [max(t, r) for t, r in zip(traced, revealed, strict=True)]
    taker = seats[event.taker]
    taker.cleared = 0
    if event.taker != me:
        taker.held = [h + m + o for h, m, o in zip(taker.held, mine, others, strict=True)]
    if not full:
        return
    claimant = seats[claim.seat]
    if claim.count == 1:
        claimant.single_shown += 1
        claimant.single_lies += event.lie
    else:
        claimant.multi_shown += 1
        claimant.multi_lies += event.lie
    for seat in event.callers or (event.challenger,):
        seats[seat].calls += 1
        seats[seat].right_calls += event.lie
    if claim.final:
        for seat in event.callers or (event.challenger,):
            seats[seat].final_chances += 1
            seats[seat].final_calls += 1


class _Seats:
    """The seats' records while one ``remember`` folds its events: a mutable copy of a record
    is made only for a seat whose record changes (most events touch one or two)."""

    def __init__(self, records: tuple[SeatRecord, ...]) -> None:
        self.records = records
        self.changed: dict[int, _Seat] = {}

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, seat: int) -> _Seat:
        copy = self.changed.get(seat)
        if copy is None:
            copy = self.changed[seat] = _Seat(self.records[seat])
        return copy

    def record(self, seat: int) -> SeatRecord | _Seat:
        """The record as it stands, without copying it."""
        return self.changed.get(seat) or self.records[seat]

    def freeze(self) -> tuple[SeatRecord, ...]:
        return tuple(
            self.changed[seat].freeze() if seat in self.changed else record
            for seat, record in enumerate(self.records)
        )


class _Seat:
    """A mutable copy of a ``SeatRecord`` while one ``remember`` folds its events."""

    def __init__(self, record: SeatRecord) -> None:
        self.held = list(record.held)
        self.single_shown = record.single_shown
        self.single_lies = record.single_lies
        self.multi_shown = record.multi_shown
        self.multi_lies = record.multi_lies
        self.chances = record.chances
        self.calls = record.calls
        self.right_calls = record.right_calls
        self.final_chances = record.final_chances
        self.final_calls = record.final_calls
        self.cleared = record.cleared
        self.on_mine = list(record.on_mine)
        self.judged = list(record.judged)

    def freeze(self) -> SeatRecord:
        return SeatRecord(
            held=tuple(self.held),
            single_shown=self.single_shown,
            single_lies=self.single_lies,
            multi_shown=self.multi_shown,
            multi_lies=self.multi_lies,
            chances=self.chances,
            calls=self.calls,
            right_calls=self.right_calls,
            final_chances=self.final_chances,
            final_calls=self.final_calls,
            cleared=self.cleared,
            on_mine=tuple(self.on_mine),
            judged=tuple(self.judged),
        )
