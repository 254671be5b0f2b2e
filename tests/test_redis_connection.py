"""The embedded Redis is supervised: a server that dies is started again on the same data, and
the bot's store works again."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest
import redis.exceptions

from tests.store.helpers import CHAT, game_session, replace_with
from tgcheat import redis_connection
from tgcheat.config import Config
from tgcheat.redis_connection import PID_FILENAME, EmbeddedRedis, open_redis
from tgcheat.store.games import GameStore
from tgcheat.store.keys import Keys

TOKEN = "123456:TEST-token-for-offline-tests"
TIMEOUT_S = 15.0


async def _until(condition_met: Callable[[], bool], what: str) -> None:
    deadline = asyncio.get_running_loop().time() + TIMEOUT_S
    while not condition_met():
        assert asyncio.get_running_loop().time() < deadline, f"{what}: not within {TIMEOUT_S}s"
        await asyncio.sleep(0.02)


def _pid(data_dir: Path) -> int:
    return int((data_dir / PID_FILENAME).read_text().strip())


async def test_a_killed_embedded_redis_is_started_again_and_the_store_works(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="tgcheat")
    client, close = await open_redis(Config(telegram_bot_token=TOKEN, data_dir=str(tmp_path)))
    try:
        store = GameStore(client)
        session = game_session()
        assert (await store.transact(CHAT, replace_with(session), update_id=7)).changed
        killed = _pid(tmp_path)
        os.kill(killed, signal.SIGKILL)
        # The bot's next operations fail while the server is away, then work again.
        deadline = asyncio.get_running_loop().time() + TIMEOUT_S
        while True:
            try:
                loaded, _ = await GameStore(client).load(CHAT)
                break
            except (redis.exceptions.ConnectionError, OSError):
                assert asyncio.get_running_loop().time() < deadline, "Redis did not come back"
                await asyncio.sleep(0.05)
        assert loaded == session
        assert _pid(tmp_path) != killed
        # The update is still known (its id is in the append-only file); a new one is applied.
        assert (
            await GameStore(client).transact(CHAT, replace_with(session), update_id=7)
        ).duplicate
        changed = game_session(seed=2)
        assert (await store.transact(CHAT, replace_with(changed), update_id=8)).changed
        assert (await store.load(CHAT))[0] == changed
    finally:
        await close()
    logged = [r.getMessage() for r in caplog.records]
    assert any(f"redis-server (pid {killed}) was killed by SIGKILL" in m for m in logged), logged
    assert any("running again" in m for m in logged), logged


async def test_a_server_that_dies_again_soon_is_restarted_after_a_longer_wait(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(redis_connection, "RESTART_STABLE_S", 0.5)
    caplog.set_level(logging.WARNING, logger="tgcheat")
    server = await EmbeddedRedis.start(str(tmp_path))
    try:
        await asyncio.sleep(0.6)  # it ran a while: it is started again at once
        os.kill(server.pid, signal.SIGKILL)
        await _until(lambda: server.restarts == 1 and server.running, "first restart")
        for expected in (2, 3):  # each time soon after it started: 1 s, then 2 s
            os.kill(server.pid, signal.SIGKILL)
            await _until(
                lambda n=expected: server.restarts == n and server.running,
                "restart",
            )
    finally:
        await server.stop()
    assert not server.running
    starts = [r.getMessage() for r in caplog.records if "starting it again" in r.getMessage()]
    assert [m.split("starting it again")[1].split(" on ")[0] for m in starts] == [
        "",
        " in 1s",
        " in 2s",
    ]


async def test_a_stopped_server_is_not_started_again(tmp_path: Path) -> None:
    server = await EmbeddedRedis.start(str(tmp_path))
    pid = server.pid
    await server.stop()
    await asyncio.sleep(0.3)
    assert not server.running and server.restarts == 0 and server.pid == pid


# --- which server binary -------------------------------------------------------------------


async def test_the_embedded_server_is_valkey_9(tmp_path: Path) -> None:
    client, close = await open_redis(Config(telegram_bot_token=TOKEN, data_dir=str(tmp_path)))
    try:
        info = await client.info("server")
    finally:
        await close()
    assert str(info.get("valkey_version", "")).startswith("9."), info.get("redis_version")


def test_without_a_shipped_binary_one_on_path_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(redis_connection, "_SHIPPED_BINARIES", (("no_such_package", "x"),))
    server = tmp_path / "redis-server"
    server.write_text("#!/bin/sh\n")
    server.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert redis_connection.redis_server_binary() == str(server)

    server.unlink()
    with pytest.raises(redis_connection.RedisStartError, match="set REDIS_URL") as info:
        redis_connection.redis_server_binary()
    assert "\n" not in str(info.value)


async def test_the_embedded_server_moves_an_older_versions_keys_at_start(tmp_path: Path) -> None:
    """On your computer the embedded server is the program's alone: a game kept by an older
    version is found again at the next start, with no command to run."""
    config = Config(telegram_bot_token=TOKEN, data_dir=str(tmp_path))
    client, close = await open_redis(config)
    try:
        await client.hset("tgc:chat:-100123", mapping={"v": 5, "d": "{}"})
        await client.zadd("tgc:deadlines", {"-100123": 1000})
    finally:
        await close()
    client, close = await open_redis(config)
    try:
        assert await client.exists("tgc:chat:-100123") == 0
        assert await client.hget(Keys().session(-100123), "v") == b"5"
        assert await client.exists("tgc:deadlines") == 0
    finally:
        await close()
