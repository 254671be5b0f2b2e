"""The game store as one object (tgcheat.store.games): its concerns share one prefix and one
hint of each chat, and forgetting a chat removes everything kept for its game."""

from __future__ import annotations

import dataclasses

from redis.asyncio import Redis

from tests.store.helpers import CHAT, DUE, existing, game_session, replace_with
from tgcheat.store.games import GameStore
from tgcheat.table.place import Place
from tgcheat.table.session import Session


async def test_forgetting_a_chat_removes_its_session_deadline_and_due_sync(
    redis: Redis,
) -> None:
    store = GameStore(redis, group_messages_per_minute=20)
    session = dataclasses.replace(game_session(), deadline_ms=5_000)
    await store.transact(CHAT, lambda s: (session, 10), lease=True)
    await store.settings.save_group_language(CHAT, "de")
    assert await store.clock.due(5_000) == [Place(CHAT)]
    assert await redis.zscore(DUE, CHAT) is not None
    await store.forget_chat(CHAT)
    assert await store.load(CHAT) == (None, 0)
    assert await store.clock.due(5_000) == []
    assert await redis.zscore(DUE, CHAT) is None
    # What the group chose is not part of its game.
    assert await store.settings.group_language(CHAT) == "de"


async def test_forgetting_a_chat_forgets_this_processs_hint_of_it(redis: Redis) -> None:
    store = GameStore(redis)
    session = game_session()
    await store.transact(CHAT, replace_with(session))
    await store.forget_chat(CHAT)
    seen: list[Session | None] = []

    def create(current: Session | None) -> tuple[Session | None, None]:
        seen.append(current)
        return session, None

    created = await store.transact(CHAT, create)
    # The change starts from no session, not from the hint of the forgotten one.
    assert seen == [None]
    assert created.version == 1


async def test_a_prefix_keeps_stores_apart(redis: Redis) -> None:
    mine = GameStore(redis, prefix="one")
    theirs = GameStore(redis, prefix="two")
    session = dataclasses.replace(game_session(), deadline_ms=5)
    await mine.transact(CHAT, replace_with(session), update_id=1)
    await mine.settings.save_user_language(1, "de")
    # The same update id is a different update for another store.
    assert (await theirs.transact(CHAT, replace_with(session), update_id=1)).changed
    await theirs.forget_chat(CHAT)
    assert (await mine.load(CHAT))[0] == session
    assert await mine.clock.due(10) == [Place(CHAT)]
    assert await theirs.settings.user_language(1) is None
    named = (mine.keys.session(Place(CHAT)), mine.keys.deadlines(CHAT), mine.keys.user(1))
    assert all(key.startswith("one:") for key in named)
    assert await existing(redis, *named) == 3
