"""A Redis that stops answering fails the store's operation within its deadline, instead of
holding the update (and the player's tap) for ever."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis.asyncio

from tgcheat.redis_connection import CLIENT_OPTIONS
from tgcheat.store import timeout
from tgcheat.store.games import GameStore
from tgcheat.table.place import Place


async def test_a_redis_that_hangs_fails_the_operation_in_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(timeout, "OPERATION_TIMEOUT_S", 0.3)
    held: list[asyncio.StreamWriter] = []

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)  # accepts, reads nothing, answers nothing

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = redis.asyncio.Redis(host="127.0.0.1", port=port, **CLIENT_OPTIONS)
    store = GameStore(client)
    try:
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            await store.load(-100123)
        with pytest.raises(TimeoutError):
            await store.shown.read(Place(-100123))
        with pytest.raises(TimeoutError):
            await store.settings.group_language(-100123)
        assert time.monotonic() - started < 3
    finally:
        await client.aclose()
        for writer in held:
            writer.close()
        server.close()
