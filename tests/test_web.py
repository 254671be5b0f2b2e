"""The webhook endpoint and /healthz, against an offline bot and a real Redis."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from starlette.applications import Starlette
from telegram import Update
from telegram.ext import (
    Application,
    ApplicationBuilder,
    ApplicationHandlerStop,
    ContextTypes,
    TypeHandler,
)
from telegram.request import BaseRequest, RequestData

from tgcheat.config import Config
from tgcheat.logs import JsonFormatter
from tgcheat.web import MAX_FAILED_DELIVERIES, SECRET_HEADER, create_web_app

TOKEN = "123:abc"
SECRET = "right_secret-1"
CONFIG = Config(
    telegram_bot_token=TOKEN,
    webhook_url="https://cheat.example.com/hook",
    webhook_secret=SECRET,
)
AnyApplication = Application[Any, Any, Any, Any, Any, Any]
BOT_USER = {"id": 123, "is_bot": True, "first_name": "Cheat", "username": "cheat_test_bot"}


class RecordingRequest(BaseRequest):
    """Answers the Bot API like Telegram would for getMe, `true` for anything else, and
    records every call as (method, parameters)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    @property
    def read_timeout(self) -> float | None:
        return 1.0

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = None,
        write_timeout: Any = None,
        connect_timeout: Any = None,
        pool_timeout: Any = None,
    ) -> tuple[int, bytes]:
        endpoint = url.rsplit("/", 1)[-1]
        self.calls.append((endpoint, dict(request_data.parameters) if request_data else {}))
        result: object = BOT_USER if endpoint == "getMe" else True
        return 200, json.dumps({"ok": True, "result": result}).encode()


@dataclass
class Bot:
    """The web app under test and what reached its handler."""

    client: httpx.AsyncClient
    application: AnyApplication
    request: RecordingRequest
    seen: list[Update] = field(default_factory=list)


def message_update(update_id: int = 1, text: str = "hello") -> dict[str, Any]:
    return {
        "update_id": update_id,
        "message": {
            "message_id": 10,
            "date": 1_700_000_000,
            "chat": {"id": -1001, "type": "supergroup", "title": "Cheaters"},
            "from": {"id": 7, "is_bot": False, "first_name": "Ann"},
            "text": text,
        },
    }


