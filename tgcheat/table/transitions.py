"""Every change of a group's session, as a pure function: from the session stored (or None)
to the new one, with the engine's events where a game changed. The time (``now_ms``) and the
randomness (``rng``) come in as arguments; a refusal is raised as ``SessionRefused`` (the
table's reasons) or ``ActionRefused`` (the engine's). Returning the very session given means
"nothing changes": the store then writes nothing.

Who may manage a session (start, cancel, stop, kick, the next game) is decided here from an
``Actor``; whether a person is a group admin is a question for Telegram, asked by the bot
before the change is computed.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from tgcheat.engine.actions import Leave, Stop
from tgcheat.engine.cards import Rank
from tgcheat.engine.events import Event
from tgcheat.engine.game import (
    ActionRefused,
    RandomSource,
    Refusal,
    apply,
    new_game,
    pending_deadline_ms,
    play_limit,
    random_seating,
)
from tgcheat.engine.lobby import Lobby
from tgcheat.engine.lobby import join as join_lobby
from tgcheat.engine.lobby import leave as leave_lobby
from tgcheat.engine.match import is_over, new_match, next_seating, record_game
from tgcheat.engine.rules import MatchKind, Rules
from tgcheat.engine.state import GameState, Phase
from tgcheat.table.chronicle import GameTally, Notice, NoticeKind, notice_of, tallied
from tgcheat.table.clock import (
    any_player_may_start_ms,
    clock_action,
    game_deadline,
    lobby_clock_deadline,
    lobby_clock_of,
    minimum_reached_ms,
)
from tgcheat.table.commands import GameCommand, LeaveGame, to_action
from tgcheat.table.refusals import AdminUnknown, SessionRefusal, SessionRefused
from tgcheat.table.session import LobbyClock, Session

Events = tuple[Event, ...]


@dataclass(frozen=True, slots=True)
class Actor:
    """Who asks: a person, and whether they are an admin of the group (None: not known yet;
    a transition that needs to know raises ``AdminUnknown``)."""

    user_id: int
    admin: bool | None = None


def _admin(actor: Actor) -> bool:
    if actor.admin is None:
        raise AdminUnknown()
    return actor.admin


def _require_manager(session: Session, actor: Actor) -> None:
    """The creator of the lobby or game, or a group admin (RULES.md: chosen per group)."""
    if actor.user_id != session.creator and not _admin(actor):
        raise _refuse(SessionRefusal.NOT_ALLOWED)


def require_settings_manager(session: Session | None, actor: Actor) -> None:
    """The group's rules are changed by the creator of the open lobby, or a group admin."""
    if session is not None and session.lobby is not None and session.creator == actor.user_id:
        return
    if not _admin(actor):
        raise _refuse(SessionRefusal.NOT_ALLOWED)


def _refuse(reason: SessionRefusal) -> SessionRefused:
    return SessionRefused(reason)


def lobby_of(session: Session | None, game_id: str | None = None) -> tuple[Session, Lobby]:
    """The open lobby (of game ``game_id``, for a button); else refused."""
    if session is None or session.lobby is None:
        raise _refuse(SessionRefusal.NO_LOBBY if game_id is None else SessionRefusal.STALE)
    if game_id is not None and session.game_id != game_id:
        raise _refuse(SessionRefusal.STALE)
    return session, session.lobby


def game_of(session: Session | None, game_id: str | None) -> tuple[Session, GameState]:
    """The session's game; ``game_id`` None for a typed command, which means the current one."""
    if session is None or session.game is None:
        raise _refuse(SessionRefusal.STALE if game_id is not None else SessionRefusal.NO_GAME)
    if game_id is not None and session.game_id != game_id:
        raise _refuse(SessionRefusal.STALE)
    return session, session.game


def _managed(session: Session | None, actor: Actor) -> Session:
    """The lobby or game in progress, when ``actor`` may manage it."""
    session = in_progress(session)
    _require_manager(session, actor)
    return session


def in_progress(session: Session | None) -> Session:
    """The lobby or game in progress; else refused."""
    if session is None or not session.in_progress:
        raise _refuse(SessionRefusal.NO_GAME)
    return session


