"""The bot on a Redis Cluster (REDIS_CLUSTER=1), driven by update JSON as on a single server:
a whole game, and a game that goes on when the master holding it stops and its replica takes
over."""

from __future__ import annotations

import asyncio
from pathlib import Path

from redis.asyncio import Redis
from redis.crc import key_slot

from tests.bot.conftest import GROUP_ID, TOKEN, BotHarness, running_bot
from tests.bot.play import game_state, has_op, join_by_button, play_to_the_end
from tests.support.redis_cluster import RedisCluster, running_cluster
from tests.support.updates import User
from tgcheat.bot.callbacks import Op
from tgcheat.config import Config
from tgcheat.engine.state import Phase
from tgcheat.redis_connection import open_redis

PLAYERS = [User(301, "Ann"), User(302, "Bob"), User(303, "Cy")]


async def _open_game(bot: BotHarness) -> None:
    await bot.command(PLAYERS[0], "/new")
    for user in PLAYERS:
        await join_by_button(bot, user)
    await bot.press(PLAYERS[0], GROUP_ID, has_op(Op.START))
    assert (await game_state(bot)).phase is Phase.PLAYING


def _result_shown(bot: BotHarness) -> bool:
    return any("wins!" in m.seen_text for m in bot.fake.visible_messages(GROUP_ID))


async def test_a_game_on_the_cluster(redis_cluster: Redis) -> None:
    async with running_bot(redis_cluster) as bot:
        await _open_game(bot)
        state = await play_to_the_end(bot, PLAYERS)
        assert state.phase is Phase.FINISHED
        assert _result_shown(bot)
        # The game's keys are of one slot, the chat's shard's.
        keys = bot.store.keys
        slots = {
            key_slot(name.encode())
            for name in (
                keys.session(GROUP_ID),
                keys.deadlines(GROUP_ID),
                keys.due(GROUP_ID),
                keys.bucket(GROUP_ID),
                keys.chat_stats(GROUP_ID),
            )
        }
        assert len(slots) == 1


async def test_failover_drill_a_game_goes_on_when_its_master_stops(tmp_path: Path) -> None:
    with running_cluster(tmp_path, replicas=True) as cluster:
        await _failover_drill(cluster)


async def _failover_drill(cluster: RedisCluster) -> None:
    config = Config(telegram_bot_token=TOKEN, redis_url=cluster.url, redis_cluster=True)
    client, close = await open_redis(config)
    try:
        async with running_bot(client) as bot:
            await _open_game(bot)
            before = await bot.store.read(GROUP_ID)
            # The master holding the game; WAIT until its replica has every write (a master
            # that stops before replicating loses what it acknowledged: see docs/operating.md).
            slot = key_slot(bot.store.keys.session(GROUP_ID).encode())
            lost = cluster.master_of_slot(slot)
            with lost.client() as node:
                assert node.execute_command("WAIT", 1, 5000) == 1
            replica = cluster.replica_of(lost)
            lost.server.stop()
            await asyncio.to_thread(cluster.promote, replica)
            assert cluster.master_of_slot(slot) is replica

            # The game is there, as it was, and goes on to its end through the new master.
            after = await bot.store.read(GROUP_ID)
            assert after.version == before.version and after.session == before.session
            state = await play_to_the_end(bot, PLAYERS)
            assert state.phase is Phase.FINISHED
            assert _result_shown(bot)
    finally:
        await close()
