"""Groups' and users' choices (tgcheat.store.settings)."""

from __future__ import annotations

from redis.asyncio import Redis

from tests.store.helpers import CHAT, KEYS
from tgcheat.engine.rules import PRESETS, Rules
from tgcheat.store.games import GameStore


async def test_a_groups_rules_and_language_are_kept(redis: Redis) -> None:
    store = GameStore(redis)
    assert await store.settings.group_rules(CHAT) is None
    assert await store.settings.group_language(CHAT) is None
    rules = Rules(max_cards=0)
    assert rules != Rules()
    await store.settings.save_group_rules(CHAT, rules)
    await store.settings.save_group_language(CHAT, "de")
    other = GameStore(redis)
    assert await other.settings.group_rules(CHAT) == rules
    assert await other.settings.group_language(CHAT) == "de"
    await store.settings.save_group_rules(CHAT, PRESETS["cheat"])
    assert await other.settings.group_rules(CHAT) == PRESETS["cheat"]
    # Both in the group's one hash, which does not expire.
    assert sorted(await redis.hkeys(KEYS.group(CHAT))) == [b"lang", b"rules"]
    assert await redis.ttl(KEYS.group(CHAT)) == -1


async def test_a_users_language_is_their_own(redis: Redis) -> None:
    store = GameStore(redis)
    assert await store.settings.user_language(5) is None
    await store.settings.save_user_language(5, "ru")
    assert await store.settings.user_language(5) == "ru"
    assert await store.settings.user_language(6) is None
    assert await redis.hget("tgc:user:5", "lang") == b"ru"