def advance(session: Session, state: GameState, events: Sequence[Event], now_ms: int) -> Session:
    """The session after its game became ``state``: the next deadline, the match's score when
    a game of a match has just ended, the game's tally, and the notice of what happened
    without anyone's press (none after a person's own move)."""
    match = session.match
    was_finished = session.game is not None and session.game.phase is Phase.FINISHED
    if match is not None and state.phase is Phase.FINISHED and not was_finished:
        match = record_game(match, state)
    previous = session.deadline_ms
    if session.game is not None and pending_deadline_ms(session.game) is not None:
        # The deadline was the end of a Cheat! call's grace period, not a turn's: when the
        # call is gone unsettled (the caller or the claimant left), a whole turn starts.
        previous = 0
    return dataclasses.replace(
        session,
        game=state,
        match=match,
        deadline_ms=game_deadline(previous, state, events, now_ms),
        notice=notice_of(events),
        tally=tallied(session.tally, state.rules, len(state.players), events),
    )


def _noticed(
    changed: tuple[Session, Events], kind: NoticeKind, user_id: int
) -> tuple[Session, Events]:
    """A player's leaving, as the table and they themselves are told of it."""
    session, events = changed
    game = session.game
    seat = game.seat_of(user_id) if game is not None else None
    if seat is None or not events:
        return changed
    return dataclasses.replace(session, notice=Notice(kind, seat)), events


# --- the lobby ---------------------------------------------------------------------------------


def open_lobby(
    session: Session | None,
    *,
    chat_id: int,
    game_id: str,
    creator: int,
    rules: Rules,
    title: str,
    language: str,
    now_ms: int,
) -> Session:
    if session is not None and session.in_progress:
        raise _refuse(SessionRefusal.GAME_OPEN)
    lobby = Lobby(creator=creator, rules=rules)
    clock = LobbyClock(touched_ms=now_ms)
    return Session(
        chat_id=chat_id,
        game_id=game_id,
        creator=creator,
        lobby=lobby,
        title=title,
        language=language,
        deadline_ms=lobby_clock_deadline(lobby, clock),
        lobby_clock=clock,
    )


def join(
    session: Session | None, *, user_id: int, name: str, language: str, now_ms: int
) -> Session:
    """A person joins the lobby. The lobby is alive again: its expiry starts over; the join
    that fills it starts the countdown to the deal."""
    session, lobby = lobby_of(session)
    joined = join_lobby(lobby, user_id, name)
    reached = minimum_reached_ms(lobby_clock_of(session, lobby).minimum_reached_ms, joined, now_ms)
    # Someone who left and joins again is written to in the language of this join.
    others = tuple((uid, lang) for uid, lang in session.player_languages if uid != user_id)
    return _with_lobby(
        dataclasses.replace(session, player_languages=(*others, (user_id, language))),
        joined,
        LobbyClock(touched_ms=now_ms, minimum_reached_ms=reached),
    )


def leave(session: Session | None, user_id: int, *, game_id: str | None = None) -> Session:
    """A person leaves the lobby before the deal (/leave, or the lobby's Leave button of game
    ``game_id``). A full lobby's countdown stops: its expiry, counted from when it filled,
    applies again; below the minimum, the wait before any player may start it starts over."""
    session, lobby = lobby_of(session, game_id)
    left = leave_lobby(lobby, user_id)
    clock = lobby_clock_of(session, lobby)
    # Leaving never reaches the minimum: the moment is kept, or forgotten below it.
    reached = minimum_reached_ms(clock.minimum_reached_ms, left, clock.touched_ms)
    return _with_lobby(session, left, dataclasses.replace(clock, minimum_reached_ms=reached))


def _with_lobby(session: Session, lobby: Lobby, clock: LobbyClock) -> Session:
    """The session with its lobby as it now is, and the clock's next deadline for it."""
    return dataclasses.replace(
        session, lobby=lobby, lobby_clock=clock, deadline_ms=lobby_clock_deadline(lobby, clock)
    )


def start(
    session: Session | None, *, game_id: str, actor: Actor, rng: RandomSource, now_ms: int
) -> tuple[Session, Events]:
    """Start pressed: the creator or an admin deals at any time; any player in the lobby too,
    once it has had its minimum of players for ``ANY_PLAYER_MAY_START_AFTER_S``."""
    session, lobby = lobby_of(session, game_id)
    if not (lobby.has(actor.user_id) and _any_player_may_start(session, lobby, now_ms)):
        _require_manager(session, actor)
    return _deal(session, lobby, rng, now_ms)


def _any_player_may_start(session: Session, lobby: Lobby, now_ms: int) -> bool:
    opening = any_player_may_start_ms(lobby_clock_of(session, lobby))
    return opening is not None and opening <= now_ms


