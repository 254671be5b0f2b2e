"""The lobby before a game: opening, joining, leaving, the deal, cancelling, the group's new
rules, Play again, and the lobby's clock (a full table's countdown, its expiry)."""

from __future__ import annotations

import dataclasses

from tgcheat.engine.game import (
    ActionRefused,
    RandomSource,
    new_game,
    random_seating,
)
from tgcheat.engine.lobby import Lobby
from tgcheat.engine.lobby import join as join_lobby
from tgcheat.engine.lobby import leave as leave_lobby
from tgcheat.engine.match import new_match
from tgcheat.engine.rules import MatchKind, Rules
from tgcheat.table.access import (
    Actor,
    knows_admin,
    lobby_of,
    refused,
    require_manager,
)
from tgcheat.table.chronicle import GameTally
from tgcheat.table.clock import (
    any_player_may_start_ms,
    lobby_clock_deadline,
    lobby_clock_of,
    minimum_reached_ms,
)
from tgcheat.table.computers import Level, is_computer, new_computer, seated
from tgcheat.table.progress import Events, advance
from tgcheat.table.refusals import SessionRefusal
from tgcheat.table.session import LobbyClock, Session
from tgcheat.table.story import Story


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
    topic: int | None = None,
    topic_title: str = "",
) -> Session:
    """A lobby opened in a chat (or in a forum ``topic`` of it, whose name is ``topic_title``
    when known)."""
    if session is not None and session.in_progress:
        raise refused(SessionRefusal.GAME_OPEN)
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
        topic=topic,
        topic_title=topic_title,
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


def add_computer(
    session: Session | None, *, game_id: str, actor: Actor, level: Level, now_ms: int
) -> Session:
    """A computer player of ``level`` takes a seat (the game's creator or an admin adds it):
    as a join, the lobby is alive again, and the seat that fills it starts the countdown."""
    session, lobby = lobby_of(session, game_id)
    require_manager(session, actor)
    user_id, name = new_computer(lobby.players)
    joined = join_lobby(lobby, user_id, name)
    reached = minimum_reached_ms(lobby_clock_of(session, lobby).minimum_reached_ms, joined, now_ms)
    computers = (*session.computers, (user_id, level.value))
    return _with_lobby(
        dataclasses.replace(session, computers=computers),
        joined,
        LobbyClock(touched_ms=now_ms, minimum_reached_ms=reached),
    )


#: Computer players a solo game may have.
SOLO_OPPONENTS = (1, 5)


def solo_game(
    session: Session | None,
    *,
    chat_id: int,
    game_id: str,
    user_id: int,
    name: str,
    opponents: int,
    level: Level,
    rules: Rules,
    title: str,
    language: str,
    rng: RandomSource,
    now_ms: int,
) -> tuple[Session, Events]:
    """A game against ``opponents`` computer players of ``level`` in a person's private chat
    (/play): opened, joined and dealt at once; the table and the hand share that chat."""
    least, most = SOLO_OPPONENTS
    if not least <= opponents <= most:
        raise refused(SessionRefusal.SOLO_OPPONENTS)
    players = f"{min(rules.min_players, opponents + 1)}-{max(rules.max_players, opponents + 1)}"
    rules = rules.with_option("players", players)
    opened = open_lobby(
        session,
        chat_id=chat_id,
        game_id=game_id,
        creator=user_id,
        rules=rules,
        title=title,
        language=language,
        now_ms=now_ms,
    )
    seated = join(opened, user_id=user_id, name=name, language=language, now_ms=now_ms)
    me = Actor(user_id)
    for _ in range(opponents):
        seated = add_computer(seated, game_id=game_id, actor=me, level=level, now_ms=now_ms)
    assert seated.lobby is not None
    return _deal(seated, seated.lobby, rng, now_ms)


def remove_computer(session: Session | None, *, game_id: str, actor: Actor) -> Session:
    """The computer player who joined last leaves the lobby (its creator or an admin)."""
    session, lobby = lobby_of(session, game_id)
    require_manager(session, actor)
    last = next((uid for uid, _ in reversed(lobby.players) if is_computer(uid)), None)
    if last is None:
        raise refused(SessionRefusal.NO_COMPUTER)
    computers = tuple((uid, level) for uid, level in session.computers if uid != last)
    return leave(dataclasses.replace(session, computers=computers), last, game_id=game_id)


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
        require_manager(session, actor)
    return _deal(session, lobby, rng, now_ms)


def _any_player_may_start(session: Session, lobby: Lobby, now_ms: int) -> bool:
    opening = any_player_may_start_ms(lobby_clock_of(session, lobby))
    return opening is not None and opening <= now_ms


def deal_at_once(session: Session, rng: RandomSource, now_ms: int) -> tuple[Session, Events]:
    """The open lobby's game dealt now, by nobody's press (a quick game's table, made full)."""
    session, lobby = lobby_of(session)
    return _deal(session, lobby, rng, now_ms)


def _deal(session: Session, lobby: Lobby, rng: RandomSource, now_ms: int) -> tuple[Session, Events]:
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
        story=Story(),
        computer_players=None,
    )
    return seated(advance(started, state, events, now_ms), state), tuple(events)


def cancel(session: Session | None, *, game_id: str | None, actor: Actor) -> Session:
    """The lobby closes without a game (Cancel, or /stop before the deal)."""
    session, _ = lobby_of(session, game_id)
    require_manager(session, actor)
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


def play_again(
    session: Session | None, *, game_id: str, actor: Actor, new_game_id: str, now_ms: int
) -> Session:
    """Play again, from a finished game's table: a new lobby with the same players already
    joined (each may leave), opened by a player of that game, its creator or an admin."""
    if session is None or session.game_id != game_id or session.in_progress:
        raise refused(SessionRefusal.STALE)
    game = session.game
    if game is None or (session.match is not None and not session.match.finished):
        raise refused(SessionRefusal.STALE)
    players = tuple((p.user_id, p.name) for p in game.players if not p.left)
    played = any(user_id == actor.user_id for user_id, _ in players)
    if not played and actor.user_id != session.creator and not knows_admin(actor):
        raise refused(SessionRefusal.NOT_ALLOWED)
    lobby = Lobby(creator=actor.user_id, rules=game.rules, players=players)
    fresh = Session(
        chat_id=session.chat_id,
        game_id=new_game_id,
        creator=actor.user_id,
        title=session.title,
        language=session.language,
        player_languages=session.player_languages,
        topic=session.topic,
        topic_title=session.topic_title,
    )
    reached = minimum_reached_ms(0, lobby, now_ms)
    return _with_lobby(fresh, lobby, LobbyClock(touched_ms=now_ms, minimum_reached_ms=reached))


def lobby_tick(
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
    return dataclasses.replace(_closed(session), lobby_expired=True), ()
