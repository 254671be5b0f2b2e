"""Two bots on one Redis, each with its own key prefix (TGCHEAT_REDIS_PREFIX), play in the same
group without seeing each other's games."""

from __future__ import annotations

from redis.asyncio import Redis

from tests.bot.conftest import GROUP_ID, TOKEN, BotHarness
from tests.bot.play import join_by_button
from tests.support.fake_telegram import FakeTelegram
from tests.support.updates import UpdateFactory, User, group
from tgcheat.bot.app import build_application
from tgcheat.config import Config
from tgcheat.store.games import GameStore

ALICE, BOB = User(1, "Alice"), User(2, "Bob")


async def _bot(redis: Redis, prefix: str) -> BotHarness:
    fake = FakeTelegram()
    config = Config(telegram_bot_token=TOKEN, redis_prefix=prefix)
    app = build_application(config, redis, request=fake, send_rate=0)
    await app.initialize()
    return BotHarness(
        app, fake, UpdateFactory(fake), group(GROUP_ID, "Cards"), GameStore(redis, prefix=prefix)
    )


async def test_two_bots_with_their_own_prefix_share_one_redis(redis: Redis) -> None:
    first, second = await _bot(redis, "cheat-one"), await _bot(redis, "cheat-two")
    try:
        await first.command(ALICE, "/new")
        await join_by_button(first, ALICE)
        # The other bot sees no game in the group: it opens its own.
        await second.command(BOB, "/new")
        assert "a new game is open" in second.fake.last_message(GROUP_ID).seen_text
        await join_by_button(second, BOB)
        mine, _ = await first.store.load(GROUP_ID)
        theirs, _ = await second.store.load(GROUP_ID)
        assert mine is not None and mine.lobby is not None
        assert theirs is not None and theirs.lobby is not None
        assert [uid for uid, _ in mine.lobby.players] == [ALICE.id]
        assert [uid for uid, _ in theirs.lobby.players] == [BOB.id]
        keys = await redis.keys("*")
        assert keys and all(key.startswith((b"cheat-one:", b"cheat-two:")) for key in keys)
    finally:
        for bot in (first, second):
            await bot.app.shutdown()
            bot.fake.assert_clean()
