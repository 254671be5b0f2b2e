"""The clock's decisions: when it must act next, and what it does then. Pure functions of the
state and the time given (the bot reads the time and fires what is due)."""

from __future__ import annotations

from collections.abc import Sequence

from tgcheat.engine.actions import Action, PullTrigger, ResolveChallenges, Timeout
from tgcheat.engine.events import (
    ChallengeResolved,
    Event,
    FinalPlayPending,
    PassRefused,
    PassRequested,
    TurnStarted,
)
from tgcheat.engine.game import pending_deadline_ms
from tgcheat.engine.lobby import Lobby
from tgcheat.engine.state import GameState, Phase
from tgcheat.table.session import LobbyClock, Session

#: An open lobby nobody touches for this long is closed (RULES.md "Rules a bot needs").
LOBBY_TIMEOUT_S = 30 * 60
#: A lobby a join fills is dealt this long after: long enough for the last to join to see it
#: coming and for anyone to leave, short enough that nobody needs to press Start.
FULL_LOBBY_COUNTDOWN_S = 10
#: Once enough players are in, whoever opened the game has this long to start it alone; then
#: any player in the lobby may, so that a lobby whose opener went away does not hang.
ANY_PLAYER_MAY_START_AFTER_S = 3 * 60

# Events that start a new wait for somebody: the turn timer starts again.
_NEW_WAIT = (TurnStarted, FinalPlayPending, PassRequested, PassRefused, ChallengeResolved)


def lobby_deadline(now_ms: int) -> int:
    """When a lobby touched at ``now_ms`` closes, if nobody touches it again."""
    return now_ms + LOBBY_TIMEOUT_S * 1000


def lobby_clock_deadline(lobby: Lobby, clock: LobbyClock) -> int:
    """When the clock acts next on an open lobby: a full one is dealt at the end of its
    countdown; otherwise the moment any player may start it, while that is still to come, is
    shown on the lobby message; else the lobby closes ``LOBBY_TIMEOUT_S`` after it was last
    touched."""
    if lobby.full:
        return clock.touched_ms + FULL_LOBBY_COUNTDOWN_S * 1000
    opening = any_player_may_start_ms(clock)
    if opening is not None and opening > clock.touched_ms:
        return opening
    return lobby_deadline(clock.touched_ms)


def any_player_may_start_ms(clock: LobbyClock) -> int | None:
    """From when any player in the lobby may start the game; None while too few are in."""
    if clock.minimum_reached_ms == 0:
        return None
    return clock.minimum_reached_ms + ANY_PLAYER_MAY_START_AFTER_S * 1000


def minimum_reached_ms(previous: int, lobby: Lobby, now_ms: int) -> int:
    """When ``lobby`` (as it is at ``now_ms``) reached its minimum of players: the moment
    kept while it stays reached (``previous``), ``now_ms`` when it is reached anew, 0 while
    too few are in."""
    if len(lobby.players) < lobby.rules.min_players:
        return 0
    return previous or now_ms


def lobby_clock_of(session: Session, lobby: Lobby) -> LobbyClock:
    """The clock of ``lobby``, the session's. A document stored before lobbies had a clock
    kept only the deadline, then always ``LOBBY_TIMEOUT_S`` after the last touch: the clock
    is read from it, the minimum counted as reached then when enough players are in."""
    if session.lobby_clock is not None:
        return session.lobby_clock
    touched = session.deadline_ms - LOBBY_TIMEOUT_S * 1000
    return LobbyClock(touched, minimum_reached_ms(0, lobby, touched))


def game_deadline(previous: int, state: GameState, events: Sequence[Event], now_ms: int) -> int:
    """When the clock must act next in ``state``, given what just happened; 0: never."""
    if state.phase is Phase.FINISHED:
        return 0
    grace = pending_deadline_ms(state)
    if grace is not None:
        return grace
    timeout_ms = state.rules.turn_timeout_s * 1000
    if timeout_ms == 0:
        return 0
    if previous == 0 or any(isinstance(event, _NEW_WAIT) for event in events):
        return now_ms + timeout_ms
    return previous


def clock_action(state: GameState, now_ms: int) -> Action:
    """What the clock does to a game whose deadline has passed."""
    if state.pull_by is not None:
        return PullTrigger(now_ms)
    if state.challenges:
        return ResolveChallenges(now_ms)
    return Timeout(state.plays, state.phase is Phase.FINAL_CHECK, now_ms)
