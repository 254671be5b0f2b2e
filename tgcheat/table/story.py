"""The story of a game: every play's claim and its true cards, whether it was called and who
took the pile, the passes and the players who left; kept as the game goes, from the engine's
events (as the tally is), and told once the game is over (never before: the true cards of a
live game are its players' secret).

The record is bounded whatever the game's length (the move cap allows 10,000 moves): the first
``OPENING`` entries and the latest ``CLOSING`` ones are kept, and the moves between them are
only counted (``folded``: plays, passes and leavings alike). A finished game's story is posted
once (``told``).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from dataclasses import dataclass

from tgcheat.engine.cards import Card, Rank
from tgcheat.engine.events import (
    CardsPlayed,
    ChallengeResolved,
    Event,
    Passed,
    PlayerLeft,
)
from tgcheat.engine.game import is_lie
from tgcheat.engine.rules import Rules

#: The first entries of a game, kept whatever its length: how it began.
OPENING = 10
#: The latest entries kept: how it ended. With ``OPENING``, one message on a phone.
CLOSING = 40


@dataclass(frozen=True, slots=True)
class PlayEntry:
    """One play: the claim, the cards really played, and how it was answered."""

    number: int
    seat: int
    rank: Rank
    cards: tuple[Card, ...]
    #: The cards prove the claim false (``tgcheat.engine.game.is_lie``).
    lie: bool
    #: The clock played for the player whose time ran out.
    by_timeout: bool = False
    #: The player's last cards.
    final: bool = False
    #: The seat that called Cheat! on it (None: nobody did), the seat that took the pile and
    #: how many cards that was.
    caller: int | None = None
    taker: int | None = None
    taken: int = 0


class AsideKind(enum.StrEnum):
    """A move that is not a play."""

    PASSED = "p"
    PASSED_BY_VOTE = "v"
    #: Every card of the rank lay in the pile (``passing=exhausted``).
    PASSED_EXHAUSTED = "x"
    LEFT = "l"
    REMOVED_FOR_TIMEOUTS = "r"


@dataclass(frozen=True, slots=True)
class AsideEntry:
    kind: AsideKind
    seat: int
    #: The rank whose cards were all in the pile (``PASSED_EXHAUSTED``).
    rank: Rank | None = None


Entry = PlayEntry | AsideEntry


@dataclass(frozen=True, slots=True)
class Story:
    """A game's story so far: its opening entries, the plays folded after them, its latest
    entries; and whether the finished game's story was posted."""

    opening: tuple[Entry, ...] = ()
    folded: int = 0
    closing: tuple[Entry, ...] = ()
    told: bool = False

    @property
    def entries(self) -> tuple[Entry, ...]:
        return self.opening + self.closing

    @property
    def empty(self) -> bool:
        return not self.opening and not self.closing and not self.folded


def storied(story: Story, rules: Rules, events: Sequence[Event]) -> Story:
    """``story`` with what ``events`` add to it."""
    for event in events:
        if isinstance(event, CardsPlayed):
            claim = event.claim
            entry: Entry = PlayEntry(
                claim.number,
                claim.seat,
                claim.rank,
                claim.cards,
                is_lie(rules, claim),
                event.by_timeout,
                claim.final,
            )
            story = _added(story, entry)
        elif isinstance(event, ChallengeResolved):
            story = _called(story, event)
        elif isinstance(event, Passed):
            story = _added(story, _pass_entry(event))
        elif isinstance(event, PlayerLeft):
            kind = AsideKind.REMOVED_FOR_TIMEOUTS if event.removed_for_timeouts else AsideKind.LEFT
            story = _added(story, AsideEntry(kind, event.seat))
    return story


def _pass_entry(event: Passed) -> AsideEntry:
    if event.by_vote:
        return AsideEntry(AsideKind.PASSED_BY_VOTE, event.seat)
    if event.rank is not None:
        return AsideEntry(AsideKind.PASSED_EXHAUSTED, event.seat, event.rank)
    return AsideEntry(AsideKind.PASSED, event.seat)


def _added(story: Story, entry: Entry) -> Story:
    if len(story.opening) < OPENING and not story.closing and not story.folded:
        return dataclasses.replace(story, opening=(*story.opening, entry))
    closing = (*story.closing, entry)
    folded = story.folded
    if len(closing) > CLOSING:
        closing = closing[1:]
        folded += 1
    return dataclasses.replace(story, closing=closing, folded=folded)


def _called(story: Story, event: ChallengeResolved) -> Story:
    """The play challenged, with its caller and the pile taken. A challenge answers an open
    claim, one of the latest plays: it is found among the kept entries (else it was folded)."""

    def answered(entries: tuple[Entry, ...]) -> tuple[Entry, ...]:
        return tuple(
            dataclasses.replace(
                entry, caller=event.challenger, taker=event.taker, taken=event.taken
            )
            if isinstance(entry, PlayEntry) and entry.number == event.claim.number
            else entry
            for entry in entries
        )

    return dataclasses.replace(
        story, opening=answered(story.opening), closing=answered(story.closing)
    )
