"""Who watches a place's game in the Mini App now, page open and visible: one small hash per
place (``Keys.watching``), each field a player's user id and the time (ms) their report of a
visible page runs out.

The page reports itself visible every ``REPORT_EVERY_MS`` while it is, and hidden when it is
hidden or closed; a report that stops coming (a phone that killed the page) runs out after
``VISIBLE_FOR_MS``. Only a player seated in the place's game may report (the web side checks
it), so a hash holds at most one field per player, and it goes ``VISIBLE_FOR_MS`` after the
last report: what a page leaves is small and short-lived. A stream alone is no proof of a
visible page: a phone keeps one open in the background.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from redis.asyncio import Redis

from tgcheat.store.keys import Keys
from tgcheat.store.timeout import bounded
from tgcheat.table.place import Place

#: How long a report of a visible page holds (ms).
VISIBLE_FOR_MS = 30_000
#: How often a visible page reports (ms): twice within ``VISIBLE_FOR_MS``, so one lost report
#: lapses nothing.
REPORT_EVERY_MS = 12_000


class Watching:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys

    async def visible(self, place: Place, user_id: int, now_ms: int) -> None:
        """``user_id``'s page shows the place's game now."""
        key = self._keys.watching(place)
        pipe = self._redis.pipeline(transaction=True)
        pipe.hset(key, str(user_id), now_ms + VISIBLE_FOR_MS)
        pipe.pexpire(key, VISIBLE_FOR_MS)
        await bounded(pipe.execute())

    async def hidden(self, place: Place, user_id: int) -> bool:
        """``user_id``'s page is hidden or closed; whether it had been reported visible."""
        return bool(await bounded(self._redis.hdel(self._keys.watching(place), str(user_id))))

    async def of(self, place: Place, now_ms: int, among: Iterable[int] = ()) -> dict[int, int]:
        """Who watches the place now (their reports not run out at ``now_ms``), with when
        each report runs out; only those of ``among`` when it names anyone."""
        raw: Mapping[bytes | str, bytes | str] = await bounded(
            self._redis.hgetall(self._keys.watching(place))
        )
        wanted = set(among)
        found = {}
        for field, value in raw.items():
            user_id, until = int(field), int(value)
            if until > now_ms and (not wanted or user_id in wanted):
                found[user_id] = until
        return found