def build(
    request: RecordingRequest, seen: list[Update]
) -> Application[Any, Any, Any, Any, Any, Any]:
    application = ApplicationBuilder().token(TOKEN).request(request).updater(None).build()

    async def record(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if update.effective_message and update.effective_message.text == "boom":
            raise RuntimeError("the handler failed")
        seen.append(update)

    application.add_handler(TypeHandler(Update, record))
    return application


@pytest_asyncio.fixture(loop_scope="session")
async def bot(redis: aioredis.Redis) -> AsyncIterator[Bot]:
    request = RecordingRequest()
    seen: list[Update] = []
    application = build(request, seen)
    app = create_web_app(application, redis, CONFIG)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            yield Bot(client=client, application=application, request=request, seen=seen)
    assert not application.running


async def post(
    bot: Bot, body: object, secret: str | None = SECRET, raw: bytes | None = None
) -> httpx.Response:
    headers = {"Content-Type": "application/json"}
    if secret is not None:
        headers[SECRET_HEADER] = secret
    content = raw if raw is not None else json.dumps(body).encode()
    return await bot.client.post("/hook", content=content, headers=headers)


# --- the webhook --------------------------------------------------------------------------


async def test_lifespan_starts_the_application(bot: Bot) -> None:
    assert bot.application.running
    assert ("getMe", {}) in bot.request.calls


async def test_right_secret_processes_the_update(bot: Bot) -> None:
    response = await post(bot, message_update(update_id=42, text="hi"))
    assert response.status_code == 200
    assert [u.update_id for u in bot.seen] == [42]
    message = bot.seen[0].message
    assert message is not None and message.text == "hi" and message.chat.id == -1001
    assert bot.seen[0].get_bot() is bot.application.bot


@pytest.mark.parametrize(
    "secret", [None, "", "wrong_secret", SECRET + "x", SECRET[:-1], "é".encode()]
)
async def test_missing_or_wrong_secret_is_refused(bot: Bot, secret: str | bytes | None) -> None:
    headers = {} if secret is None else {SECRET_HEADER: secret}
    response = await bot.client.post(
        "/hook", content=json.dumps(message_update()).encode(), headers=headers
    )
    assert response.status_code == 403
    assert bot.seen == []


async def test_wrong_secret_is_refused_before_reading_the_body(bot: Bot) -> None:
    response = await post(bot, None, secret="wrong", raw=b"{not json")
    assert response.status_code == 403


@pytest.mark.parametrize("raw", [b"{not json", b"", b"\xff\xfe", b"[1, 2]", b'"text"', b"{}"])
async def test_body_that_is_not_an_update_is_400(bot: Bot, raw: bytes) -> None:
    response = await post(bot, None, raw=raw)
    assert response.status_code == 400
    assert bot.seen == []


async def test_handler_raising_is_500_so_telegram_retries(bot: Bot) -> None:
    response = await post(bot, message_update(update_id=5, text="boom"))
    assert response.status_code == 500
    # The next update is processed as usual.
    assert (await post(bot, message_update(update_id=6))).status_code == 200
    assert [u.update_id for u in bot.seen] == [6]


async def test_a_failed_update_is_one_log_record_with_its_cause_chat_and_id(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    """What a log platform reads (LOG_FORMAT=json): one JSON object on one line, its fields
    the update's id, its chat and the cause, the traceback inside the same line."""
    with caplog.at_level(logging.ERROR, logger="tgcheat.web"):
        assert (await post(bot, message_update(update_id=41, text="boom"))).status_code == 500
    [failed] = [r for r in caplog.records if "Update 41" in r.getMessage()]
    assert failed.getMessage() == (
        "Update 41 in chat -1001 failed: RuntimeError: the handler failed"
    )
    line = JsonFormatter().format(failed)
    assert "\n" not in line
    entry = json.loads(line)
    assert entry["level"] == "ERROR" and entry["logger"] == "tgcheat.web"
    assert entry["update_id"] == 41 and entry["chat_id"] == -1001
    assert entry["cause"] == "RuntimeError: the handler failed"
    assert "Traceback" in entry["exception"] and "the handler failed" in entry["exception"]


async def test_an_update_that_fails_on_every_delivery_is_answered_200_in_the_end(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    """A poison update: Telegram would deliver it again for hours. Its failed deliveries are
    counted in Redis; the last allowed one is answered 200, with its cause in the log."""
    poison = message_update(update_id=77, text="boom")
    with caplog.at_level(logging.ERROR, logger="tgcheat.web"):
        answers = [(await post(bot, poison)).status_code for _ in range(MAX_FAILED_DELIVERIES)]
    assert answers == [500] * (MAX_FAILED_DELIVERIES - 1) + [200]
    [gave_up] = [r for r in caplog.records if "deliveries" in r.getMessage()]
    assert "Update 77 failed on 3 deliveries" in gave_up.getMessage()
    assert "RuntimeError: the handler failed" in gave_up.getMessage()
    # Each update is counted on its own.
    assert (await post(bot, message_update(update_id=78, text="boom"))).status_code == 500
    assert (await post(bot, message_update(update_id=79))).status_code == 200


async def test_failures_are_not_counted_while_redis_cannot_count_them() -> None:
    """An update that fails because Redis is away is delivered again, however often."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    # Refused at once, not tried again: the test needs no more than that Redis is away.
    dead = aioredis.Redis(host="127.0.0.1", port=closed_port, retry=Retry(NoBackoff(), 0))
    app = create_web_app(build(RecordingRequest(), []), dead, CONFIG)
    try:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
                body = json.dumps(message_update(update_id=80, text="boom")).encode()
                answers = [
                    (
                        await client.post("/hook", content=body, headers={SECRET_HEADER: SECRET})
                    ).status_code
                    for _ in range(MAX_FAILED_DELIVERIES + 2)
                ]
    finally:
        await dead.aclose()
    assert answers == [500] * (MAX_FAILED_DELIVERIES + 2)


def _callback_update(**query: Any) -> dict[str, Any]:
    return {
        "update_id": 90,
        "callback_query": {
            "id": "4000000000000001",
            "from": {"id": 7, "is_bot": False, "first_name": "Ann"},
            "chat_instance": "-1",
            "data": "s:-1001:abc123:0",
            "message": message_update()["message"],
            **query,
        },
    }


def _with(update: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """``update`` with the field at ``path`` ("message.chat.id") set to ``value``, or removed
    when ``value`` is ``...``."""
    copy = json.loads(json.dumps(update))
    *parents, last = path.split(".")
    target = copy
    for name in parents:
        target = target[name]
    if value is ...:
        del target[last]
    else:
        target[last] = value
    return copy


@pytest.mark.parametrize(
    ("update", "path", "value"),
    [
        (message_update(), "update_id", "1"),
        (message_update(), "update_id", True),
        (message_update(), "message", "hello"),
        (message_update(), "message.chat.id", "-1001"),
        (message_update(), "message.chat", ...),
        (message_update(), "message.from.id", "7"),
        (message_update(), "message.text", 5),
        (message_update(), "message.new_chat_members", {"id": 1}),
        (_callback_update(), "callback_query.from", ...),
        (_callback_update(), "callback_query.from.id", 7.5),
        (_callback_update(), "callback_query.id", 4),
        (_callback_update(), "callback_query.data", ["s"]),
        (_callback_update(), "callback_query.message.message_id", "10"),
    ],
)
async def test_an_update_with_a_field_of_the_wrong_type_is_400(
    bot: Bot, update: dict[str, Any], path: str, value: Any
) -> None:
    response = await post(bot, _with(update, path, value))
    assert response.status_code == 400
    assert path.rsplit(".", 1)[-1] in response.text or "update" in response.text
    assert bot.seen == []


async def test_fields_the_bot_never_reads_may_be_anything(bot: Bot) -> None:
    update = message_update(update_id=91)
    update["message"]["a_field_of_a_later_bot_api"] = [1, "two"]
    update["message"]["from"]["language_code"] = None
    assert (await post(bot, update)).status_code == 200
    assert (await post(bot, _callback_update())).status_code == 200


async def test_bot_error_handler_can_declare_an_error_handled(redis: aioredis.Redis) -> None:
    request = RecordingRequest()
    seen: list[Update] = []
    application = build(request, seen)
    handled: list[BaseException | None] = []

    async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        handled.append(context.error)
        raise ApplicationHandlerStop

    application.add_error_handler(on_error)  # the bot's own, registered before the web app
    app = create_web_app(application, redis, CONFIG)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            response = await client.post(
                "/hook",
                content=json.dumps(message_update(text="boom")).encode(),
                headers={SECRET_HEADER: SECRET},
            )
    assert response.status_code == 200
    assert len(handled) == 1 and isinstance(handled[0], RuntimeError)


async def test_exception_escaping_process_update_is_500(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(update: object) -> None:
        raise ConnectionError("Redis went away")

    monkeypatch.setattr(bot.application, "process_update", broken)
    response = await post(bot, message_update())
    assert response.status_code == 500


async def test_only_post_on_the_webhook_path(bot: Bot) -> None:
    assert (await bot.client.get("/hook")).status_code == 405
    assert (await post_to(bot, "/telegram")).status_code == 404
    assert (await post_to(bot, "/")).status_code == 404
    assert bot.seen == []


async def post_to(bot: Bot, path: str) -> httpx.Response:
    return await bot.client.post(
        path, content=json.dumps(message_update()).encode(), headers={SECRET_HEADER: SECRET}
    )


def test_needs_a_webhook_secret(redis: aioredis.Redis) -> None:
    application = build(RecordingRequest(), [])
    with pytest.raises(ValueError, match="WEBHOOK_SECRET"):
        create_web_app(application, redis, Config(telegram_bot_token=TOKEN))


def test_listens_on_the_default_path_when_the_url_has_none(redis: aioredis.Redis) -> None:
    config = Config.from_env(
        {
            "TELEGRAM_BOT_TOKEN": TOKEN,
            "WEBHOOK_URL": "https://cheat.example.com",
            "WEBHOOK_SECRET": SECRET,
        },
        need_webhook=True,
    )
    app = create_web_app(build(RecordingRequest(), []), redis, config)
    assert isinstance(app, Starlette)
    assert {getattr(route, "path", None) for route in app.routes} == {"/telegram", "/healthz"}


# --- /healthz -----------------------------------------------------------------------------


async def test_healthz_up(bot: Bot) -> None:
    response = await bot.client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"ok": True, "redis": "up"}


async def test_healthz_down_when_redis_is_unreachable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    dead = aioredis.Redis(host="127.0.0.1", port=closed_port, socket_connect_timeout=0.5)
    app = create_web_app(build(RecordingRequest(), []), dead, CONFIG)
    try:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
                response = await client.get("/healthz")
    finally:
        await dead.aclose()
    assert response.status_code == 503
    assert response.json() == {"ok": False, "redis": "down"}
