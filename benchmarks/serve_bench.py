"""One web process for the benchmarks: the real webhook endpoint (``create_web_app``) served by
uvicorn on 127.0.0.1, with the offline Bot API without its checks
(``tests.support.fake_telegram.FakeTelegram(checks=False)``) in place of Telegram.

    python benchmarks/serve_bench.py --port 8081 --redis-url redis://127.0.0.1:6390/0 \
        [--mode tgcheat|bare] [--limits off|production] \
        [--profile-kind play --profile-out play.prof]

``--mode tgcheat`` serves tgcheat's own Application (``build_application``); ``--mode bare``
serves a python-telegram-bot Application whose only handler answers callback queries, behind
the same ``create_web_app`` endpoint. tgcheat's limits are off unless ``--limits production``:
the per-group message budget (a token bucket in Redis: 20 messages a minute, bursts of 4; a
table edit over budget is deferred to the clock, which coalesces them) and python-telegram-bot's
AIORateLimiter (which, as tgcheat configures it, only waits and retries on RetryAfter). At
machine speed the budget holds every group to Telegram's pace, which a benchmark of the bot's
own cost must not measure; ``production`` is the bot as it runs.

Besides the webhook (``/telegram``, secret ``bench-secret``) and ``/healthz``, it serves
``GET /bench/stats`` and ``POST /bench/reset``: counters per kind of update, the kind being the
``X-Bench-Kind`` header the driver sends with each update. Counted per kind: updates, non-200
answers, Redis round trips (one per write to the socket: a pipeline or an EVALSHA is one) and
Redis commands by name (as the client sends them; commands inside a Lua script are not seen;
those that set up a new connection are counted apart),
Bot API requests by method and by chat (group, private, none), and callback answers that show a
text (pop-ups). What happens outside an update (the clock: deadlines, deferred table edits)
is counted under ``(outside updates)``. Also the process's CPU time and the wall time since the
last reset.

With ``--profile-kind KIND`` (or after ``POST /bench/profile/start?kind=KIND``) a cProfile
profiler runs only while an update of that kind is being processed (drive with one request at a
time), and its stats are written to ``--profile-out`` when the server stops (SIGTERM or Ctrl+C),
or to ``PATH`` by ``POST /bench/profile/stop?out=PATH``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import cProfile
import inspect
import json
import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import _paths  # noqa: F401 - the repository root on sys.path, for tests.support
import hiredis
import orjson
import redis.asyncio
import uvicorn
from redis.asyncio.connection import Connection
from telegram import Update
from telegram.ext import ApplicationBuilder, CallbackQueryHandler, ContextTypes

from tests.support.fake_telegram import FakeTelegram, chat_kind
from tgcheat.bot.app import build_application
from tgcheat.config import Config
from tgcheat.redis_connection import CLIENT_OPTIONS
from tgcheat.web import GracefulServer, create_web_app

TOKEN = "123456:BENCHMARK-token-for-offline-runs"
SECRET = "bench-secret"
WEBHOOK_URL = "https://bench.invalid/telegram"
KIND_HEADER = b"x-bench-kind"
OUTSIDE = "(outside updates)"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass
class Bucket:
    """What the updates of one kind cost."""

    updates: int = 0
    errors: int = 0
    redis_round_trips: int = 0
    redis_commands: Counter[str] = field(default_factory=Counter)
    #: Round trips that set up a new connection (not in the two above).
    redis_connect_round_trips: int = 0
    api: Counter[str] = field(default_factory=Counter)
    toasts: int = 0
    #: Process CPU time while updates of this kind were in hand: per update only when they
    #: come one at a time (otherwise others' work overlaps).
    cpu_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "updates": self.updates,
            "cpu_s": self.cpu_s,
            "errors": self.errors,
            "redis_round_trips": self.redis_round_trips,
            "redis_commands": dict(self.redis_commands),
            "redis_connect_round_trips": self.redis_connect_round_trips,
            "api": dict(self.api),
            "toasts": self.toasts,
        }


class Stats:
    def __init__(self) -> None:
        self.buckets: dict[str, Bucket] = {}
        self.settings: dict[str, Any] = {}
        self.reset()

    def reset(self) -> None:
        self.buckets.clear()
        self.cpu0 = time.process_time()
        self.wall0 = time.monotonic()

    def bucket(self, kind: str) -> Bucket:
        found = self.buckets.get(kind)
        if found is None:
            found = self.buckets[kind] = Bucket()
        return found

    def current(self) -> Bucket:
        return _BUCKET.get() or self.bucket(OUTSIDE)

    def record_api(self, method: str, chat: str, toast: bool) -> None:
        bucket = self.current()
        bucket.api[f"{method}:{chat}"] += 1
        bucket.toasts += toast

    def to_json(self) -> dict[str, Any]:
        return {
            "cpu_s": time.process_time() - self.cpu0,
            "wall_s": time.monotonic() - self.wall0,
            "kinds": {kind: bucket.to_json() for kind, bucket in self.buckets.items()},
            "settings": self.settings,
        }


STATS = Stats()
# The bucket of the update being processed in this request (inherited by the tasks it starts).
_BUCKET: contextvars.ContextVar[Bucket | None] = contextvars.ContextVar(
    "bench_bucket", default=None
)


class CountingConnection(Connection):
    """A redis-py connection that counts round trips and commands into the current bucket;
    those that set up a new connection (HELLO, CLIENT SETINFO, ...) apart: the pool opens
    connections when it grows, which a warmed-up process rarely does."""

    _connecting = False

    async def on_connect_check_health(self, check_health: bool = True) -> None:
        self._connecting = True
        try:
            await super().on_connect_check_health(check_health)
        finally:
            self._connecting = False

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        bucket = STATS.current()
        if self._connecting:
            bucket.redis_connect_round_trips += 1
        else:
            bucket.redis_round_trips += 1
            for name in _command_names(command):
                bucket.redis_commands[name] += 1
        await super().send_packed_command(command, check_health)


def _command_names(packed: bytes | list[bytes]) -> list[str]:
    """The names of the commands in what a connection sends, read by hiredis's RESP reader (the
    store packs its commands itself, so they are counted here rather than in pack_command)."""
    reader = hiredis.Reader()
    reader.feed(packed if isinstance(packed, bytes) else b"".join(map(bytes, packed)))
    names = []
    while (command := reader.gets()) is not False:
        names.append(command[0].decode().upper())
    return names


def _count_webhook_reply(body: bytes) -> None:
    """A Bot API call the answer to the webhook carries (Telegram makes it): counted as one
    the bot made, since it is one."""
    if not body.startswith(b'{"method"'):
        return
    call = orjson.loads(body)
    method = str(call.pop("method")).lower()
    toast = method == "answercallbackquery" and bool(call.get("text"))
    STATS.record_api(method, chat_kind(call.get("chat_id")), toast)


class BenchApp:
    """The web app, plus /bench/stats and /bench/reset, counting per kind of update."""

    def __init__(self, app: ASGIApp, profile_kind: str | None) -> None:
        self.app = app
        self.profile_kind = profile_kind
        self.profiler = cProfile.Profile() if profile_kind else None
        self._profiling = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"].startswith("/bench/"):
            await self._bench(scope, send)
            return
        kind = "other"
        for name, value in scope["headers"]:
            if name == KIND_HEADER:
                kind = value.decode()
                break
        bucket = STATS.bucket(kind)
        bucket.updates += 1

        async def send_counting(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] != 200:
                bucket.errors += 1
            elif message["type"] == "http.response.body":
                _count_webhook_reply(message.get("body", b""))
            await send(message)

        token = _BUCKET.set(bucket)
        cpu = time.process_time()
        profiler = self.profiler if kind == self.profile_kind else None
        if profiler is not None:
            self._profiling += 1
            if self._profiling == 1:
                profiler.enable()
        try:
            await self.app(scope, receive, send_counting)
        finally:
            if profiler is not None:
                self._profiling -= 1
                if self._profiling == 0:
                    profiler.disable()
            bucket.cpu_s += time.process_time() - cpu
            _BUCKET.reset(token)

    async def _bench(self, scope: Scope, send: Send) -> None:
        path = scope["path"]
        query = dict(parse_qsl(scope.get("query_string", b"").decode()))
        body = b"{}"
        if path == "/bench/reset":
            STATS.reset()
        elif path == "/bench/stats":
            body = json.dumps(STATS.to_json()).encode()
        elif path == "/bench/profile/start":
            self.profiler = cProfile.Profile()
            self.profile_kind = query.get("kind", "play")
        elif path == "/bench/profile/stop":
            if self.profiler is not None and query.get("out"):
                self.profiler.dump_stats(query["out"])
            self.profiler = None
            self.profile_kind = None
        else:
            await _respond(send, 404, b'{"error": "not found"}')
            return
        await _respond(send, 200, body)


async def _respond(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def build_bare(config: Config, request: FakeTelegram) -> Any:
    """A python-telegram-bot Application that only answers callback queries, built the way
    tgcheat builds its own (no Updater, concurrent updates)."""

    async def answer(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if update.callback_query is not None:
            await update.callback_query.answer()

    application = (
        ApplicationBuilder()
        .token(config.telegram_bot_token)
        .updater(None)
        .request(request)
        .get_updates_request(request)
        .concurrent_updates(True)
        .build()
    )
    application.add_handler(CallbackQueryHandler(answer))
    return application


async def serve(args: argparse.Namespace) -> None:
    pool = redis.asyncio.ConnectionPool.from_url(
        args.redis_url, connection_class=CountingConnection, **CLIENT_OPTIONS
    )
    client = redis.asyncio.Redis.from_pool(pool)
    config = Config(telegram_bot_token=TOKEN, webhook_url=WEBHOOK_URL, webhook_secret=SECRET)
    api = FakeTelegram(checks=False, record=STATS.record_api)
    if args.mode == "bare":
        application = build_bare(config, api)
    else:
        kwargs = {} if args.limits == "production" else _limits_off()
        STATS.settings["build_application"] = {k: str(v) for k, v in kwargs.items()}
        application = build_application(config, client, request=api, **kwargs)
    web = create_web_app(application, client, config)
    app = BenchApp(web, args.profile_kind)
    server = GracefulServer(
        uvicorn.Config(
            app,
            host="127.0.0.1",
            port=args.port,
            lifespan="on",
            loop="asyncio",
            log_config=None,
            access_log=False,
            server_header=False,
            timeout_graceful_shutdown=5,
        )
    )
    try:
        await server.serve()
    finally:
        await client.aclose()
        if app.profiler is not None and args.profile_out:
            app.profiler.dump_stats(args.profile_out)


def _limits_off() -> dict[str, Any]:
    """The keyword arguments of ``build_application`` that turn its limits off, where it has
    them: the per-group message budget (which defers table edits once a game at machine speed
    has spent its burst), the bot-wide send budget, and python-telegram-bot's AIORateLimiter
    (only RetryAfter retries, which the offline Bot API never asks for)."""
    params = inspect.signature(build_application).parameters
    kwargs: dict[str, Any] = {}
    if "throttle" in params:
        kwargs["throttle"] = False
    if "group_messages_per_minute" in params:
        kwargs["group_messages_per_minute"] = 10**9
    if "send_rate" in params:
        # The bot-wide send budget (30 messages a second) holds most of a machine-speed
        # run's messages for the clock: the run would measure the clock, not the updates.
        kwargs["send_rate"] = 0
    return kwargs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--mode", choices=("tgcheat", "bare"), default="tgcheat")
    parser.add_argument(
        "--limits",
        choices=("off", "production"),
        default="off",
        help="tgcheat's rate limits: off (default, to measure the bot) or as in production",
    )
    parser.add_argument("--profile-kind", default=None, help="profile updates of this kind")
    parser.add_argument("--profile-out", default=None, help="where to write the cProfile stats")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=os.environ.get("BENCH_LOG_LEVEL", "WARNING"),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    asyncio.run(serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
