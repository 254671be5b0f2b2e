"""Every change of a group's session while a game is on, and the session's own life (the
clock's tick, the bot leaving, a migration), as pure functions: from the session stored (or
None) to the new one, with the engine's events where a game changed. The time (``now_ms``) and
the randomness (``rng``) come in as arguments; a refusal is raised as ``SessionRefused`` (the
table's reasons) or ``ActionRefused`` (the engine's). Returning the very session given means
"nothing changes": the store then writes nothing.

The lobby's changes are in ``tgcheat.table.lobby``, who may do what in
``tgcheat.table.access``; their names are offered here too, so that a handler reaches every
change of a session through one module.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from tgcheat.engine.actions import Leave, Stop
from tgcheat.engine.cards import Rank
from tgcheat.engine.game import (
    ActionRefused,
    RandomSource,
    Refusal,
    apply,
    awaited,
    new_game,
    play_limit,
)
from tgcheat.engine.match import is_over, next_seating
from tgcheat.engine.state import GameState, Phase
from tgcheat.table.access import (
    Actor,
    game_of,
    in_progress,
    knows_admin,
    lobby_of,
    managed,
    refused,
    require_settings_manager,
)
from tgcheat.table.chronicle import GameTally, NoticeKind
from tgcheat.table.clock import (
    clock_action,
    game_deadline,
)
from tgcheat.table.commands import GameCommand, LeaveGame, to_action, typed_number
from tgcheat.table.computers import TableRandom, computer_move, seated
from tgcheat.table.lobby import (
    add_computer,
    adopt_rules,
    cancel,
    join,
    leave,
    lobby_tick,
    open_lobby,
    play_again,
    remove_computer,
    solo_game,
    start,
)
from tgcheat.table.progress import Events, advance, noticed, reminded
from tgcheat.table.refusals import SessionRefusal
from tgcheat.table.session import Session
from tgcheat.table.story import Story


def set_language(session: Session | None, language: str) -> Session | None:
    """The lobby or game in progress is shown in the group's new language."""
    if session is None or not session.in_progress or session.language == language:
        return session
    return dataclasses.replace(session, language=language)


# --- the game ----------------------------------------------------------------------------------


def act(
    session: Session | None, *, game_id: str | None, command: GameCommand, now_ms: int
) -> tuple[Session, Events]:
    """A player's action (or the game stopped) through the engine's one legality check."""
    session, game = game_of(session, game_id)
    state, events = apply(game, to_action(game, command))
    return advance(session, state, events, now_ms), tuple(events)


def leave_table(session: Session | None, user_id: int, now_ms: int) -> tuple[Session, Events]:
    """/leave: out of the lobby, or out of the game (the hand set aside)."""
    if session is not None and session.lobby is not None:
        return leave(session, user_id), ()
    left = act(session, game_id=None, command=LeaveGame(user_id), now_ms=now_ms)
    return noticed(left, NoticeKind.LEFT, user_id)


def stop(session: Session | None, *, actor: Actor, now_ms: int) -> tuple[Session, Events]:
    """/stop: the lobby closes, or the game ends without a winner."""
    session = managed(session, actor)
    if session.lobby is not None:
        return cancel(session, game_id=None, actor=actor), ()
    session, game = game_of(session, None)
    state, events = apply(game, Stop())
    return advance(session, state, events, now_ms), tuple(events)


def remove(
    session: Session | None, user_id: int, now_ms: int, kind: NoticeKind = NoticeKind.LEFT
) -> tuple[Session | None, Events]:
    """A person is no longer at the table (kicked, or gone from the group): out of the lobby,
    or out of the game (their hand set aside). Nothing changes when they were not in it."""
    if session is None:
        return session, ()
    if session.lobby is not None:
        if not session.lobby.has(user_id):
            return session, ()
        return leave(session, user_id), ()
    game = session.live_game
    seat = game.seat_of(user_id) if game is not None else None
    if game is None or seat is None or game.players[seat].left:
        return session, ()
    state, events = apply(game, Leave(seat))
    return noticed((advance(session, state, events, now_ms), tuple(events)), kind, user_id)


