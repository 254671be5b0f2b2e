"""A group's message budget: Telegram lets a bot send about 20 messages a minute to a group,
edits included.

Each group has a token bucket in Redis, shared by every process and by the games of all its
topics (Telegram's limit is the group's; its Lua is tgcheat.store.scripts.TOKEN_BUCKET). A sync
reads it as it takes its place's lease (``GroupBucket``), lets its plan decide which requests
the bucket allows now (what players must see may run it into a little debt, edits wait for a
whole token), and spends what it sent when it lets the place go. Telegram's own limit has the
last word: the end of a 429's flood wait is kept in the same hash, and nothing is sent to the
group before it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from redis.asyncio import Redis

from tgcheat.store.keys import Keys
from tgcheat.store.scripts import GROUP_BURST, REPLY_SCRIPT, reply_call
from tgcheat.store.timeout import bounded
from tgcheat.table.place import Place, Where

GROUP_MESSAGES_PER_MINUTE = 20
#: A budget of this many messages a minute, or more, is no budget: for tests and tools that
#: play far faster than people (with a clock of their own that may stand still).
UNLIMITED_PER_MINUTE = 1_000_000


@dataclass(frozen=True, slots=True)
class GroupBucket:
    """A group's bucket as a sync read it."""

    #: The tokens stored (None: a full bucket) and when they were counted (ms).
    tokens: float | None = None
    at_ms: int = 0
    #: The end of Telegram's flood wait on the group (ms; 0: none).
    until_ms: int = 0

    @staticmethod
    def of(tokens: bytes | str, at: bytes | str, until: bytes | str) -> GroupBucket:
        return GroupBucket(
            float(tokens) if tokens else None,
            int(float(at)) if at else 0,
            int(float(until)) if until else 0,
        )

    def available(self, now_ms: int, per_minute: int) -> float:
        """The tokens there now (as the Lua's ``spend`` counts them)."""
        burst = burst_of(per_minute)
        if self.tokens is None:
            return burst
        elapsed = max(0, now_ms - self.at_ms)
        return min(burst, self.tokens + elapsed * per_minute / 60_000)

    @staticmethod
    def refill_ms(missing: float, per_minute: int) -> int:
        """How long ``missing`` tokens take to come back."""
        return math.ceil(max(0.0, missing) * 60_000 / per_minute)


def burst_of(per_minute: int) -> float:
    return float(max(1, min(per_minute, GROUP_BURST)))


class GroupBudget:
    def __init__(
        self, redis: Redis, keys: Keys, per_minute: int = GROUP_MESSAGES_PER_MINUTE
    ) -> None:
        self._redis = redis
        self._keys = keys
        #: Each group's budget of messages a minute.
        self.per_minute = per_minute
        #: Whether the budget is kept at all.
        self.limited = per_minute < UNLIMITED_PER_MINUTE
        self._reply = redis.register_script(REPLY_SCRIPT)

    async def take_for_reply(self, where: Where, now_ms: int) -> bool:
        """Take one group message for a reply to a command; False while the budget is
        overdrawn or the group in a flood wait (the reply is not sent; nothing waits). Taken,
        the place's table counts one more message below it (its next sync brings it down)."""
        place = Place.of(where)
        call = reply_call(
            bucket_key=self._keys.bucket(place.chat_id),
            session_key=self._keys.session(place),
            per_minute=self.per_minute,
            now_ms=now_ms,
            limited=self.limited,
        )
        return bool(await bounded(self._reply(keys=call.keys, args=call.args)))
