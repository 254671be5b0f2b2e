"""Who must be shown what: decided once, from the rules, for the views and the publisher.

After a change of a game, ``audience`` says which group messages go out (the table, each
reveal and pass, the result), whose hand message comes back as a new message with a
notification (their turn, or an answer asked of them in private) and whose is edited in place.
For a state, ``table_answer`` and ``private_answers`` say where Cheat!, I believe you and the
pass vote are answered: on the table, or in the private chats of those asked (under
``challengers=next`` only the next player may call Cheat!; under ``final_check=next`` only the
next player answers last cards). Nothing else in the bot branches on those rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tgcheat.engine.events import (
    ChallengeResolved,
    Event,
    FinalPlayPending,
    GameEnded,
    HandChanged,
    Passed,
    PassRefused,
    PassRequested,
    PassVoted,
    TriggerPulled,
    TurnStarted,
)
from tgcheat.engine.game import can_accept, can_vote, challengeable
from tgcheat.engine.rules import Challengers, FinalCheck
from tgcheat.engine.state import Claim, GameState, Phase
from tgcheat.table.chronicle import Notice

#: Events the group is told of with a message of their own (a notification), before the table:
#: each reveal, pass and pull of a trigger (``penalty=revolver``, after the reveal's pause).
Announcement = ChallengeResolved | Passed | TriggerPulled


@dataclass(frozen=True, slots=True)
class Audience:
    """What a change of a game shows, and to whom."""

    #: Group lines of their own, in order: each reveal and pass.
    announcements: tuple[Announcement, ...]
    #: The game ended: the final table (winner, places, summary) is posted.
    ended: bool
    #: Last cards were played and are answered in the group: those who must answer are named
    #: in a new table message (a notification).
    final_in_group: bool
    #: Seats whose hand comes back as a new message (a notification).
    notified: frozenset[int]
    #: Seats whose hand message is edited in place.
    edited: frozenset[int]

    @property
    def table_moves(self) -> bool:
        """The table is posted anew at the bottom of the group (the old message keeps a short
        line of what happened), so that it stays the last bot message and notifies."""
        return bool(self.announcements) or self.ended or self.final_in_group

    @property
    def group_messages(self) -> int:
        """Group requests this change costs (counted against the group's budget with it)."""
        return _group_requests(len(self.announcements), self.table_moves)

    @property
    def hands(self) -> frozenset[int]:
        return self.notified | self.edited


def _group_requests(announcements: int, table_moves: bool) -> int:
    # A moving table: the old message edited into the first line, a message for each other
    # line, the new table; else one edit.
    return 1 + max(announcements, 1) if table_moves else 1


def audience(state: GameState, events: Sequence[Event], notice: Notice | None = None) -> Audience:
    """Who is shown what after ``events`` brought the game to ``state``; ``notice`` (what
    happened without anyone's press) concerns one player, who is told in private."""
    rules = state.rules
    everyone = frozenset(range(len(state.players)))
    notified = {e.seat for e in events if isinstance(e, TurnStarted)}
    own_hand = {e.seat for e in events if isinstance(e, HandChanged)}
    changed = set(own_hand)
    final_in_group = False
    for event in events:
        if isinstance(event, FinalPlayPending):
            if rules.final_check is FinalCheck.NEXT:
                notified |= event.answerers
            else:
                # Those who answer are named on the table, posted anew (a notification);
                # their hands do not change.
                final_in_group = True
        elif isinstance(event, PassRequested):
            notified |= event.voters
        elif isinstance(event, PassVoted | PassRefused | Passed):
            # Every hand shows the vote, or that it is over.
            changed |= everyone
        elif isinstance(event, ChallengeResolved):
            # The Cheat! button in the hand of the player who was to answer the claim is gone.
            changed.add(state.next_active(event.claim.seat))
    changed = {seat for seat in changed if not state.players[seat].left} | own_hand
    if notice is not None:
        notified.add(notice.seat)
    ended = any(isinstance(e, GameEnded) for e in events)
    announcements = tuple(
        e for e in events if isinstance(e, ChallengeResolved | Passed | TriggerPulled)
    )
    if state.phase is Phase.FINISHED:
        notified_seats = frozenset(notified) & ({notice.seat} if notice else set())
        return Audience(announcements, ended, False, notified_seats, everyone - notified_seats)
    notified_seats = frozenset(notified)
    return Audience(
        announcements,
        ended,
        final_in_group,
        notified_seats,
        frozenset(changed) - notified_seats,
    )


def group_messages(events: Sequence[Event]) -> int:
    """How many group requests publishing ``events`` costs (the events alone decide it)."""
    announcements = sum(isinstance(e, ChallengeResolved | Passed | TriggerPulled) for e in events)
    # Last cards answered in private move no table either: counted anyway (the events do not
    # say which rule applies), one request more than is spent.
    moves = announcements > 0 or any(isinstance(e, GameEnded | FinalPlayPending) for e in events)
    return _group_requests(announcements, moves)


@dataclass(frozen=True, slots=True)
class TableAnswer:
    """The claim answered with buttons on the table, and whether I believe you is offered."""

    claim: Claim
    believe: bool


def table_answer(state: GameState) -> TableAnswer | None:
    """What the table's buttons answer: the last claim, unless it is answered in private."""
    last = state.last_claim
    if last is None or state.phase is Phase.FINISHED:
        return None
    final = state.phase is Phase.FINAL_CHECK
    if _answered_in_private(state, final=final):
        return None
    return TableAnswer(last, believe=final)


@dataclass(frozen=True, slots=True)
class PrivateAnswers:
    """What one player answers in their private chat."""

    #: Last cards they must believe or call Cheat! on.
    final: Claim | None = None
    #: Plays they may call Cheat! on from their hand: the last claim for the player to play
    #: (under ``challengers=next`` only they may).
    challengeable: tuple[Claim, ...] = ()
    #: Seat of the player whose request to pass they vote on.
    vote_for: int | None = None


def private_answers(state: GameState, seat: int) -> PrivateAnswers:
    final = state.final_claim
    rules = state.rules
    if final is not None:
        if not can_accept(state, seat):
            return PrivateAnswers(vote_for=_vote_for(state, seat))
        if rules.final_check is FinalCheck.NEXT:
            return PrivateAnswers(final=final, vote_for=_vote_for(state, seat))
        return PrivateAnswers(vote_for=_vote_for(state, seat))
    claims: tuple[Claim, ...] = ()
    if state.phase is Phase.PLAYING and (
        rules.challengers is Challengers.NEXT or (seat == state.turn and state.open_claims)
    ):
        # The player to play may doubt the last claim from their own turn message, whoever
        # else may call Cheat! too.
        claims = challengeable(state, seat)
    vote_for = _vote_for(state, seat)
    if not claims and vote_for is None:
        return _NOTHING_TO_ANSWER
    return PrivateAnswers(challengeable=claims, vote_for=vote_for)


_NOTHING_TO_ANSWER = PrivateAnswers()


def _vote_for(state: GameState, seat: int) -> int | None:
    return state.vote_by if state.vote_by is not None and can_vote(state, seat) else None


def _answered_in_private(state: GameState, *, final: bool) -> bool:
    rules = state.rules
    if final:
        return rules.final_check is FinalCheck.NEXT
    return rules.challengers is Challengers.NEXT
