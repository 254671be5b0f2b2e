"""The store's hot path to Redis: commands sent on connections of redis-py's own pool, kept by
the store, instead of through ``Redis.execute_command``.

Every command through the client checks a connection out of the pool and back in, runs the
observability hooks and looks up a response callback; on this machine that machinery cost more
CPU than the rest of the round trip (``benchmarks/README.md``). Here a few connections are taken
from the pool once and kept on a stack between commands, and used as redis-py uses them: a
connection that fails or is cancelled mid-command disconnects itself (so no half-read answer
stays on it) and reconnects when next used, and it checks its health after an idle while. The
pool still owns them: closing the client closes them. One stack per pool, whatever the number
of stores on it, holding at most ``KEEP`` connections (fewer with a small pool): when more
commands are in flight, the others borrow a connection from the pool and give it back, so a
pool with a limit (a ``BlockingConnectionPool``, or ``max_connections`` in the URL) is never
drained by connections kept here.

A Redis Cluster client has no one pool (a pool per node, chosen by the slot of the keys): there
the commands go through the client's own ``execute_command``, which routes them, follows MOVED
and ASK redirections and finds the new master after a failover. The kept connections are the
single server's fast path only.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import hiredis
from redis.asyncio import Redis, RedisCluster
from redis.asyncio.connection import AbstractConnection, ConnectionPool
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError

Arg = str | bytes | int | float

#: Connections kept per pool: about the Redis commands a busy process has in flight at once.
KEEP = 8


class _Kept:
    """The connections kept for one pool."""

    def __init__(self, pool: ConnectionPool) -> None:
        self.idle: list[AbstractConnection] = []
        self.room = min(KEEP, pool.max_connections // 2)


_KEPT: weakref.WeakKeyDictionary[ConnectionPool, _Kept] = weakref.WeakKeyDictionary()


class DirectCommands:
    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        #: A cluster client: commands go through it (see above).
        self._cluster = isinstance(redis, RedisCluster)
        if self._cluster:
            return
        pool = redis.connection_pool
        self._pool = pool
        kept = _KEPT.get(pool)
        if kept is None:
            kept = _KEPT[pool] = _Kept(pool)
        self._kept = kept

    async def execute(self, *args: Arg) -> Any:
        """One command; its answer as the server sent it (no response callback: an HGETALL is
        a flat list of fields and values; through a cluster client, as its callback makes it:
        a map)."""
        if self._cluster:
            return await self._redis.execute_command(*args)  # type: ignore[no-untyped-call]
        kept = self._kept
        if not kept.idle:
            return await self._on_borrowed(args)
        connection = kept.idle.pop()
        try:
            try:
                return await _round_trip(connection, args)
            except RedisConnectionError:
                pass
            # The server closed the connection while it was kept (a restart, an idle
            # timeout): the pool checks for that before it lends a connection, which costs
            # every command a read; here the command finds out, and is sent once more (the
            # failed connection disconnected itself and connects again when used).
            return await _round_trip(connection, args)
        finally:
            kept.idle.append(connection)

    async def _on_borrowed(self, args: tuple[Arg, ...]) -> Any:
        kept = self._kept
        connection: AbstractConnection = await self._pool.get_connection()  # type: ignore[no-untyped-call]
        try:
            answer = await _round_trip(connection, args)
        except BaseException:
            await self._pool.release(connection)
            raise
        if kept.room > 0:
            kept.room -= 1
            kept.idle.append(connection)
        else:
            await self._pool.release(connection)
        return answer

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
