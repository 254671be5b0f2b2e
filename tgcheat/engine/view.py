"""What one seat can see of a game: the only thing a computer player's strategy is given.

A ``SeatView`` holds the seat's own hand, the number of cards in every hand and in the pile,
the claims on the table (seat, number of cards, rank; the cards only of the seat's own
plays), the public parts of the state (whose turn, the required rank, a final play waiting
for its answers, a vote, Cheat! presses being collected), and the referee's answers to the
questions a player asks by pressing a button (may I play, how many cards, may I pass, which
plays may I call). It has no field for another hand or the pile's faces, so a strategy that
reads only its view cannot peek: fairness by construction.

``see`` builds the view from the full state; it is the one place that reads hidden cards,
and then only to answer the referee's questions (``passing=exhausted`` asks whether every
copy of a rank lies in the pile: the referee checks it, as it would for a person).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tgcheat.engine.cards import Card, Rank
from tgcheat.engine.events import (
    CardsPlayed,
    ChallengeResolved,
    Event,
    FinalAccepted,
    Passed,
    PlayerLeft,
    RoundDealt,
)
from tgcheat.engine.game import (
    awaited,
    can_accept,
    can_pass,
    can_vote,
    challengeable,
    deck_ranks,
    play_limit,
)
from tgcheat.engine.rules import Challengers, Rules
from tgcheat.engine.state import Claim, GameState, PendingChallenge, Phase


@dataclass(frozen=True, slots=True)
class SeenClaim:
    """A claim as one seat sees it: its cards only when the seat made it."""

    number: int
    seat: int
    #: How many cards were played (always true, RULES.md).
    count: int
    rank: Rank
    final: bool
    #: The cards, for the seat's own play; () for another's.
    cards: tuple[Card, ...] = ()


@dataclass(frozen=True, slots=True)
class SeatView:
    """A game as the player at ``seat`` sees it (see the module's docstring)."""

    rules: Rules
    seat: int
    dealer: int
    turn: int
    required: Rank | None
    phase: Phase
    plays: int
    #: The seat's own hand.
    hand: tuple[Card, ...]
    #: Cards in each seat's hand, and whether each seat has left.
    hand_sizes: tuple[int, ...]
    left: tuple[bool, ...]
    pile_size: int
    open_claims: tuple[SeenClaim, ...]
    accepted: frozenset[int]
    #: Cheat! presses being collected (who pressed, on which play, when: all public).
    challenges: tuple[PendingChallenge, ...]
    vote_by: int | None
    votes_yes: tuple[int, ...]
    # The referee's answers for this seat.
    #: How many cards it may play now (0: it may not play).
    play_limit: int
    may_pass: bool
    may_vote: bool
    may_accept: bool
    #: The numbers of the open plays it may call Cheat! on now.
    callable: tuple[int, ...]
    #: The seats the game waits for.
    awaited: frozenset[int]
    #: ``penalty=revolver``: whose trigger is about to be pulled (public), and each seat's
    #: pulls so far (the bullets are secret).
    pull_by: int | None = None
    pulls: tuple[int, ...] = ()

    @property
    def seats(self) -> int:
        return len(self.hand_sizes)

    def active_seats(self) -> tuple[int, ...]:
        return tuple(i for i, gone in enumerate(self.left) if not gone)

    def next_active(self, seat: int) -> int:
        """The next seat clockwise from ``seat`` still in the game."""
        count = len(self.left)
        for step in range(1, count + 1):
            candidate = (seat + step) % count
            if not self.left[candidate]:
                return candidate
        return seat

    def next_in_round(self, seat: int) -> int:
        """The seat that plays after ``seat`` (``game.next_in_round``): under the revolver a
        seat with no cards sits the round out."""
        if not self.rules.revolver:
            return self.next_active(seat)
        count = len(self.left)
        for step in range(1, count):
            candidate = (seat + step) % count
            if not self.left[candidate] and self.hand_sizes[candidate]:
                return candidate
        return seat

    @property
    def final_claim(self) -> SeenClaim | None:
        if self.phase is not Phase.FINAL_CHECK or not self.open_claims:
            return None
        return self.open_claims[-1]

    def challengeable(self) -> tuple[SeenClaim, ...]:
        """The open claims this seat may call Cheat! on now."""
        return tuple(c for c in self.open_claims if c.number in self.callable)

    def claimable_ranks(self) -> tuple[Rank, ...]:
        if self.required is not None:
            return (self.required,)
        return deck_ranks(self.rules)

    def deck_count(self) -> int:
        return self.rules.deck_count(len(self.hand_sizes))


def seen_claim(claim: Claim, seat: int) -> SeenClaim:
    return SeenClaim(
        number=claim.number,
        seat=claim.seat,
        count=len(claim.cards),
        rank=claim.rank,
        final=claim.final,
        cards=claim.cards if claim.seat == seat else (),
    )


def see(state: GameState, seat: int) -> SeatView:
    """``state`` as the player at ``seat`` sees it."""
    return SeatView(
        rules=state.rules,
        seat=seat,
        dealer=state.dealer,
        turn=state.turn,
        required=state.required,
        phase=state.phase,
        plays=state.plays,
        hand=state.players[seat].hand if 0 <= seat < len(state.players) else (),
        hand_sizes=tuple(len(p.hand) for p in state.players),
        left=tuple(p.left for p in state.players),
        pile_size=len(state.pile),
        open_claims=tuple(seen_claim(c, seat) for c in state.open_claims),
        accepted=state.accepted,
        challenges=state.challenges,
        vote_by=state.vote_by,
        votes_yes=state.votes_yes,
        play_limit=play_limit(state, seat),
        may_pass=can_pass(state, seat),
        may_vote=can_vote(state, seat),
        may_accept=can_accept(state, seat),
        callable=tuple(c.number for c in challengeable(state, seat)),
        awaited=awaited(state),
        pull_by=state.pull_by,
        pulls=tuple(p.pulls for p in state.players) if state.rules.revolver else (),
    )


def callers(view: SeatView, claim: SeenClaim) -> tuple[int, ...]:
    """Who may call Cheat! on ``claim`` by the rules (``challengers``), as the table knows."""
    if view.rules.challengers is Challengers.NEXT:
        return (view.next_in_round(claim.seat),)
    return tuple(s for s in view.active_seats() if s != claim.seat)


# --- what a seat saw happen ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeenPlay:
    """A play as one seat saw it: the claim, with its cards only for the seat's own play."""

    claim: SeenClaim


@dataclass(frozen=True, slots=True)
class SeenChallenge:
    """A challenge as the table saw it: the challenged play's cards are turned over."""

    challenger: int
    claim: SeenClaim
    revealed: tuple[Card, ...]
    lie: bool
    taker: int
    callers: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class SeenAccept:
    """A final play accepted by ``seat`` (its cards stay face down)."""

    seat: int


#: What a seat's memory is told of one ``apply``: the events a player at the table
#: remembers, as that seat saw them (``Passed``, ``PlayerLeft`` and ``RoundDealt`` hold no
#: card anybody could not see).
SeenEvent = SeenPlay | SeenChallenge | SeenAccept | Passed | PlayerLeft | RoundDealt


def seen_events(events: Iterable[Event], seat: int) -> tuple[SeenEvent, ...]:
    """``events`` as the player at ``seat`` saw them: the other events change no memory."""
    seen: list[SeenEvent] = []
    for event in events:
        match event:
            case CardsPlayed(claim=claim):
                seen.append(SeenPlay(seen_claim(claim, seat)))
            case ChallengeResolved():
                seen.append(
                    SeenChallenge(
                        challenger=event.challenger,
                        claim=seen_claim(event.claim, seat),
                        revealed=event.revealed,
                        lie=event.lie,
                        taker=event.taker,
                        callers=event.callers,
                    )
                )
            case FinalAccepted(seat=accepter):
                seen.append(SeenAccept(accepter))
            case Passed() | PlayerLeft() | RoundDealt():
                seen.append(event)
            case _:
                pass
    return tuple(seen)
