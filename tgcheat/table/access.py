"""Who may do what to a session, and finding what a request names: the open lobby, the game,
the session in progress. Whether a person is a group admin is Telegram's to say: an ``Actor``
whose admin status is not known yet makes a check that needs it raise ``AdminUnknown``, and
the bot asks, then computes the change again."""

from __future__ import annotations

from dataclasses import dataclass

from tgcheat.engine.lobby import Lobby
from tgcheat.engine.state import GameState
from tgcheat.table.refusals import AdminUnknown, SessionRefusal, SessionRefused
from tgcheat.table.session import Session


@dataclass(frozen=True, slots=True)
class Actor:
    """Who asks: a person, and whether they are an admin of the group (None: not known yet;
    a transition that needs to know raises ``AdminUnknown``)."""

    user_id: int
    admin: bool | None = None


def knows_admin(actor: Actor) -> bool:
    if actor.admin is None:
        raise AdminUnknown()
    return actor.admin


def require_manager(session: Session, actor: Actor) -> None:
    """The creator of the lobby or game, or a group admin (RULES.md: chosen per group)."""
    if actor.user_id != session.creator and not knows_admin(actor):
        raise refused(SessionRefusal.NOT_ALLOWED)


def require_settings_manager(session: Session | None, actor: Actor) -> None:
    """The group's rules are changed by the creator of the open lobby, or a group admin."""
    if session is not None and session.lobby is not None and session.creator == actor.user_id:
        return
    if not knows_admin(actor):
        raise refused(SessionRefusal.NOT_ALLOWED)


def refused(reason: SessionRefusal) -> SessionRefused:
    return SessionRefused(reason)


def lobby_of(session: Session | None, game_id: str | None = None) -> tuple[Session, Lobby]:
    """The open lobby (of game ``game_id``, for a button); else refused."""
    if session is None or session.lobby is None:
        raise refused(SessionRefusal.NO_LOBBY if game_id is None else SessionRefusal.STALE)
    if game_id is not None and session.game_id != game_id:
        raise refused(SessionRefusal.STALE)
    return session, session.lobby


def game_of(session: Session | None, game_id: str | None) -> tuple[Session, GameState]:
    """The session's game; ``game_id`` None for a typed command, which means the current one."""
    if session is None or session.game is None:
        raise refused(SessionRefusal.STALE if game_id is not None else SessionRefusal.NO_GAME)
    if game_id is not None and session.game_id != game_id:
        raise refused(SessionRefusal.STALE)
    return session, session.game


def managed(session: Session | None, actor: Actor) -> Session:
    """The lobby or game in progress, when ``actor`` may manage it."""
    session = in_progress(session)
    require_manager(session, actor)
    return session


def in_progress(session: Session | None) -> Session:
    """The lobby or game in progress; else refused."""
    if session is None or not session.in_progress:
        raise refused(SessionRefusal.NO_GAME)
    return session


def played_by(session: Session | None, user_id: int) -> tuple[Session, GameState]:
    """The group's game, when ``user_id`` has a seat in it (My cards); else refused."""
    game = session.game if session is not None else None
    if session is None or game is None or game.seat_of(user_id) is None:
        raise refused(SessionRefusal.NOT_PLAYING_THERE)
    return session, game