def _deal(
    session: Session, lobby: Lobby, rng: RandomSource, now_ms: int
) -> tuple[Session, Events]:
    """The deal: random seats and dealer; a match begins when the rules play more than one."""
    if (reason := lobby.start_refusal()) is not None:
        raise ActionRefused(reason)
    seating = random_seating(lobby.players, rng)
    state, events = new_game(lobby.rules, seating, rng)
    match = None if lobby.rules.match is MatchKind.SINGLE else new_match(lobby.rules, seating)
    started = dataclasses.replace(
        session,
        lobby=None,
        lobby_clock=None,
        match=match,
        deadline_ms=0,
        notice=None,
        tally=GameTally(),
    )
    return advance(started, state, events, now_ms), tuple(events)


def cancel(session: Session | None, *, game_id: str | None, actor: Actor) -> Session:
    """The lobby closes without a game (Cancel, or /stop before the deal)."""
    session, _ = lobby_of(session, game_id)
    _require_manager(session, actor)
    return _closed(session)


def _closed(session: Session) -> Session:
    """The lobby gone without a game."""
    return dataclasses.replace(session, lobby=None, game=None, lobby_clock=None, deadline_ms=0)


def adopt_rules(session: Session | None, rules: Rules, *, now_ms: int) -> Session | None:
    """An open lobby is the group's next game: it takes the group's new rules too (players
    beyond the new limit are left out). Rules that make it full start the countdown to the
    deal, as a join would; rules that make it no longer full stop it."""
    if session is None or session.lobby is None:
        return session
    before = session.lobby
    players = before.players[: rules.max_players]
    if rules == before.rules and players == before.players:
        return session
    lobby = dataclasses.replace(before, rules=rules, players=players)
    clock = lobby_clock_of(session, before)
    touched = now_ms if lobby.full and not before.full else clock.touched_ms
    reached = minimum_reached_ms(clock.minimum_reached_ms, lobby, now_ms)
    return _with_lobby(session, lobby, LobbyClock(touched, reached))


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
    return _noticed(left, NoticeKind.LEFT, user_id)


def stop(session: Session | None, *, actor: Actor, now_ms: int) -> tuple[Session, Events]:
    """/stop: the lobby closes, or the game ends without a winner."""
    session = _managed(session, actor)
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
    return _noticed((advance(session, state, events, now_ms), tuple(events)), kind, user_id)


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
    session = _managed(session, actor)
    if target is None:
        target = _player_numbered(session, seat_number)
    if target is None:
        raise _refuse(SessionRefusal.NO_KICK_TARGET)
    if session.lobby is not None:
        if not session.lobby.has(target):
            raise _refuse(SessionRefusal.NOT_A_PLAYER)
        return leave(session, target), ()
    game = session.live_game
    seat = game.seat_of(target) if game is not None else None
    if game is None or seat is None or game.players[seat].left:
        raise _refuse(SessionRefusal.NOT_A_PLAYER)
    if not is_absent(game, seat) and not _admin(actor):
        raise _refuse(SessionRefusal.KICK_NOT_ABSENT)
    if len(game.active_seats()) <= 2:
        # The engine's Leave would end the game with the other player as its winner: the
        # game is stopped instead, the kicked player still in their seat when it ends.
        state, events = apply(game, Stop())
        stopped = advance(session, state, events, now_ms), tuple(events)
        return _noticed(stopped, NoticeKind.KICKED, target)
    return remove(session, target, now_ms, NoticeKind.KICKED)


def is_absent(game: GameState, seat: int) -> bool:
    """The player at ``seat`` let their last turn run out and has not acted since. (Whether
    they can be reached is not known here; one who cannot never sees their cards, so their
    first turn runs out.)"""
    return game.players[seat].timeouts > 0


def _player_numbered(session: Session, number: str) -> int | None:
    """The player numbered ``number`` (from 1) in the lobby's list, or in the game's seats."""
    # isdecimal, not isdigit: "²" is a digit that int() cannot read.
    if not number.isdecimal():
        return None
    if session.lobby is not None:
        listed = [user_id for user_id, _ in session.lobby.players]
    elif session.game is not None:
        listed = [player.user_id for player in session.game.players]
    else:
        return None
    index = int(number) - 1
    return listed[index] if 0 <= index < len(listed) else None


