"""The clock's deadlines (tgcheat.store.clock): set by a session's compare-and-set, read when
due, dropped when the session is gone."""

from __future__ import annotations

import dataclasses

from redis.asyncio import Redis

from tests.store.helpers import CHAT, game_session, replace_with
from tgcheat.store.games import GameStore
from tgcheat.table.place import Place


async def test_a_sessions_deadline_is_due_when_passed(redis: Redis) -> None:
    store = GameStore(redis)
    session = dataclasses.replace(game_session(), deadline_ms=5_000)
    await store.transact(CHAT, replace_with(session))
    await store.transact(CHAT - 1, replace_with(dataclasses.replace(session, deadline_ms=9_000)))
    assert await store.clock.due(4_999) == []
    assert await store.clock.due(5_000) == [Place(CHAT)]
    assert await store.clock.due(10_000) == [Place(CHAT), Place(CHAT - 1)]
    assert await store.clock.due(10_000, limit=1) == [Place(CHAT)]
    # A change to a session without a deadline takes it away.
    await store.transact(CHAT, replace_with(dataclasses.replace(session, deadline_ms=0)))
    assert await store.clock.due(10_000) == [Place(CHAT - 1)]


async def test_a_forgotten_deadline_is_not_due_again(redis: Redis) -> None:
    store = GameStore(redis)
    await store.transact(CHAT, replace_with(dataclasses.replace(game_session(), deadline_ms=1)))
    await store.clock.forget(CHAT)
    assert await store.clock.due(10_000) == []
    # The session itself stays: only its deadline is dropped.
    session, _ = await store.load(CHAT)
    assert session is not None
