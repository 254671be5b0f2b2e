"""A group's message budget: Telegram lets a bot send about 20 messages a minute to a group,
edits included.

Each group has a token bucket in Redis, shared by every process (its Lua is
tgcheat.store.scripts.TOKEN_BUCKET): a change's group messages are spent in the session's
compare-and-set, and when the bucket is overdrawn the table edit is deferred (a sorted set of
chat ids scored by when a token is back). The clock then takes a token here for each deferred
table, which shows the state of then.
"""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis

from tgcheat.store.keys import Keys
from tgcheat.store.scripts import TAKE_SCRIPT, take_call
from tgcheat.store.timeout import bounded

GROUP_MESSAGES_PER_MINUTE = 20


class GroupBudget:
    def __init__(
        self, redis: Redis, keys: Keys, per_minute: int = GROUP_MESSAGES_PER_MINUTE
    ) -> None:
        self._redis = redis
        self._keys = keys
        #: Each group's budget of messages a minute.
        self.per_minute = per_minute
        self._take = redis.register_script(TAKE_SCRIPT)

    async def deferred_tables(self, now_ms: int, limit: int = 64) -> list[int]:
        """Groups whose table edit waited for their budget and is now due, at most ``limit``."""
        raw = await bounded(
            self._redis.zrangebyscore(self._keys.deferred_tables, "-inf", now_ms, 0, limit)
        )
        return [int(cast(bytes, chat_id)) for chat_id in raw]

    async def take(self, chat_id: int, now_ms: int) -> bool:
        """Take one group message from the budget for a deferred table edit; False (and
        deferred again) while the budget is overdrawn."""
        call = take_call(
            budget_key=self._keys.budget(chat_id),
            deferred_key=self._keys.deferred_tables,
            chat_id=chat_id,
            per_minute=self.per_minute,
            now_ms=now_ms,
        )
        return bool(await bounded(self._take(keys=call.keys, args=call.args)))
