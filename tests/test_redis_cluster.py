"""A real Redis Cluster (tests.support.redis_cluster) and the bot's client of it
(REDIS_CLUSTER=1): keys of every slot reached from one node's URL, a script on one slot, a
master lost and its replica promoted."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis
import redis.exceptions
from redis.crc import key_slot

from tests.support.redis_cluster import MASTERS, RedisCluster, running_cluster, slot_ranges
from tests.support.redis_server import free_port
from tgcheat.config import Config
from tgcheat.redis_connection import RedisStartError, open_redis

TOKEN = "123456:cluster-test"
#: Keys whose slots fall on each of the three masters (0-5460, 5461-10922, 10923-16383).
SPREAD = [f"tgc:chat:{n}".encode() for n in range(30)]


def test_slot_ranges_cover_every_slot_once() -> None:
    ranges = slot_ranges(MASTERS)
    assert ranges == [(0, 5460), (5461, 10922), (10923, 16383)]


async def test_open_redis_with_redis_cluster_reaches_every_master(
    cluster_servers: RedisCluster, redis_cluster: aioredis.Redis
) -> None:
    config = Config(telegram_bot_token=TOKEN, redis_url=cluster_servers.url, redis_cluster=True)
    client, close = await open_redis(config)
    try:
        for n, key in enumerate(SPREAD):
            await client.set(key, str(n).encode())
        assert await asyncio.gather(*(client.get(key) for key in SPREAD)) == [
            str(n).encode() for n in range(len(SPREAD))
        ]
    finally:
        await close()
    # Every master holds some of them: the client followed the slots, not one node.
    holders = {cluster_servers.master_of_slot(key_slot(key)) for key in SPREAD}
    assert len(holders) == MASTERS
    for master in cluster_servers.masters:
        with master.client() as node:
            assert node.dbsize() > 0


async def test_a_script_and_a_transaction_on_one_slot_and_not_across_two(
    redis_cluster: aioredis.Redis,
) -> None:
    # What the store's scripts must keep to on a cluster: keys of one slot (a hash tag).
    swap = redis_cluster.register_script(
        "local a = redis.call('GET', KEYS[1]) redis.call('SET', KEYS[2], a) return a"
    )
    await redis_cluster.set(b"tgc:{chat:1}:game", b"state")
    assert await swap(keys=[b"tgc:{chat:1}:game", b"tgc:{chat:1}:copy"]) == b"state"
    assert await redis_cluster.get(b"tgc:{chat:1}:copy") == b"state"
    async with redis_cluster.pipeline(transaction=True) as pipe:
        pipe.incr(b"tgc:{chat:1}:n").incr(b"tgc:{chat:1}:n")
        assert await pipe.execute() == [1, 2]

    with pytest.raises(redis.exceptions.RedisClusterException, match=r"(?i)slot"):
        await swap(keys=[b"tgc:chat:1:game", b"tgc:chat:2:game"])


async def test_open_redis_with_redis_cluster_and_no_node_answering_says_so() -> None:
    url = f"redis://127.0.0.1:{free_port()}"
    config = Config(telegram_bot_token=TOKEN, redis_url=url, redis_cluster=True)
    with pytest.raises(RedisStartError, match="cannot connect to the Redis Cluster at") as info:
        await open_redis(config)
    assert "\n" not in str(info.value)


@pytest.fixture
def cluster_with_replicas(tmp_path: Path) -> Iterator[RedisCluster]:
    # Its own cluster: the drill stops a node of it.
    with running_cluster(tmp_path, replicas=True) as cluster:
        yield cluster


async def test_failover_drill_a_master_stops_its_replica_takes_over(
    cluster_with_replicas: RedisCluster,
) -> None:
    cluster = cluster_with_replicas
    config = Config(telegram_bot_token=TOKEN, redis_url=cluster.url, redis_cluster=True)
    client, close = await open_redis(config)
    try:
        for key in SPREAD:
            await client.set(key, b"before")
        # Replicated before the master goes: WAIT for one replica on each master.
        for master in cluster.masters:
            with master.client() as node:
                assert node.execute_command("WAIT", 1, 5000) == 1

        slot = key_slot(SPREAD[0])
        lost = cluster.master_of_slot(slot)
        replica = cluster.replica_of(lost)
        lost.server.stop()
        await asyncio.to_thread(cluster.promote, replica)
        assert cluster.master_of_slot(slot) is replica

        # The client finds the new master by itself: what was written is there, and more
        # can be written, on every slot.
        assert await asyncio.gather(*(client.get(key) for key in SPREAD)) == [b"before"] * len(
            SPREAD
        )
        for key in SPREAD:
            await client.set(key, b"after")

        # The old master comes back as a replica of the new one, and the cluster is whole.
        await asyncio.to_thread(lost.server.start)
        await asyncio.to_thread(cluster.wait_until_ok)
        assert cluster.replica_of(replica) is lost
        assert await asyncio.gather(*(client.get(key) for key in SPREAD)) == [b"after"] * len(
            SPREAD
        )
    finally:
        await close()
