"""Moving the keys of an older version to today's names (``tgcheat migrate-keys``).

Before the store ran on a Redis Cluster, a chat's keys had no hash tag (``tgc:chat:<id>``,
``tgc:rate:<id>``, ``tgc:group:<id>``, ``tgc:ping:<id>``, ``tgc:stats:chat:<id>``) and the
clock had one sorted set of each kind (``tgc:deadlines``, ``tgc:deferred-tables``). Today's
names are in tgcheat.store.keys. Per-person keys and an update's failures kept their names.

The move is a step an operator runs once, with every process of the older version stopped: a
process of either version only knows its own names, so while both ran, each would take the
other's copy of a game for none. (Reading the old names as a fallback would not help a rolling
deploy: an older process would go on writing a game under the old name after a newer one had
moved it.) The newer version refuses to start while the older clock's sets are there
(``old_keys_left``), so that no game is left behind unnoticed.

Each key is moved with RENAMENX (its expiry goes with it); a key whose new name is taken
already (a game opened by a newer process before the move) is left under its old name and
counted, never overwritten. The clock's sets are split member by member into their shards (a
member already there keeps its score). Running it again moves nothing more. The older version
never ran on a Redis Cluster: its keys are on a single server, where any key may be renamed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

from redis.asyncio import Redis

from tgcheat.store.keys import Keys
from tgcheat.table.place import Place

#: Old names of a chat's keys: the kind after the prefix, and today's name for its suffix.
_KINDS: tuple[tuple[str, Callable[[Keys, str], str]], ...] = (
    ("chat", lambda keys, rest: keys.session(Place.from_key(rest))),
    ("rate", lambda keys, rest: f"{keys.tag(Place.from_key(rest).chat_id)}:rate:{rest}"),
    ("group", lambda keys, rest: keys.group(int(rest))),
    ("ping", lambda keys, rest: keys.pings(int(rest))),
    ("stats:chat", lambda keys, rest: keys.chat_stats(int(rest))),
)


@dataclass
class Moved:
    """What a migration did."""

    #: Keys moved to today's names.
    keys: int = 0
    #: Deadlines and deferred tables moved into their shards.
    clock_entries: int = 0
    #: Old keys left where they were: today's name was taken (named, for the operator).
    left: list[str] = field(default_factory=list)


def _old_deadlines(keys: Keys) -> str:
    return f"{keys.prefix}:deadlines"


def _old_deferred_tables(keys: Keys) -> str:
    return f"{keys.prefix}:deferred-tables"


async def old_keys_left(redis: Redis, keys: Keys) -> bool:
    """Whether the clock's sets of the older version are there: every game in play or waiting
    for the clock had an entry in them."""
    for name in (_old_deadlines(keys), _old_deferred_tables(keys)):
        if await redis.exists(name):
            return True
    return False


async def migrate_keys(redis: Redis, keys: Keys) -> Moved:
    """Move every key of the older names under ``keys.prefix`` to today's (see above)."""
    moved = Moved()
    for kind, new_name in _KINDS:
        pattern = f"{keys.prefix}:{kind}:*"
        async for raw in redis.scan_iter(match=pattern, count=1000):
            old = raw.decode() if isinstance(raw, bytes) else str(raw)
            rest = old.removeprefix(f"{keys.prefix}:{kind}:")
            try:
                new = new_name(keys, rest)
            except ValueError:
                continue  # not a name of this kind: not ours to move
            if new == old:
                continue
            if await redis.renamenx(old, new):
                moved.keys += 1
            else:
                moved.left.append(old)
    for old_set, shard_set in (
        (_old_deadlines(keys), keys.deadlines),
        (_old_deferred_tables(keys), keys.due),
    ):
        entries = cast(
            list[tuple[bytes, float]], await redis.zrange(old_set, 0, -1, withscores=True)
        )
        for member, score in entries:
            place = Place.from_key(member.decode())
            await redis.zadd(shard_set(place.chat_id), {member: score}, nx=True)
            await redis.zrem(old_set, member)
            moved.clock_entries += 1
    # The due sets of the version before the reconciler: a place there is synced by the clock.
    for shard in keys.shards:
        old_set = keys.deferred_tables_of_shard(shard)
        entries = cast(
            list[tuple[bytes, float]], await redis.zrange(old_set, 0, -1, withscores=True)
        )
        for member, score in entries:
            await redis.zadd(keys.due_of_shard(shard), {member: score}, nx=True)
            moved.clock_entries += 1
        if entries:
            await redis.delete(old_set)
    return moved