def kick(
    session: Session | None, *, target: int | None, seat_number: str, actor: Actor, now_ms: int
) -> tuple[Session | None, Events]:
    """/kick by the creator or an admin, of ``target`` (the author of the message replied
    to) or of the player numbered ``seat_number`` (from 1: their seat, as the table numbers
    them; before the deal, their place in the lobby's list); someone not at the table is
    refused.

    Nobody may kick their way to a win. In a game, a creator who is not an admin may remove
    only an absent player (one who missed their turn and has not acted since); and a kick
    that would leave a single player stops the game, without a winner, where a leave would
    make that player the winner."""
    session = managed(session, actor)
    if target is None:
        target = _player_numbered(session, seat_number)
    if target is None:
        raise refused(SessionRefusal.NO_KICK_TARGET)
    if session.lobby is not None:
        if not session.lobby.has(target):
            raise refused(SessionRefusal.NOT_A_PLAYER)
        return leave(session, target), ()
    game = session.live_game
    seat = game.seat_of(target) if game is not None else None
    if game is None or seat is None or game.players[seat].left:
        raise refused(SessionRefusal.NOT_A_PLAYER)
    if not is_absent(game, seat) and not knows_admin(actor):
        raise refused(SessionRefusal.KICK_NOT_ABSENT)
    if len(game.active_seats()) <= 2:
        # The engine's Leave would end the game with the other player as its winner: the
        # game is stopped instead, the kicked player still in their seat when it ends.
        state, events = apply(game, Stop())
        stopped = advance(session, state, events, now_ms), tuple(events)
        return noticed(stopped, NoticeKind.KICKED, target)
    return remove(session, target, now_ms, NoticeKind.KICKED)


def is_absent(game: GameState, seat: int) -> bool:
    """The player at ``seat`` let their last turn run out and has not acted since. (Whether
    they can be reached is not known here; one who cannot never sees their cards, so their
    first turn runs out.)"""
    return game.players[seat].timeouts > 0


def _player_numbered(session: Session, number: str) -> int | None:
    """The player numbered ``number`` (from 1) in the lobby's list, or in the game's seats."""
    typed = typed_number(number)
    if typed is None:
        return None
    if session.lobby is not None:
        listed = [user_id for user_id, _ in session.lobby.players]
    elif session.game is not None:
        listed = [player.user_id for player in session.game.players]
    else:
        return None
    index = typed - 1
    return listed[index] if 0 <= index < len(listed) else None


def next_game(
    session: Session | None,
    *,
    game_id: str,
    actor: Actor,
    new_game_id: str,
    rng: RandomSource,
    now_ms: int,
) -> tuple[Session, Events]:
    """The next game of a match: the same seats, the dealer one seat on. A player of the match
    or an admin deals it, once the last game is over and the match is not."""
    if session is None or session.game_id != game_id or session.match is None:
        raise refused(SessionRefusal.STALE)
    if actor.user_id not in dict(session.match.players) and not knows_admin(actor):
        raise ActionRefused(Refusal.NOT_IN_GAME)
    game = session.game
    if is_over(session.match) or game is None or game.phase is not Phase.FINISHED:
        raise refused(SessionRefusal.STALE)
    state, events = new_game(session.match.rules, next_seating(session.match), rng)
    fresh = dataclasses.replace(
        session,
        game_id=new_game_id,
        deadline_ms=0,
        notice=None,
        tally=GameTally(),
        story=Story(),
        computer_players=None,
        ended_ms=0,
    )
    return seated(advance(fresh, state, events, now_ms), state), tuple(events)


# --- the story, once the game is over ---------------------------------------------------------


def tell_story(session: Session | None, *, game_id: str) -> Session:
    """📜 How it went: the finished game's story marked as posted, for anyone who asks (the
    game is over: nothing in it is secret any more). A button of another game is stale; a
    game still being played keeps its secrets; a story is posted once a game."""
    if session is None or session.game_id != game_id or session.game is None:
        raise refused(SessionRefusal.STALE)
    if session.live_game is not None:
        raise refused(SessionRefusal.GAME_NOT_OVER)
    if session.story.told:
        raise refused(SessionRefusal.STORY_TOLD)
    return dataclasses.replace(session, story=dataclasses.replace(session.story, told=True))


def untell_story(session: Session | None, *, game_id: str) -> Session | None:
    """The story could not be posted after all (Telegram refused it): it may be asked again."""
    if session is None or session.game_id != game_id or not session.story.told:
        return session
    return dataclasses.replace(session, story=dataclasses.replace(session.story, told=False))


# --- the clock, and the group coming and going -------------------------------------------------