def play_again(
    session: Session | None, *, game_id: str, actor: Actor, new_game_id: str, now_ms: int
) -> Session:
    """Play again, from a finished game's table: a new lobby with the same players already
    joined (each may leave), opened by a player of that game, its creator or an admin."""
    if session is None or session.game_id != game_id or session.in_progress:
        raise _refuse(SessionRefusal.STALE)
    game = session.game
    if game is None or (session.match is not None and not session.match.finished):
        raise _refuse(SessionRefusal.STALE)
    players = tuple((p.user_id, p.name) for p in game.players if not p.left)
    played = any(user_id == actor.user_id for user_id, _ in players)
    if not played and actor.user_id != session.creator and not _admin(actor):
        raise _refuse(SessionRefusal.NOT_ALLOWED)
    lobby = Lobby(creator=actor.user_id, rules=game.rules, players=players)
    fresh = Session(
        chat_id=session.chat_id,
        game_id=new_game_id,
        creator=actor.user_id,
        title=session.title,
        language=session.language,
        player_languages=session.player_languages,
    )
    reached = minimum_reached_ms(0, lobby, now_ms)
    return _with_lobby(fresh, lobby, LobbyClock(touched_ms=now_ms, minimum_reached_ms=reached))


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
        raise _refuse(SessionRefusal.STALE)
    if actor.user_id not in dict(session.match.players) and not _admin(actor):
        raise ActionRefused(Refusal.NOT_IN_GAME)
    game = session.game
    if is_over(session.match) or game is None or game.phase is not Phase.FINISHED:
        raise _refuse(SessionRefusal.STALE)
    state, events = new_game(session.match.rules, next_seating(session.match), rng)
    fresh = dataclasses.replace(
        session, game_id=new_game_id, deadline_ms=0, notice=None, tally=GameTally()
    )
    return advance(fresh, state, events, now_ms), tuple(events)


# --- the clock, and the group coming and going -------------------------------------------------


def tick(
    session: Session | None, now_ms: int, *, rng: RandomSource
) -> tuple[Session | None, Events]:
    """The clock's turn: a full lobby is dealt (with ``rng``), a lobby nobody started closes;
    a game's deadline acts (a timeout, or the Cheat! calls of a grace period settled).
    Nothing happens before the deadline."""
    if session is None or session.deadline_ms == 0 or session.deadline_ms > now_ms:
        return session, ()
    if session.lobby is not None:
        return _lobby_tick(session, session.lobby, now_ms, rng)
    game = session.live_game
    if game is None:
        return dataclasses.replace(session, deadline_ms=0), ()
    try:
        state, events = apply(game, clock_action(game, now_ms))
    except ActionRefused:
        # Nothing to do at this moment after all: wait for a whole turn again.
        deadline = game_deadline(0, game, (), now_ms)
        return dataclasses.replace(session, deadline_ms=deadline), ()
    return advance(session, state, events, now_ms), tuple(events)


def _lobby_tick(
    session: Session, lobby: Lobby, now_ms: int, rng: RandomSource
) -> tuple[Session | None, Events]:
    """A full lobby's countdown is over: the game is dealt. Otherwise any player may now start
    it (the lobby message is shown again to say so), or nobody touched it in time: it closes."""
    if lobby.full:
        return _deal(session, lobby, rng, now_ms)
    clock = lobby_clock_of(session, lobby)
    opening = any_player_may_start_ms(clock)
    if opening is not None and clock.touched_ms < opening <= now_ms:
        # Its expiry counts from this moment, as from a join: the players who were waiting
        # for the opener get as long to start it themselves.
        clock = dataclasses.replace(clock, touched_ms=opening)
    deadline = lobby_clock_deadline(lobby, clock)
    if deadline > now_ms:
        return dataclasses.replace(session, lobby_clock=clock, deadline_ms=deadline), ()
    return _closed(session), ()


def end_without_group(session: Session | None) -> tuple[Session | None, Events]:
    """The bot was removed from the group: the lobby closes, the game ends."""
    if session is None or not session.in_progress:
        return session, ()
    if session.game is None:
        return dataclasses.replace(session, lobby=None, deadline_ms=0), ()
    state, events = apply(session.game, Stop())
    # As /stop: the match records the stopped game (and ends); a finished game has no deadline.
    return advance(session, state, events, 0), tuple(events)


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
    """A card picked on the hand keyboard (``rank`` None: the selection cleared). Nothing is
    stored: the selection travels in the buttons. The session, game, seat and new selection."""
    session, game = game_of(session, game_id)
    seat = game.seat_of(user_id)
    if seat is None:
        raise ActionRefused(Refusal.NOT_IN_GAME)
    limit = play_limit(game, seat)
    if game.plays != plays or limit == 0:
        raise _refuse(SessionRefusal.STALE)
    if rank is None:
        return session, game, seat, Counter()
    selected = selected + Counter({rank: 1})
    held = sum(1 for card in game.players[seat].hand if card.rank is rank)
    if selected[rank] > held:
        raise _refuse(SessionRefusal.NO_MORE_OF_RANK)
    if sum(selected.values()) > limit:
        raise ActionRefused(Refusal.BAD_CARD_COUNT)
    return session, game, seat, selected
