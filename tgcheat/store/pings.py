"""Next-game pings: the people of a group who asked (/notify) to be told in private when its
next game opens. One ping per sign-up: the sign-ups are taken out as the game opens, so two
processes (or a re-delivered /new) ping each person once."""

from __future__ import annotations

from redis.asyncio import Redis

from tgcheat.store.keys import Keys
from tgcheat.store.timeout import bounded

#: A sign-up nobody's next game used is forgotten after this long.
PING_TTL_S = 30 * 24 * 3600

# Adds the person, or takes them out when they were in (keys and arguments: the set, the user
# id, the TTL). Returns 1 when they are now signed up, 0 when no longer.
_TOGGLE = """
if redis.call('SREM', KEYS[1], ARGV[1]) == 1 then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""
# Every sign-up, taken out at once (one process gets them).
_TAKE = """
local members = redis.call('SMEMBERS', KEYS[1])
redis.call('DEL', KEYS[1])
return members
"""


class Pings:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._keys = keys
        self._toggle = redis.register_script(_TOGGLE)
        self._take = redis.register_script(_TAKE)

    async def toggle(self, chat_id: int, user_id: int) -> bool:
        """Sign ``user_id`` up for the group's next game, or off again; True when signed up."""
        key = self._keys.pings(chat_id)
        return bool(await bounded(self._toggle(keys=[key], args=[user_id, PING_TTL_S])))

    async def take(self, chat_id: int) -> list[int]:
        """Those to ping now that the group's next game is open (and forget them)."""
        raw = await bounded(self._take(keys=[self._keys.pings(chat_id)]))
        return sorted(int(member) for member in raw)
