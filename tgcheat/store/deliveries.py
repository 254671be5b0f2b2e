"""Failed deliveries of an update: how many times processing it has failed.

Telegram delivers an update again while the webhook answers an error, for as long as it fails.
One that fails the same way every time (a poison update) would come back for hours; the
webhook counts its failures here, per update id and for a day (as long as Telegram keeps an
update), and answers 200 once there were enough (``tgcheat.web``).
"""

from __future__ import annotations

from redis.asyncio import Redis

from tgcheat.store.keys import Keys
from tgcheat.store.timeout import bounded

#: How long a failure is remembered: Telegram gives up on an update within a day.
FAILURE_TTL_S = 24 * 3600


class FailedDeliveries:
    def __init__(self, redis: Redis, keys: Keys | None = None) -> None:
        self._redis = redis
        self._keys = keys if keys is not None else Keys()

    async def count(self, update_id: int) -> int:
        """One more failed delivery of the update; how many there were, this one included."""
        key = self._keys.failures(update_id)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, FAILURE_TTL_S)
            failures, _ = await bounded(pipe.execute())
        return int(failures)
