"""Sessions to start a test from: an open lobby, a dealt game, or a game built card by card."""

from __future__ import annotations

import random
from collections import Counter

from tgcheat.engine.cards import Card, Rank
from tgcheat.engine.events import Event
from tgcheat.engine.game import Seating
from tgcheat.engine.match import Match, new_match
from tgcheat.engine.rules import Rules
from tgcheat.engine.state import GameState
from tgcheat.table.commands import PlayCards
from tgcheat.table.session import Session
from tgcheat.table.transitions import Actor, join, open_lobby, start

CHAT = -1001
GAME = "g1"
#: The lobby's creator in ``lobby``; in ``at_table`` the creator is the player in seat 0.
CREATOR = 1
#: A moment, in Unix milliseconds, at which the tests begin.
T0 = 1_700_000_000_000


def lobby(
    rules: Rules | None = None,
    players: tuple[int, ...] = (),
    *,
    language: str = "en",
    now_ms: int = T0,
) -> Session:
    """A lobby opened by ``CREATOR`` that ``players`` joined (named U<id>, in English)."""
    session = open_lobby(
        None,
        chat_id=CHAT,
        game_id=GAME,
        creator=CREATOR,
        rules=rules or Rules(),
        title="Friday cards",
        language=language,
        now_ms=now_ms,
    )
    for user_id in players:
        session = join(session, user_id=user_id, name=f"U{user_id}", language="en", now_ms=now_ms)
    return session


def dealt(
    rules: Rules | None = None,
    players: tuple[int, ...] = (1, 2, 3),
    *,
    seed: int = 7,
    now_ms: int = T0,
) -> tuple[Session, tuple[Event, ...]]:
    """A game dealt by the creator from a lobby of ``players``."""
    session = lobby(rules, players, now_ms=now_ms)
    return start(
        session, game_id=GAME, actor=Actor(CREATOR), rng=random.Random(seed), now_ms=now_ms
    )


def at_table(
    state: GameState,
    *,
    deadline_ms: int = 0,
    match: Match | None = None,
    creator: int | None = None,
) -> Session:
    """A session playing ``state`` (built with ``state_with``: user ids 100, 101, …), created
    by the player in seat 0 unless ``creator`` is given."""
    return Session(
        chat_id=CHAT,
        game_id=GAME,
        creator=state.players[0].user_id if creator is None else creator,
        game=state,
        title="Friday cards",
        deadline_ms=deadline_ms,
        match=match,
    )


def match_for(state: GameState) -> Match:
    """A match just begun with the seats and dealer of ``state``."""
    players = tuple((p.user_id, p.name) for p in state.players)
    return new_match(state.rules, Seating(players, state.dealer))


def play(
    state: GameState, seat: int, played: tuple[Card, ...], claimed: Rank | None = None
) -> PlayCards:
    """The command of the player in ``seat`` playing ``played``, claimed as the required rank
    (or ``claimed``), from a keyboard drawn at the current play count."""
    rank = state.required if claimed is None else claimed
    assert rank is not None
    return PlayCards(
        state.players[seat].user_id,
        state.plays,
        Counter(card.rank for card in played),
        rank,
    )
