"""What players must be told of a game, recorded in the session as data: the reveals and passes
as a numbered log, and epochs that say when the table and each hand come back as a new message.

Delivery (``tgcheat.bot.delivery``) shows the session from these alone: a line is posted once
whatever happens to the process that committed it, and nothing here depends on the wall clock
(a message is drawn the same way every time it is drawn). ``audiences`` decides, once, what a
change makes owed; this module only keeps it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tgcheat.engine.events import Event, FinalPlayPending, PassRequested, TurnStarted
from tgcheat.engine.state import GameState
from tgcheat.table.audiences import Announcement, audience
from tgcheat.table.chronicle import Notice

#: The lines kept: far more than one sync is ever behind by (a reveal is a line, and a sync
#: runs after every change); older ones are known to have been posted.
MAX_LINES = 16


@dataclass(frozen=True, slots=True)
class Told:
    """One game's log of group lines and its epochs (a new game starts a new one)."""

    #: The game it is the log of (the session's ``game_id``).
    game_id: str = ""
    #: The last lines, each with its number (from 1, in order).
    lines: tuple[tuple[int, Announcement], ...] = ()
    #: How many lines the game has had.
    count: int = 0
    #: Moves when the table is posted anew at the bottom of the group (a reveal, a pass, last
    #: cards answered in the group, the end).
    table_epoch: int = 0
    #: Per player (user id), moves when their hand comes back as a new message that
    #: notifies (their turn, an answer asked of them in private, a notice for them).
    hand_epochs: tuple[tuple[int, int], ...] = ()
    #: The turn its player was last told of: (seat, play count); (-1, -1) none. A turn that
    #: starts again for the same player at the same play (a Cheat! call under ``continue``)
    #: edits their hand rather than notifying them twice.
    turn_told: tuple[int, int] = (-1, -1)

    def hand_epoch(self, user_id: int) -> int:
        # A loop, not a generator: asked for every hand drawn.
        for user, epoch in self.hand_epochs:
            if user == user_id:
                return epoch
        return 0


def told_after(
    told: Told,
    game_id: str,
    state: GameState,
    events: Sequence[Event],
    notice: Notice | None = None,
) -> Told:
    """``told`` once ``events`` brought game ``game_id`` to ``state`` (``notice``: what
    happened without anyone's press): its announcements added to the log, the table's epoch
    moved when it is posted anew, and the epoch of every hand that comes back as a
    notification. Another game's log is not continued: this game's starts empty."""
    if told.game_id != game_id:
        told = Told(game_id=game_id)
    if not events and notice is None:
        return told
    shown = audience(state, events, notice)
    numbered = tuple(
        (told.count + index, event) for index, event in enumerate(shown.announcements, start=1)
    )
    turns = {event.seat for event in events if isinstance(event, TurnStarted)}
    turn_told = (state.turn, state.plays) if turns else told.turn_told
    again = turn_told if turns and turn_told == told.turn_told else None
    epochs = dict(told.hand_epochs)
    for seat in shown.notified:
        if again is not None and seat == again[0] and _only_turn(seat, events, notice):
            continue
        user_id = state.players[seat].user_id
        epochs[user_id] = epochs.get(user_id, 0) + 1
    return Told(
        game_id=game_id,
        lines=(told.lines + numbered)[-MAX_LINES:],
        count=told.count + len(numbered),
        table_epoch=told.table_epoch + int(shown.table_moves),
        hand_epochs=tuple(sorted(epochs.items())),
        turn_told=turn_told,
    )


def _only_turn(seat: int, events: Sequence[Event], notice: Notice | None) -> bool:
    """Whether ``seat`` is notified of its turn only (not asked to vote or to answer last
    cards, nor told of a notice)."""
    if notice is not None and notice.seat == seat:
        return False
    for event in events:
        if isinstance(event, FinalPlayPending) and seat in event.answerers:
            return False
        if isinstance(event, PassRequested) and seat in event.voters:
            return False
    return True


def told_noticed(told: Told, state: GameState, notice: Notice) -> Told:
    """``told`` once the player ``notice`` concerns (one who left or was removed) is told in
    private: their hand comes back as a new message."""
    user_id = state.players[notice.seat].user_id
    epochs = dict(told.hand_epochs)
    epochs[user_id] = epochs.get(user_id, 0) + 1
    return dataclasses.replace(told, hand_epochs=tuple(sorted(epochs.items())))


def told_reminded(told: Told, state: GameState, seats: Iterable[int]) -> Told:
    """``told`` once the players at ``seats`` are reminded of a long turn: their hands come
    back as new messages (a notification)."""
    epochs = dict(told.hand_epochs)
    for seat in seats:
        user_id = state.players[seat].user_id
        epochs[user_id] = epochs.get(user_id, 0) + 1
    return dataclasses.replace(told, hand_epochs=tuple(sorted(epochs.items())))
