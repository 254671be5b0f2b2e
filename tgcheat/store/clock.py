"""The clock's deadlines: when each group's session must be acted on next (a turn's or a final
play's timeout, a lobby's expiry).

A sorted set of places (``Place.key``) scored by their deadline (ms), which the compare-and-set
of the session keeps (tgcheat.store.scripts.CAS_SCRIPT), so that any process can fire it.
"""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis

from tgcheat.store.keys import Keys
from tgcheat.store.timeout import bounded
from tgcheat.table.place import Place, Where


class Deadlines:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys

    async def due(self, now_ms: int, limit: int = 64) -> list[Place]:
        """Places whose deadline has passed (the clock must act there), at most ``limit``."""
        raw = await bounded(
            self._redis.zrangebyscore(self._keys.deadlines, "-inf", now_ms, 0, limit)
        )
        return [Place.from_key(cast(bytes, key).decode()) for key in raw]

    async def forget(self, where: Where) -> None:
        """Drop a deadline whose session is gone (expired), so it is not looked at again."""
        await bounded(self._redis.zrem(self._keys.deadlines, Place.of(where).key))
