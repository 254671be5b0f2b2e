"""Who acts next at a table of computer players, and what they do: the one answer shared by
every driver of games without people (``tgcheat simulate``, the engine's tests, the
benchmark's players and the soak).

What each player does is its strategy's choice (``tgcheat.engine.strategies``, given as
``ComputerPlayers``; without them every seat plays ``tgcheat.engine.ai.choose_action``); this
module decides whom to ask, in which order, and when the clock acts instead. Pure and
deterministic: the random generator and the time come in as arguments.
"""

from __future__ import annotations

from typing import Any, Protocol

from tgcheat.engine.actions import Action, Challenge, PullTrigger, ResolveChallenges
from tgcheat.engine.ai import challengers_for, choose_action
from tgcheat.engine.game import awaited, pending_deadline_ms
from tgcheat.engine.state import GameState, Phase
from tgcheat.engine.strategies import ComputerPlayers

#: Time between two players' Cheat! presses on one play, in the order they were asked: who
#: presses first is a race, and under ``challenge_priority=clockwise`` the press times decide
#: who is collected within the grace period.
PRESS_MS = 400

#: (seat, claim number): the players already asked whether they call Cheat! on a play.
Asked = set[tuple[int, int]]


class TableRandom(Protocol):
    """What a table of computer players needs of a random generator (``random.Random``)."""

    def random(self) -> float: ...

    def shuffle(self, x: list[Any]) -> None: ...


def next_action(
    state: GameState,
    rng: TableRandom,
    now_ms: int,
    asked: Asked | None,
    *,
    clock: bool = True,
    players: ComputerPlayers | None = None,
) -> Action | None:
    """The next action at a table of computer players, or None when nobody acts now.

    1. The bystanders (only when ``asked`` is given): on the newest open play, every player
       who may call Cheat! on it and has not been asked about it yet is asked now, once, in a
       random order; the first who calls acts. The i-th asked presses ``i * PRESS_MS`` after
       ``now_ms``, and never after the deadline of a call being collected. While playing, the
       player to play is not asked here: they answer with their turn, which may be a call. A
       final play is left to its answerers (step 3); while a call is being collected
       (``challenge_priority=clockwise``) everyone who may still join it is asked, the player
       to play included.
    2. The clock: while a call is being collected, ``ResolveChallenges`` at its deadline, or at
       ``now_ms`` when that is later; while a trigger waits (``penalty=revolver``),
       ``PullTrigger`` likewise. With ``clock=False`` (a driver whose bot runs its own
       clock) None instead.
    3. The players the game waits for (``awaited``), in seat order: the first with something
       to do acts.

    ``asked`` is updated in place: pass the same set for a whole game. With None, only the
    players the game waits for act (a player who is not awaited never calls Cheat!).

    ``players``: the computer players' strategies and knowledge (update it with
    ``ComputerPlayers.remember`` after every ``apply``); a seat whose strategy is None is a
    person's and is never asked. Without it, every seat plays ``ai.choose_action``.

    None also when the game is over, or when no awaited player has a move (a game in play
    always has one).
    """
    deadline = pending_deadline_ms(state)
    if (
        asked is not None
        and state.open_claims
        and (state.phase is Phase.PLAYING or deadline is not None)
    ):
        call = _bystander_call(state, rng, now_ms, asked, deadline, players)
        if call is not None:
            return call
    if deadline is not None:
        if not clock:
            return None
        at = max(deadline, now_ms)
        return PullTrigger(at) if state.pull_by is not None else ResolveChallenges(at)
    for seat in sorted(awaited(state)):
        action = _choose(players, state, seat, rng, now_ms)
        if action is not None:
            return action
    return None


def _choose(
    players: ComputerPlayers | None, state: GameState, seat: int, rng: TableRandom, now_ms: int
) -> Action | None:
    if players is None:
        return choose_action(state, seat, rng, now_ms)
    return players.choose(state, seat, rng, now_ms)


def _bystander_call(
    state: GameState,
    rng: TableRandom,
    now_ms: int,
    asked: Asked,
    deadline: int | None,
    players: ComputerPlayers | None,
) -> Challenge | None:
    claim = state.open_claims[-1]
    seats = [s for s in challengers_for(state, claim) if (s, claim.number) not in asked]
    if deadline is None:
        seats = [s for s in seats if s != state.turn]
    rng.shuffle(seats)
    for i, seat in enumerate(seats):
        asked.add((seat, claim.number))
        press_ms = now_ms + i * PRESS_MS
        if deadline is not None:
            press_ms = min(press_ms, deadline)
        action = _choose(players, state, seat, rng, press_ms)
        if isinstance(action, Challenge):
            return action
    return None
