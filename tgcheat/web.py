"""The web server: Telegram's webhook and a health check for the platform.

POST <path of WEBHOOK_URL>: one update from Telegram. It is processed inside the request, so
that a failure answers 500 and Telegram delivers the update again later (the store ignores an
update it has already handled). An update whose processing has failed MAX_FAILED_DELIVERIES
times (counted in Redis, `tgcheat.store.deliveries`) is answered 200 all the same, with its
cause in the log: one that fails the same way every time would otherwise come back for hours.
A body that is authenticated but is not an update the bot can read (a field it reads missing
or of the wrong JSON type) is answered 400. A button press goes straight from the JSON to
tgcheat's handlers (`tgcheat.bot.taps`), and its answer (answerCallbackQuery) rides back on the
response (`tgcheat.bot.sender.webhook_reply`); every other update goes through
python-telegram-bot.
GET /healthz: 200 when Redis answers a PING, else 503.
GET /metrics: Prometheus's figures, with METRICS_TOKEN only (tgcheat.metrics_http).
/app: the Mini App, its page and API (tgcheat.webapp.api).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hmac
import logging
import signal
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Generator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import orjson
import redis.asyncio
import telegram
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route
from telegram.ext import Application, ContextTypes

from tgcheat.bot.handlers import Routes
from tgcheat.bot.sender import webhook_reply
from tgcheat.bot.taps import Tap, tap_from_json
from tgcheat.config import HEALTH_PATH, Config
from tgcheat.logs import update_failed
from tgcheat.metrics import BOT_API_REQUESTS
from tgcheat.metrics_http import MetricsEndpoint
from tgcheat.store.deliveries import FailedDeliveries
from tgcheat.store.keys import Keys
from tgcheat.webapp.api import MiniApp
from tgcheat.webapp.bodies import BODY_TIMEOUT_S, BodyRefused, read_body

__all__ = ["MAX_FAILED_DELIVERIES", "SECRET_HEADER", "create_web_app"]

_LOGGER = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
_HEALTH_TIMEOUT_S = 2.0
#: Deliveries of one update that may fail: the last one is answered 200 all the same.
MAX_FAILED_DELIVERIES = 3

# The handler errors of the update being processed in this request. python-telegram-bot hands
# a handler's exception to the error handlers and does not re-raise it, so an error handler that
# we add reports it here: the request then answers 500 and Telegram re-delivers the update.
# A list, so that an error handler running in a task (block=False) still reaches this request.
_REQUEST_ERRORS: contextvars.ContextVar[list[BaseException] | None] = contextvars.ContextVar(
    "tgcheat_web_request_errors", default=None
)

AnyApplication = Application[Any, Any, Any, Any, Any, Any]

#: The largest update body the webhook reads. Telegram's updates are far smaller (a message is
#: at most 4,096 characters, with its entities and the message it replies to well under
#: 100 KB); a body over this comes from no Telegram server.
MAX_UPDATE_BYTES = 1 << 20


def create_web_app(
    application: AnyApplication,
    redis_client: redis.asyncio.Redis,
    config: Config,
) -> Starlette:
    """The ASGI app for `tgcheat serve`.

    Its lifespan initializes and starts `application` (which needs no Updater) and stops it at
    shutdown. Closing Redis is left to whoever opened it.

    A handler's exception answers 500 so that Telegram re-delivers the update, unless one of the
    bot's own error handlers (registered before this call) raises `ApplicationHandlerStop`,
    which says the error is handled. Logging the error is done here either way.
    """
    secret = config.webhook_secret
    if not secret:
        raise ValueError("create_web_app needs a Config with webhook_secret (WEBHOOK_SECRET)")
    application.add_error_handler(_report_error_to_request)
    # tgcheat's Application takes button presses straight from the JSON (CheatApplication);
    # any other Application gets every update through python-telegram-bot.
    handle_tap: Callable[[Tap], Awaitable[None]] | None = getattr(application, "handle_tap", None)
    webhook = Webhook(application, secret.encode(), handle_tap, FailedDeliveries(redis_client))

    async def health(request: Request) -> Response:
        try:
            await asyncio.wait_for(redis_client.ping(), _HEALTH_TIMEOUT_S)
        except Exception as exc:
            _LOGGER.warning("Health check: Redis is down: %s", exc)
            return JSONResponse({"ok": False, "redis": "down"}, status_code=503)
        return JSONResponse({"ok": True, "redis": "up"})

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # Without an Updater, start() only runs the update queue's consumer; updates arrive
        # through receive_update.
        await application.initialize()
        await application.start()
        _LOGGER.info("Webhook listening on %s", config.webhook_path)
        try:
            yield
        finally:
            if mini_app is not None:
                await mini_app.listener.close()
            await application.stop()
            await application.shutdown()

    routes: list[BaseRoute] = [
        Route(config.webhook_path, receive_update, methods=["POST"]),
        Route(HEALTH_PATH, health, methods=["GET", "HEAD"]),
    ]
    # The Mini App (tgcheat.webapp): the page and its API, on the same host as the webhook.
    bot_routes: Routes | None = getattr(application, "routes", None)
    mini_app = None
    if bot_routes is not None:
        mini_app = MiniApp(bot_routes, redis_client, config.telegram_bot_token)
        routes += mini_app.routes_list()
    # Prometheus's scrape, behind its token (tgcheat.metrics_http).
    metrics = None
    if config.metrics_token is not None:
        metrics = MetricsEndpoint(redis_client, Keys(config.redis_prefix), config.metrics_token)
        routes.append(metrics.route())
    web = Starlette(routes=routes, lifespan=lifespan)
    web.state.metrics = metrics
    web.state.mini_app = mini_app
    web.state.webhook = webhook
    return web


@dataclass(frozen=True, slots=True)
class Webhook:
    """What the webhook endpoint needs (kept in the Starlette app's state)."""

    application: AnyApplication
    #: The secret token Telegram sends with every update.
    secret: bytes
    #: tgcheat's own entry for a button press read from the JSON, if the application has one.
    handle_tap: Callable[[Tap], Awaitable[None]] | None
    #: How many deliveries of each update have failed.
    failures: FailedDeliveries
    #: How long an update's body may take to arrive (s).
    body_timeout_s: float = BODY_TIMEOUT_S


async def receive_update(request: Request) -> Response:
    """POST from Telegram: one update, processed within the request."""
    webhook: Webhook = request.app.state.webhook
    given = request.headers.get(SECRET_HEADER, "").encode("utf-8", "replace")
    if not hmac.compare_digest(given, webhook.secret):
        _LOGGER.warning("Webhook call with a missing or wrong secret token, refused")
        return PlainTextResponse("forbidden", status_code=403)
    try:
        body = await read_body(request, MAX_UPDATE_BYTES, webhook.body_timeout_s)
    except BodyRefused as refused:
        _LOGGER.warning("Webhook call refused: its body was %s", refused.reason)
        return PlainTextResponse(f"body refused: {refused.reason}", status_code=refused.status)
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        _LOGGER.warning("Webhook call with a body that is not JSON, refused")
        return PlainTextResponse("bad request: body is not JSON", status_code=400)
    if not isinstance(data, dict):
        return PlainTextResponse("bad request: not an update", status_code=400)
    if (problem := update_problem(data)) is not None:
        _LOGGER.warning("Webhook call with an update the bot cannot read (%s), refused", problem)
        return PlainTextResponse(f"bad request: {problem}", status_code=400)
    if webhook.handle_tap is not None and (tap := tap_from_json(data)) is not None:
        with webhook_reply() as reply:
            response = await _handle(
                webhook.handle_tap(tap), tap.update_id, tap.chat_id, webhook.failures
            )
        if reply.call is not None and response.status_code == 200:
            BOT_API_REQUESTS.labels(str(reply.call["method"]), "webhook_reply").inc()
            return Response(orjson.dumps(reply.call), media_type="application/json")
        return response
    _drop_what_handlers_never_read(data)
    application = webhook.application
    try:
        update = telegram.Update.de_json(data, application.bot)
    except Exception:
        _LOGGER.warning("Webhook call with a body that is not an update", exc_info=True)
        return PlainTextResponse("bad request: not an update", status_code=400)
    chat = update.effective_chat
    return await _handle(
        application.process_update(update),
        update.update_id,
        chat.id if chat is not None else None,
        webhook.failures,
    )


async def _handle(
    processing: Awaitable[None], update_id: int, chat_id: int | None, failures: FailedDeliveries
) -> Response:
    """200 once the update is handled; 500 if it failed, so that Telegram delivers it again,
    unless it has failed too often already."""
    errors: list[BaseException] = []
    token = _REQUEST_ERRORS.set(errors)
    try:
        await processing
    except Exception as error:
        update_failed(_LOGGER, update_id, chat_id, error)
        return await _failed(update_id, error, failures)
    finally:
        _REQUEST_ERRORS.reset(token)
    if errors:
        # Already logged by _report_error_to_request.
        return await _failed(update_id, errors[0], failures)
    return Response(status_code=200)


async def _failed(update_id: int, cause: BaseException, failures: FailedDeliveries) -> Response:
    """A failed delivery: 500 (Telegram delivers the update again), or 200 once it has failed
    MAX_FAILED_DELIVERIES times. Uncounted (so 500) while Redis cannot count: an update that
    fails because Redis is away is not a poison update."""
    try:
        failed = await failures.count(update_id)
    except Exception as error:
        _LOGGER.warning("Failed deliveries of update %s not counted: %s", update_id, error)
        return PlainTextResponse("error", status_code=500)
    if failed < MAX_FAILED_DELIVERIES:
        return PlainTextResponse("error", status_code=500)
    _LOGGER.error(
        "Update %s failed on %d deliveries, the last with %s: %s; answered 200 so that "
        "Telegram stops delivering it",
        update_id,
        failed,
        type(cause).__name__,
        cause,
    )
    return Response(status_code=200)


# --- what an update must look like -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Object:
    """A JSON object the bot reads: fields it needs, and fields it reads when present."""

    needed: dict[str, Any]
    optional: dict[str, Any]


@dataclass(frozen=True, slots=True)
class _ListOf:
    item: Any


_USER = _Object({"id": int, "is_bot": bool, "first_name": str}, {"language_code": str})
_CHAT = _Object({"id": int, "type": str}, {"title": str, "is_forum": bool})
_MESSAGE = _Object(
    {"message_id": int, "date": int, "chat": _CHAT},
    {
        "from": _USER,
        "text": str,
        "new_chat_members": _ListOf(_USER),
        "left_chat_member": _USER,
        "migrate_to_chat_id": int,
        "migrate_from_chat_id": int,
        "message_thread_id": int,
        "is_topic_message": bool,
        "forum_topic_created": _Object({"name": str}, {}),
    },
)
_MESSAGE.optional["reply_to_message"] = _MESSAGE
_MEMBER = _Object({"status": str, "user": _USER}, {})
_MEMBER_UPDATED = _Object(
    {
        "chat": _CHAT,
        "from": _USER,
        "date": int,
        "old_chat_member": _MEMBER,
        "new_chat_member": _MEMBER,
    },
    {},
)
_UPDATE = _Object(
    {"update_id": int},
    {
        "message": _MESSAGE,
        "edited_message": _MESSAGE,
        "callback_query": _Object({"id": str, "from": _USER}, {"data": str, "message": _MESSAGE}),
        "my_chat_member": _MEMBER_UPDATED,
        "chat_member": _MEMBER_UPDATED,
        "inline_query": _Object({"id": str, "from": _USER, "query": str}, {}),
    },
)


def update_problem(data: dict[str, Any]) -> str | None:
    """What makes ``data`` an update the bot cannot read (a field it reads missing, or not of
    its JSON type), or None. Fields the bot never reads are not looked at."""
    # Every update is checked and nearly all are fine: the check builds no field's path, and
    # only an update that fails it is walked again to say where.
    if _fits(data, _UPDATE):
        return None
    return _problem(data, _UPDATE, "update")


def _fits(value: Any, shape: Any) -> bool:
    """Whether ``_problem`` finds nothing, without naming where."""
    if type(shape) is _Object:
        if type(value) is not dict:
            return False
        for name, field in shape.needed.items():
            if name not in value or not _fits(value[name], field):
                return False
        for name, field in shape.optional.items():
            present = value.get(name)
            if present is not None and not _fits(present, field):
                return False
        return True
    if type(shape) is _ListOf:
        return type(value) is list and all(_fits(item, shape.item) for item in value)
    # A JSON true is no number, though Python's bool is an int.
    return isinstance(value, shape) and (shape is bool or not isinstance(value, bool))


def _problem(value: Any, shape: Any, where: str) -> str | None:
    if isinstance(shape, _Object):
        if not isinstance(value, dict):
            return f"{where} is not an object"
        for name, field in shape.needed.items():
            if name not in value:
                return f"{where}.{name} is missing"
            if (problem := _problem(value[name], field, f"{where}.{name}")) is not None:
                return problem
        for name, field in shape.optional.items():
            present = value.get(name)
            if present is not None and (problem := _problem(present, field, f"{where}.{name}")):
                return problem
        return None
    if isinstance(shape, _ListOf):
        if not isinstance(value, list):
            return f"{where} is not a list"
        for index, item in enumerate(value):
            if (problem := _problem(item, shape.item, f"{where}[{index}]")) is not None:
                return problem
        return None
    # A JSON true is no number, though Python's bool is an int.
    fits = isinstance(value, shape) and (shape is bool or not isinstance(value, bool))
    return None if fits else f"{where} is not {_JSON_TYPES[shape]}"


_JSON_TYPES = {int: "an integer", str: "a string", bool: "true or false"}


def _drop_what_handlers_never_read(data: dict[str, Any]) -> None:
    """A button press carries its whole message, keyboard included; the bot reads only the
    message's chat and id, and building the keyboard's objects is most of the parsing cost."""
    query = data.get("callback_query")
    message = query.get("message") if isinstance(query, dict) else None
    if isinstance(message, dict):
        for key in ("reply_markup", "entities"):
            message.pop(key, None)


async def _report_error_to_request(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    errors = _REQUEST_ERRORS.get()
    error = context.error
    update_id = chat_id = None
    if isinstance(update, telegram.Update):
        update_id = update.update_id
        chat = update.effective_chat
        chat_id = chat.id if chat is not None else None
    update_failed(_LOGGER, update_id, chat_id, error)
    if errors is not None and error is not None:
        errors.append(error)


class GracefulServer(uvicorn.Server):
    """uvicorn's server, except that it does not re-raise SIGTERM/SIGINT once it has shut down
    gracefully: the program then closes what it opened (Redis) and exits with status 0."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        originals = {
            sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            yield
        finally:
            for sig, handler in originals.items():
                signal.signal(sig, handler)
