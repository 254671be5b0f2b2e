"""The clock's decisions: when it must act next, and what it does then. Pure functions of the
state and the time given (the bot reads the time and fires what is due)."""

from __future__ import annotations

from collections.abc import Sequence

from tgcheat.engine.actions import Action, ResolveChallenges, Timeout
from tgcheat.engine.events import (
    ChallengeResolved,
    Event,
    FinalPlayPending,
    PassRefused,
    PassRequested,
    TurnStarted,
)
from tgcheat.engine.game import pending_deadline_ms
from tgcheat.engine.state import GameState, Phase

#: An open lobby nobody touches for this long is closed (RULES.md "Rules a bot needs").
LOBBY_TIMEOUT_S = 30 * 60

# Events that start a new wait for somebody: the turn timer starts again.
_NEW_WAIT = (TurnStarted, FinalPlayPending, PassRequested, PassRefused, ChallengeResolved)


def lobby_deadline(now_ms: int) -> int:
    return now_ms + LOBBY_TIMEOUT_S * 1000


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
    if state.challenges:
        return ResolveChallenges(now_ms)
    return Timeout(state.plays, state.phase is Phase.FINAL_CHECK)
