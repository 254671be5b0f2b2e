"""The real bot behind the real webhook endpoint: HTTP POSTs of update JSON."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from redis.asyncio import Redis

from tests.bot.conftest import GROUP_ID, TOKEN
from tests.support.fake_telegram import FakeTelegram
from tests.support.updates import UpdateFactory, User, group
from tgcheat.bot.app import build_application
from tgcheat.config import Config
from tgcheat.web import create_web_app

SECRET = "s3cret-token_for-tests"
CONFIG = Config(
    telegram_bot_token=TOKEN,
    webhook_url="https://cheat.example.com/telegram",
    webhook_secret=SECRET,
)
HEADERS = {"X-Telegram-Bot-Api-Secret-Token": SECRET}


@asynccontextmanager
async def webhook_client(redis: Redis, fake: FakeTelegram) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client of the bot's web app (`tgcheat serve`), started and stopped around it."""
    app = create_web_app(build_application(CONFIG, redis, request=fake, send_rate=0), redis, CONFIG)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            yield client


async def test_updates_posted_to_the_webhook_run_the_game(redis: Redis) -> None:
    fake = FakeTelegram()
    updates = UpdateFactory(fake)
    alice = User(11, "Alice")
    async with webhook_client(redis, fake) as client:
        new = updates.command(group(GROUP_ID), alice, "/new")
        refused = await client.post("/telegram", json=new)
        assert refused.status_code == 403
        assert not fake.calls_to("sendMessage")
        answer = await client.post("/telegram", json=new, headers=HEADERS)
        assert answer.status_code == 200
        lobby = fake.last_message(GROUP_ID)
        assert "a new game is open" in (lobby.plain_text or "")
        again = await client.post("/telegram", json=new, headers=HEADERS)
        assert again.status_code == 200
        assert len(fake.calls_to("sendMessage")) == 1
        health = await client.get("/healthz")
        assert health.json() == {"ok": True, "redis": "up"}
    fake.assert_clean()


async def test_with_redis_unreachable_the_webhook_asks_telegram_to_deliver_again() -> None:
    import socket

    from redis.asyncio import Redis as AsyncRedis

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    redis = AsyncRedis(host="127.0.0.1", port=closed_port, socket_connect_timeout=0.2)
    fake = FakeTelegram()
    updates = UpdateFactory(fake)
    async with webhook_client(redis, fake) as client:
        new = updates.command(group(GROUP_ID), User(5, "Eve"), "/new")
        answer = await client.post("/telegram", json=new, headers=HEADERS)
        assert answer.status_code == 500
        assert (await client.get("/healthz")).status_code == 503
    assert not fake.calls_to("sendMessage")
    await redis.aclose()


async def test_a_button_press_is_answered_in_the_webhook_response(redis: Redis) -> None:
    """The answer to a press rides back on the response (one Bot API call Telegram makes for
    the bot), instead of a request of its own."""
    fake = FakeTelegram()
    updates = UpdateFactory(fake)
    alice = User(11, "Alice")
    async with webhook_client(redis, fake) as client:
        new = updates.command(group(GROUP_ID), alice, "/new")
        await client.post("/telegram", json=new, headers=HEADERS)
        lobby = fake.last_message(GROUP_ID)
        forged = updates.callback(alice, lobby, "not a button of ours")
        response = await client.post("/telegram", json=forged, headers=HEADERS)
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        call = response.json()
        assert call == {
            "method": "answerCallbackQuery",
            "callback_query_id": forged["callback_query"]["id"],
            "text": "This button is not valid.",
        }
        assert not fake.calls_to("answerCallbackQuery")
        await fake.webhook_answer(200, response.headers["content-type"], response.content)
        (answered,) = fake.calls_to("answerCallbackQuery")
        assert answered.status == 200
        # A command's answer is a plain 200: its replies are requests of their own.
        help_ = await client.post(
            "/telegram", json=updates.command(group(GROUP_ID), alice, "/help"), headers=HEADERS
        )
        assert help_.status_code == 200 and help_.content == b""
    fake.assert_clean()
