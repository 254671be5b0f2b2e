"""The store's own path to Redis (tgcheat.store.direct) against a real server: scripts the server
forgot, connections it dropped, a command cancelled half-way, and how many connections it keeps."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import BlockingConnectionPool, Redis

from tgcheat.redis_connection import CLIENT_OPTIONS
from tgcheat.store.direct import DirectCommands
from tgcheat.store.games import GameStore
from tgcheat.table.place import Place
from tgcheat.table.session import Session

CHAT = -100777


def _lobbyless_session(version_note: str) -> Session:
    return Session(chat_id=CHAT, game_id="g1", creator=1, title=version_note)


def _replace_with(new: Session):  # type: ignore[no-untyped-def]
    def change(current: Session | None) -> tuple[Session | None, None]:
        return new, None

    return change


async def test_scripts_the_server_forgot_are_loaded_again(redis: Redis) -> None:
    store = GameStore(redis)
    await store.transact(CHAT, _replace_with(_lobbyless_session("first")), update_id=1)
    await redis.script_flush()
    # Another process (no cached state) reads with the read script, then writes with the
    # compare-and-set script: both were flushed.
    other = GameStore(redis)
    committed = await other.transact(CHAT, _replace_with(_lobbyless_session("second")), update_id=2)
    assert committed.changed and committed.version == 2
    await redis.script_flush()
    assert await other.shown.begin(Place(CHAT), 1) is not None
    session, _ = await GameStore(redis).load(CHAT)
    assert session is not None and session.title == "second"


async def test_a_connection_the_server_dropped_is_reconnected(redis: Redis) -> None:
    store = GameStore(redis)
    await store.transact(CHAT, _replace_with(_lobbyless_session("kept")), update_id=3)
    await redis.client_kill_filter(_type="normal", skipme=True)
    session, _ = await GameStore(redis).load(CHAT)
    assert session is not None and session.title == "kept"


@pytest.mark.single_server
async def test_a_command_cancelled_half_way_leaves_no_answer_behind(redis: Redis) -> None:
    direct = DirectCommands(redis)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.05):
            await direct.execute("DEBUG", "SLEEP", "0.3")
    # The next command on the same stack reads its own answer, not the sleep's "OK".
    assert await direct.execute("ECHO", "mine") == b"mine"


@pytest.mark.single_server
async def test_stores_on_one_client_share_their_connections(redis: Redis) -> None:
    before = len(await redis.client_list())
    for n in range(20):
        await GameStore(redis).load(CHAT - n)
    # One at a time: the first connection is used again, whichever store asks.
    assert len(await redis.client_list()) <= before + 1


async def test_a_pool_with_a_limit_is_never_drained_by_kept_connections(redis_url: str) -> None:
    pool = BlockingConnectionPool.from_url(
        redis_url, max_connections=4, timeout=2, **CLIENT_OPTIONS
    )
    client = Redis(connection_pool=pool)
    try:
        stores = [GameStore(client) for _ in range(3)]
        # Far more commands at once than the pool has connections: they wait for one in turn.
        loaded = await asyncio.gather(*(stores[n % 3].load(CHAT - n) for n in range(40)))
        assert loaded == [(None, 0)] * 40
        # The client's own commands still get a connection.
        assert await client.ping()
    finally:
        await client.aclose()


@pytest.mark.single_server
@pytest.mark.parametrize("protocol", [2, 3])
async def test_a_session_reads_the_same_under_either_protocol(
    redis: Redis, redis_url: str, protocol: int
) -> None:
    # RESP3 answers HGETALL with a map, RESP2 (and any script) with a flat list.
    store = GameStore(redis)
    await store.transact(CHAT, _replace_with(_lobbyless_session("either")), update_id=9)
    client = Redis.from_url(redis_url, protocol=protocol, **CLIENT_OPTIONS)
    try:
        session, version = await GameStore(client).load(CHAT)
        assert session is not None and session.title == "either" and version == 1
    finally:
        await client.aclose()
