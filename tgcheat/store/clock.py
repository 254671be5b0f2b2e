"""The clock's deadlines: when each group's session must be acted on next (a turn's or a final
play's timeout, a lobby's expiry).

Sorted sets of places (``Place.key``) scored by their deadline (ms), one per shard of the chats
(``Keys.deadlines``, tagged like the chats it holds, so that the compare-and-set of a session
keeps its deadline in the same script: tgcheat.store.scripts.CAS_SCRIPT), so that any process
can fire it. The clock reads every shard in one pipeline: one round trip on a single server,
one per node (at once) on a cluster.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from redis.asyncio import Redis

from tgcheat.store.keys import SHARDS, Keys
from tgcheat.store.timeout import bounded
from tgcheat.table.place import Place, Where


class Deadlines:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys

    async def due(self, now_ms: int, limit: int = 64) -> list[Place]:
        """Places whose deadline has passed (the clock must act there), at most ``limit``, the
        earliest first."""
        return await due_in_shards(self._redis, self._keys.deadlines_of_shard, now_ms, limit)

    async def forget(self, where: Where) -> None:
        """Drop a deadline whose session is gone (expired), so it is not looked at again."""
        place = Place.of(where)
        await bounded(self._redis.zrem(self._keys.deadlines(place.chat_id), place.key))


async def due_in_shards(
    redis: Redis, set_of_shard: Callable[[int], str], now_ms: int, limit: int
) -> list[Place]:
    """The places due by ``now_ms`` in the sorted sets of every shard, at most ``limit``, the
    earliest first: each shard's earliest ``limit``, merged."""
    async with redis.pipeline(transaction=False) as pipe:
        for shard in range(SHARDS):
            pipe.zrangebyscore(set_of_shard(shard), "-inf", now_ms, 0, limit, withscores=True)
        answers = await bounded(pipe.execute())
    due = sorted(
        (float(score), cast(bytes, member).decode())
        for answer in answers
        for member, score in answer
    )
    return [Place.from_key(member) for _, member in due[:limit]]
