"""Moving an older version's keys to today's names (tgcheat.store.migration, `tgcheat
migrate-keys`): every game and what is kept with it is found again under the new names, a name
taken since is never overwritten, and a bot does not start on the old names.

The older version ran on a single server only: these tests write its keys as it did there."""

from __future__ import annotations

import json

import pytest
from redis.asyncio import Redis

from tests.store.helpers import CHAT, KEYS, game_session
from tgcheat.config import Config
from tgcheat.engine.rules import Rules
from tgcheat.redis_connection import RedisStartError, open_redis
from tgcheat.store.codec import encode
from tgcheat.store.games import GameStore
from tgcheat.store.migration import migrate_keys, old_keys_left
from tgcheat.table.place import Place

pytestmark = pytest.mark.single_server

TOPIC = 7
OTHER_CHAT = -100999


async def _store_as_the_older_version(redis: Redis) -> None:
    """Keys as the version before hash tags wrote them (a chat, one of its topics, another
    chat whose new name gets taken)."""
    document = encode(game_session())
    await redis.hset("tgc:chat:-100123", mapping={"v": 5, "d": document, "m:table": 40})
    await redis.expire("tgc:chat:-100123", 3600)
    await redis.hset("tgc:chat:-100123:7", mapping={"v": 2, "d": document})
    await redis.hset("tgc:rate:-100123", mapping={"tokens": "1", "at": "5", "table": "1"})
    await redis.hset("tgc:group:-100123", "rules", json.dumps(Rules().to_dict()))
    await redis.sadd("tgc:ping:-100123", 1000)
    await redis.hset("tgc:stats:chat:-100123", "g", 3)
    await redis.hset("tgc:stats:user:1000", "s", "1 2 3")
    await redis.hset("tgc:user:1000", "lang", "de")
    await redis.hset("tgc:chat:-100999", mapping={"v": 1, "d": document})
    await redis.zadd("tgc:deadlines", {"-100123": 1000, "-100123:7": 2000, "-100999": 3000})
    await redis.zadd("tgc:deferred-tables", {"-100123": 1500})


async def test_every_kept_thing_is_found_again_under_the_new_names(redis: Redis) -> None:
    await _store_as_the_older_version(redis)
    # A game opened in the other chat by a newer process before the move.
    newer = GameStore(redis)
    await newer.transact(OTHER_CHAT, lambda s: (game_session(chat_id=OTHER_CHAT), None))
    assert await old_keys_left(redis, KEYS)

    moved = await migrate_keys(redis, KEYS)
    assert moved.keys == 6 and moved.clock_entries == 4
    assert moved.left == ["tgc:chat:-100999"]
    assert not await old_keys_left(redis, KEYS)

    store = GameStore(redis)
    loaded = await store.read(CHAT)
    assert loaded.session == game_session() and loaded.version == 5
    # Its message ids go to the first sync, which takes the messages over.
    lease = await store.shown.begin(Place(CHAT), 1)
    assert lease is not None and lease.legacy["table"] == 40
    assert 0 < await redis.ttl(KEYS.session(Place(CHAT))) <= 3600
    assert (await store.read(Place(CHAT, TOPIC))).version == 2
    assert await store.clock.due(2500) == [Place(CHAT), Place(CHAT, TOPIC)]
    assert await redis.zscore(KEYS.due(CHAT), str(CHAT)) is not None
    assert await store.settings.group_rules(CHAT) == Rules()
    assert await store.pings.take(CHAT) == [1000]
    assert await redis.hget(KEYS.chat_stats(CHAT), "g") == b"3"
    # Per-person keys kept their names.
    assert await store.settings.user_language(1000) == "de"
    assert await redis.hget(KEYS.person_stats(1000), "s") == b"1 2 3"
    # The newer game is not overwritten; the older one is left where it was, named.
    assert (await store.read(OTHER_CHAT)).version == 1
    assert await redis.exists("tgc:chat:-100999")

    # Once more: nothing left to move.
    again = await migrate_keys(redis, KEYS)
    assert (again.keys, again.clock_entries) == (0, 0)


async def test_the_bot_does_not_start_on_the_older_names(redis: Redis, redis_url: str) -> None:
    config = Config(telegram_bot_token="123:abc", redis_url=redis_url)
    await redis.zadd("tgc:deadlines", {"-100123": 1000})
    with pytest.raises(RedisStartError, match="migrate-keys"):
        await open_redis(config)
    _client, close = await open_redis(config, older_keys_ok=True)
    await close()
    await migrate_keys(redis, KEYS)
    _client, close = await open_redis(config)
    await close()
