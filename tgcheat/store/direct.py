"""The store's hot path to Redis: commands sent on connections of redis-py's own pool, kept by
the store, instead of through ``Redis.execute_command``.

Every command through the client checks a connection out of the pool and back in, runs the
observability hooks and looks up a response callback; on this machine that machinery cost more
CPU than the rest of the round trip (``benchmarks/README.md``). Here a connection is taken from
the pool once, kept on a stack between commands, and used as redis-py uses it: a connection
that fails or is cancelled mid-command disconnects itself (so no half-read answer stays on it)
and reconnects when next used, and it checks its health after an idle while. The pool still
owns the connections: closing the client closes them. One stack per pool, whatever the number
of stores on it, so that the stack never holds more connections than were in use at once.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import hiredis
from redis.asyncio import Redis
from redis.asyncio.connection import AbstractConnection, ConnectionPool
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError

Arg = str | bytes | int | float

_IDLE: weakref.WeakKeyDictionary[ConnectionPool, list[AbstractConnection]] = (
    weakref.WeakKeyDictionary()
)


class DirectCommands:
    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._idle = _IDLE.setdefault(redis.connection_pool, [])

    async def execute(self, *args: Arg) -> Any:
        """One command; its answer as the server sent it (no response callback: an HGETALL is
        a flat list of fields and values)."""
        idle = self._idle
        waited = bool(idle)
        connection = idle.pop() if waited else await self._connect()
        try:
            try:
                return await _round_trip(connection, args)
            except RedisConnectionError:
                if not waited:
                    raise
            # The server closed the connection while it waited here (a restart, an idle
            # timeout): redis-py's pool checks for that before it lends a connection, which
            # costs every command a read; here the command finds out, and is sent once more on
            # a new connection (the failed one disconnected itself and reconnects on use).
            return await _round_trip(connection, args)
        finally:
            idle.append(connection)

    async def _connect(self) -> AbstractConnection:
        connection: AbstractConnection = await self._redis.connection_pool.get_connection()  # type: ignore[no-untyped-call]
        return connection

    async def run_script(
        self, script: AsyncScript, keys: Sequence[Arg], args: Sequence[Arg]
    ) -> Any:
        """EVALSHA, loading the script first when the server does not know it (a restarted
        Redis, or another server behind the same address)."""
        try:
            return await self.execute("EVALSHA", script.sha, len(keys), *keys, *args)
        except NoScriptError:
            script.sha = await self._redis.script_load(script.script)
            return await self.execute("EVALSHA", script.sha, len(keys), *keys, *args)


async def _round_trip(connection: AbstractConnection, args: tuple[Arg, ...]) -> Any:
    # hiredis packs a command in C, as redis-py's synchronous client does; its asyncio client
    # packs in Python (a compare-and-set with the game's document: about 20 µs against 4).
    # (hiredis's stub types the argument as a tuple of one item.)
    await connection.send_packed_command(hiredis.pack_command(args))  # type: ignore[arg-type]
    return await connection.read_response()