def tick(
    session: Session | None,
    now_ms: int,
    *,
    rng: TableRandom,
    unseen: frozenset[int] = frozenset(),
) -> tuple[Session | None, Events]:
    """The clock's turn: a full lobby is dealt (with ``rng``), a lobby nobody started closes;
    the computer players make their move; a game's deadline acts (a timeout, or the Cheat!
    calls of a grace period settled). Nothing happens before its time. A player the game
    waits for whose hand was not shown yet (``unseen``: held for the bot's send budget or a
    flood wait) does not time out: their time starts again."""
    if session is None or session.next_deadline_ms == 0 or session.next_deadline_ms > now_ms:
        return session, ()
    if session.lobby is not None:
        return lobby_tick(session, session.lobby, now_ms, rng)
    game = session.live_game
    if game is None:
        return dataclasses.replace(session, deadline_ms=0, computers_due_ms=0), ()
    if session.computers_due_ms and session.computers_due_ms <= now_ms:
        moved = computer_move(session, game, rng, now_ms)
        if moved is not None:
            state, events = moved
            return advance(session, state, events, now_ms), tuple(events)
        # Each let the last claim stand: nothing more for them until something changes.
        session = dataclasses.replace(session, computers_due_ms=0)
        if session.deadline_ms == 0 or session.deadline_ms > now_ms:
            return session, ()
    reminder = session.reminder_due_ms
    if reminder and reminder <= now_ms < session.deadline_ms:
        # A long turn: those it waits for are reminded in private (their hand comes back
        # as a new message that notifies), once.
        return reminded(session, game), ()
    if awaits_any(game, unseen):
        deadline = game_deadline(0, game, (), now_ms)
        return dataclasses.replace(session, deadline_ms=deadline), ()
    try:
        state, events = apply(game, clock_action(game, now_ms))
    except ActionRefused:
        # Nothing to do at this moment after all: wait for a whole turn again.
        deadline = game_deadline(0, game, (), now_ms)
        return dataclasses.replace(session, deadline_ms=deadline), ()
    return advance(session, state, events, now_ms), tuple(events)


def awaits_any(game: GameState, user_ids: frozenset[int]) -> bool:
    """Whether the game waits for one of ``user_ids``."""
    return any(game.players[seat].user_id in user_ids for seat in awaited(game))


def end_without_group(session: Session | None) -> tuple[Session | None, Events]:
    """The bot was removed from the group: the lobby closes, the game ends."""
    if session is None or not session.in_progress:
        return session, ()
    if session.game is None:
        return dataclasses.replace(session, lobby=None, deadline_ms=0, without_group=True), ()
    state, events = apply(session.game, Stop())
    # As /stop: the match records the stopped game (and ends); a finished game has no deadline.
    ended = advance(session, state, events, 0)
    return dataclasses.replace(ended, without_group=True), tuple(events)


def migrated(session: Session, *, new_chat_id: int, new_game_id: str) -> Session:
    """The session of a group that became a supergroup, under its new chat id (buttons name
    the chat and game, so the old ones are stale)."""
    return dataclasses.replace(session, chat_id=new_chat_id, game_id=new_game_id)


def arrive(current: Session | None, moved: Session) -> Session | None:
    """A migrated session takes its place, unless the new chat already has one in progress."""
    if current is not None and current.in_progress:
        return current
    return moved


def pick(
    session: Session | None,
    *,
    game_id: str,
    user_id: int,
    plays: int,
    selected: Counter[Rank],
    rank: Rank | None,
) -> tuple[Session, GameState, int, Counter[Rank]]:
    """A card picked on the hand keyboard (``rank`` None: the selection cleared): the session
    that keeps the player's new selection (``Session.picks``, for their hand to show), the
    game, the seat and the selection."""
    session, game = game_of(session, game_id)
    seat = game.seat_of(user_id)
    if seat is None:
        raise ActionRefused(Refusal.NOT_IN_GAME)
    limit = play_limit(game, seat)
    if game.plays != plays or limit == 0:
        raise refused(SessionRefusal.STALE)
    if rank is None:
        return _picked(session, user_id, plays, Counter()), game, seat, Counter()
    selected = selected + Counter({rank: 1})
    held = sum(1 for card in game.players[seat].hand if card.rank is rank)
    if selected[rank] > held:
        raise refused(SessionRefusal.NO_MORE_OF_RANK)
    if sum(selected.values()) > limit:
        raise ActionRefused(Refusal.BAD_CARD_COUNT)
    return _picked(session, user_id, plays, selected), game, seat, selected


def unpicked(session: Session | None, user_id: int) -> Session | None:
    """The session without the cards ``user_id`` picked: their hand asked for anew (🃏 My
    cards) starts from no selection, as a new hand message does. The same session when they
    had picked nothing."""
    if session is None or not any(pick[0] == user_id for pick in session.picks):
        return session
    picks = tuple(pick for pick in session.picks if pick[0] != user_id)
    return dataclasses.replace(session, picks=picks)


def _picked(session: Session, user_id: int, plays: int, selected: Counter[Rank]) -> Session:
    selection = "".join(rank.code for rank in sorted(selected.elements()))
    picks = tuple(pick for pick in session.picks if pick[0] != user_id)
    if selection:
        picks += ((user_id, plays, selection),)
    if picks == session.picks:
        # The same tap again (its keyboard did not show it yet): nothing to store.
        return session
    return dataclasses.replace(session, picks=picks)


__all__ = [
    "Actor",
    "Events",
    "add_computer",
    "adopt_rules",
    "advance",
    "cancel",
    "game_of",
    "in_progress",
    "join",
    "leave",
    "lobby_of",
    "open_lobby",
    "play_again",
    "remove_computer",
    "require_settings_manager",
    "solo_game",
    "start",
    "typed_number",
    "unpicked",
]
