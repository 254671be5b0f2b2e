"""The ids of the messages that show a session (tgcheat.store.messages): kept in the session's
hash, merged, cleared at a game's end, and followed by this process's hint."""

from __future__ import annotations

import dataclasses

from redis.asyncio import Redis

from tests.store.helpers import CHAT, SESSION, game_session, replace_with
from tgcheat.store.games import SESSION_TTL_S, GameStore
from tgcheat.store.messages import message_fields, message_ids
from tgcheat.table.session import MessageIds


def test_message_ids_read_back_from_their_fields() -> None:
    ids = MessageIds(table=5, hands={1: 9, 2: 11}, told=frozenset({3}))
    fields = {name.encode(): str(value).encode() for name, value in message_fields(ids)}
    assert fields == {
        b"m:table": b"5",
        b"m:buried": b"0",
        b"m:hand:1": b"9",
        b"m:hand:2": b"11",
        b"m:told:3": b"1",
    }
    assert message_ids(fields) == ids
    assert message_ids({}) == MessageIds()
    buried = MessageIds(buried=True)
    as_fields = {name.encode(): str(value).encode() for name, value in message_fields(buried)}
    assert as_fields == {b"m:buried": b"1"} and message_ids(as_fields) == buried


async def test_message_ids_are_kept_per_chat_with_its_session(redis: Redis) -> None:
    store = GameStore(redis)
    # No session, nothing to show: an id sent as a session went away is not kept.
    await store.messages.add(CHAT, MessageIds(table=4))
    assert await redis.exists(SESSION) == 0
    session = game_session()
    await store.transact(CHAT, replace_with(session))
    await store.messages.add(CHAT, MessageIds(table=5, hands={1: 9}))
    await store.messages.add(CHAT, MessageIds(hands={2: 11}))
    loaded, messages = await GameStore(redis).load(CHAT)
    assert loaded == session
    assert messages == MessageIds(table=5, hands={1: 9, 2: 11})
    # A change of the game keeps them, and they expire with it.
    await store.transact(CHAT, replace_with(dataclasses.replace(session, title="New")))
    _, messages = await GameStore(redis).load(CHAT)
    assert messages == MessageIds(table=5, hands={1: 9, 2: 11})
    assert 0 < await redis.ttl(SESSION) <= SESSION_TTL_S
    await store.messages.clear(CHAT, keep_table=True)
    loaded, messages = await GameStore(redis).load(CHAT)
    assert messages == MessageIds(table=5)
    assert loaded is not None and loaded.title == "New"
    await store.messages.clear(CHAT)
    _, messages = await GameStore(redis).load(CHAT)
    assert messages == MessageIds()


async def test_players_told_once_are_remembered(redis: Redis) -> None:
    store = GameStore(redis)
    await store.transact(CHAT, replace_with(game_session()))
    await store.messages.add(CHAT, MessageIds(told=frozenset({7})))
    await store.messages.add(CHAT, MessageIds(told=frozenset({8})))
    _, messages = await GameStore(redis).load(CHAT)
    assert messages.told == {7, 8}


async def test_cleared_messages_are_not_shown_by_the_hint(redis: Redis) -> None:
    store = GameStore(redis)
    session = game_session()
    await store.transact(CHAT, replace_with(session))
    await store.messages.add(CHAT, MessageIds(table=5, hands={1: 9}))
    await store.messages.clear(CHAT, keep_table=True)
    committed = await store.transact(CHAT, replace_with(dataclasses.replace(session, title="x")))
    assert committed.messages == MessageIds(table=5)
