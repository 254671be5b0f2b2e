"""The command line, run as `python -m tgcheat ...`, and the Redis its commands open.

Start-up failures must be one line on stderr and exit status 2. The commands themselves run
against a fake Bot API server on localhost (TELEGRAM_API_BASE_URL) with a stand-in for
`tgcheat.bot.app`, so that they test this layer alone; the same runs with the real bot module
are skipped until it exists.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar, cast
from urllib.parse import parse_qsl

import httpx
import pytest
import redis as sync_redis
import redis.asyncio as aioredis

from tests.support.fake_telegram import check_request
from tgcheat.config import Config
from tgcheat.redis_connection import (
    AOF_DIRNAME,
    AOF_FILENAME,
    DB_FILENAME,
    EmbeddedRedis,
    RedisStartError,
    open_redis,
)

TOKEN = "123456:TEST_token-for_the_fake_Bot_API"
SECRET = "webhook_secret-1"
# Every setting a test may set: removed from the environment the program inherits.
SETTINGS = (
    "TELEGRAM_BOT_TOKEN",
    "REDIS_URL",
    "WEBHOOK_URL",
    "WEBHOOK_SECRET",
    "PORT",
    "TELEGRAM_API_BASE_URL",
    "TGCHEAT_DATA_DIR",
    "TGCHEAT_REDIS_PREFIX",
)
TIMEOUT_S = 30
T = TypeVar("T")

HAVE_BOT_APP = importlib.util.find_spec("tgcheat.bot.app") is not None
needs_bot_app = pytest.mark.skipif(not HAVE_BOT_APP, reason="tgcheat.bot.app does not exist yet")

# A stand-in for tgcheat.bot.app with the same interface: every update increments a counter in
# Redis, so a test can see that it went through the whole way.
FAKE_BOT_APP = """
from telegram import Update
from telegram.ext import ApplicationBuilder, TypeHandler

ALLOWED_UPDATES = ["message", "callback_query", "my_chat_member", "inline_query"]


def build_application(config, redis, *, request=None):
    builder = (
        ApplicationBuilder()
        .token(config.telegram_bot_token)
        .base_url(config.base_url)
        .base_file_url(config.base_file_url)
    )
    application = builder.build()

    async def count(update, context):
        await redis.incr(b"fake:updates")

    application.add_handler(TypeHandler(Update, count))
    return application


async def register_commands(bot):
    await bot.set_my_commands([("new", "start a game")])


def retry_failed_updates(application):
    return None
"""

LAUNCH_WITH_FAKE_BOT = (
    "import sys, fake_bot_app; sys.modules['tgcheat.bot.app'] = fake_bot_app; "
    "from tgcheat.__main__ import main; sys.exit(main(sys.argv[1:]))"
)


# --- running the program ------------------------------------------------------------------


def program_env(tmp_path: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SETTINGS}
    # The fake Bot API is on localhost: no proxy may stand in between.
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        env.pop(proxy, None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
    env.update(settings)
    return env


def command(*args: str, fake_bot: bool) -> list[str]:
    if fake_bot:
        return [sys.executable, "-c", LAUNCH_WITH_FAKE_BOT, *args]
    return [sys.executable, "-m", "tgcheat", *args]


def run(
    tmp_path: Path, *args: str, fake_bot: bool = False, **settings: str
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "fake_bot_app.py").write_text(FAKE_BOT_APP)
    return subprocess.run(
        command(*args, fake_bot=fake_bot),
        env=program_env(tmp_path, **settings),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


def start(tmp_path: Path, *args: str, fake_bot: bool, **settings: str) -> subprocess.Popen[str]:
    (tmp_path / "fake_bot_app.py").write_text(FAKE_BOT_APP)
    return subprocess.Popen(
        command(*args, fake_bot=fake_bot),
        env=program_env(tmp_path, **settings),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "stderr.log").open("w"),
        text=True,
    )


def stop(process: subprocess.Popen[str], sig: signal.Signals, tmp_path: Path) -> int:
    """Send `sig` and wait for the exit status; the log is shown if the test fails."""
    process.send_signal(sig)
    try:
        return process.wait(TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail(f"did not stop on {sig.name}:\n{log(tmp_path)}")


def log(tmp_path: Path) -> str:
    path = tmp_path / "stderr.log"
    return path.read_text() if path.exists() else ""


def assert_one_line_error(result: subprocess.CompletedProcess[str], *words: str) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("tgcheat: ")
    for word in words:
        assert word in lines[0]
    return lines[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def webhook_settings(port: int, api: FakeBotApi | None = None) -> dict[str, str]:
    settings = {
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "WEBHOOK_URL": f"https://cheat.example.com:8443/hook/{port}",
        "WEBHOOK_SECRET": SECRET,
        "PORT": str(port),
    }
    if api is not None:
        settings["TELEGRAM_API_BASE_URL"] = api.base_url
        # A local Bot API server may call a plain http webhook on any port.
        settings["WEBHOOK_URL"] = f"http://127.0.0.1:{port}/hook"
    return settings


# --- a fake Bot API server --------------------------------------------------------------------


class FakeBotApi:
    """Answers the Bot API methods the commands use and records every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.updates: list[dict[str, Any]] = []
        self.webhook_url = "https://old.example.com/hook"
        self.lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode()
                if self.headers.get("Content-Type", "").startswith("application/json"):
                    params = json.loads(body or "{}")
                else:
                    params = dict(parse_qsl(body))
                status, answer = api.answer(self.path, params)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/bot"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer(self, path: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        prefix, _, method = path.rpartition("/")
        if prefix != f"/bot{TOKEN}":
            return 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
        with self.lock:
            self.calls.append((method, params))
            if method == "getMe":
                result: Any = {
                    "id": 123456,
                    "is_bot": True,
                    "first_name": "Cheat",
                    "username": "cheat_test_bot",
                }
            elif method == "getWebhookInfo":
                result = {
                    "url": self.webhook_url,
                    "has_custom_certificate": False,
                    "pending_update_count": 0,
                }
            elif method == "deleteWebhook":
                self.webhook_url = ""
                result = True
            elif method == "getUpdates":
                result, self.updates = self.updates, []
            elif method in ("sendMessage", "editMessageText"):
                result = {
                    "message_id": 1,
                    "date": 1_700_000_000,
                    "chat": {"id": int(params.get("chat_id", 1)), "type": "private"},
                    "text": str(params.get("text", "")),
                }
            else:
                result = True
        if method == "getUpdates" and not result:
            time.sleep(0.05)  # a long poll that found nothing, shortened
        return 200, {"ok": True, "result": result}

    def methods(self) -> list[str]:
        with self.lock:
            return [method for method, _ in self.calls]

    def params(self, method: str) -> dict[str, Any]:
        with self.lock:
            return next(p for m, p in self.calls if m == method)


@pytest.fixture
def api() -> Iterator[FakeBotApi]:
    fake = FakeBotApi()
    fake.thread.start()
    try:
        yield fake
    finally:
        fake.server.shutdown()
        fake.server.server_close()


def message_update(update_id: int) -> dict[str, Any]:
    return {
        "update_id": update_id,
        "message": {
            "message_id": 10,
            "date": 1_700_000_000,
            "chat": {"id": 7, "type": "private", "first_name": "Ann"},
            "from": {"id": 7, "is_bot": False, "first_name": "Ann"},
            "text": "hello",
        },
    }


def wait_until_healthy(process: subprocess.Popen[str], port: int, tmp_path: Path) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited with {process.returncode}:\n{log(tmp_path)}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    process.kill()
    pytest.fail(f"the server did not become healthy:\n{log(tmp_path)}")


def post_update(port: int, update: dict[str, Any], secret: str) -> httpx.Response:
    return httpx.post(
        f"http://127.0.0.1:{port}/hook",
        json=update,
        headers={"X-Telegram-Bot-Api-Secret-Token": secret},
        timeout=10,
    )


# --- start-up errors: one line, status 2 --------------------------------------------------


@pytest.mark.parametrize("mode", ["serve", "set-webhook", "poll"])
def test_missing_token(tmp_path: Path, mode: str) -> None:
    line = assert_one_line_error(run(tmp_path, mode), "TELEGRAM_BOT_TOKEN")
    assert "@BotFather" in line


@pytest.mark.parametrize("port", ["http", "0", "70000"])
def test_bad_port(tmp_path: Path, port: str) -> None:
    result = run(tmp_path, "serve", **{**webhook_settings(8080), "PORT": port})
    assert_one_line_error(result, "PORT", port)


@pytest.mark.parametrize("mode", ["serve", "set-webhook"])
@pytest.mark.parametrize("missing", ["WEBHOOK_URL", "WEBHOOK_SECRET"])
def test_webhook_settings_required(tmp_path: Path, mode: str, missing: str) -> None:
    settings = webhook_settings(8080)
    del settings[missing]
    assert_one_line_error(run(tmp_path, mode, **settings), missing)


@pytest.mark.parametrize("mode", ["serve", "poll"])
def test_bad_redis_prefix(tmp_path: Path, mode: str) -> None:
    result = run(tmp_path, mode, **webhook_settings(8080), TGCHEAT_REDIS_PREFIX="two words")
    assert_one_line_error(result, "TGCHEAT_REDIS_PREFIX", "two words")


def test_poll_needs_no_webhook_settings_but_checks_them(tmp_path: Path) -> None:
    result = run(tmp_path, "poll", TELEGRAM_BOT_TOKEN=TOKEN, WEBHOOK_SECRET="no spaces allowed")
    assert_one_line_error(result, "WEBHOOK_SECRET")


@pytest.mark.parametrize("mode", ["serve", "poll"])
def test_unreachable_redis(tmp_path: Path, mode: str) -> None:
    redis_url = f"redis://:hunter2@127.0.0.1:{free_port()}/0"
    result = run(tmp_path, mode, **webhook_settings(free_port()), REDIS_URL=redis_url)
    line = assert_one_line_error(result, "Redis", "127.0.0.1")
    assert "hunter2" not in line


def test_busy_port(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("0.0.0.0", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run(tmp_path, "serve", **webhook_settings(port))
    assert_one_line_error(result, "PORT", str(port))


def test_help_and_usage(tmp_path: Path) -> None:
    result = run(tmp_path, "--help")
    assert result.returncode == 0
    for mode in ("serve", "set-webhook", "poll"):
        assert mode in result.stdout
    result = run(tmp_path)
    assert result.returncode == 2 and "usage:" in result.stderr


def test_refused_token(tmp_path: Path, api: FakeBotApi) -> None:
    settings = {**webhook_settings(8080, api), "TELEGRAM_BOT_TOKEN": "999:refused_token"}
    result = run(tmp_path, "set-webhook", fake_bot=True, **settings)
    line = assert_one_line_error(result, "TELEGRAM_BOT_TOKEN")
    assert "refused_token" not in line


def test_unreachable_bot_api(tmp_path: Path) -> None:
    settings = {
        **webhook_settings(8080),
        "TELEGRAM_API_BASE_URL": f"http://127.0.0.1:{free_port()}/bot",
    }
    result = run(tmp_path, "set-webhook", fake_bot=True, **settings)
    assert_one_line_error(result, "Telegram Bot API")


# --- the commands, against the fake Bot API -------------------------------------------------


def check_set_webhook(tmp_path: Path, api: FakeBotApi, *, fake_bot: bool) -> None:
    settings = webhook_settings(5000, api)
    result = run(tmp_path, "set-webhook", fake_bot=fake_bot, **settings)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines() == [
        f"Webhook of @cheat_test_bot set to {settings['WEBHOOK_URL']}; bot commands registered"
    ]
    params = api.params("setWebhook")
    assert params["url"] == settings["WEBHOOK_URL"]
    assert params["secret_token"] == SECRET
    assert params["drop_pending_updates"] in (False, "False", "false")
    allowed = json.loads(params["allowed_updates"])
    assert isinstance(allowed, list) and "message" in allowed
    assert "setMyCommands" in api.methods()
    assert api.methods().index("setWebhook") < api.methods().index("setMyCommands")


def test_set_webhook(tmp_path: Path, api: FakeBotApi) -> None:
    check_set_webhook(tmp_path, api, fake_bot=True)
    assert json.loads(api.params("setWebhook")["allowed_updates"]) == [
        "message",
        "callback_query",
        "my_chat_member",
        "inline_query",
    ]


def test_set_webhook_sets_the_menu_button_to_the_mini_app(tmp_path: Path, api: FakeBotApi) -> None:
    """With an https WEBHOOK_URL (the Mini App is served), the menu button of the private
    chats opens the Mini App: a request Telegram takes (checked against api.json)."""
    settings = {**webhook_settings(5000, api), "WEBHOOK_URL": "https://cheat.example.com/hook"}
    result = run(tmp_path, "set-webhook", fake_bot=True, **settings)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("menu button opens https://cheat.example.com/app")
    params = dict(api.params("setChatMenuButton"))
    button = params["menu_button"]
    params["menu_button"] = button = json.loads(button) if isinstance(button, str) else button
    assert check_request("setChatMenuButton", params) == []
    assert "chat_id" not in params, "the default button, of every private chat"
    assert button == {
        "type": "web_app",
        "text": "🃏 Open cards",
        "web_app": {"url": "https://cheat.example.com/app"},
    }


@needs_bot_app
def test_set_webhook_with_the_real_bot(tmp_path: Path, api: FakeBotApi) -> None:
    check_set_webhook(tmp_path, api, fake_bot=False)
    asked = json.loads(api.params("setWebhook")["allowed_updates"])
    assert sorted(asked) == sorted(set(asked)), asked
    assert set(asked) == _update_kinds_handled_by_the_real_bot()


def _update_kinds_handled_by_the_real_bot() -> set[str]:
    """The kinds of update (``Update``'s fields, as ``allowed_updates`` names them) that the
    real application has a handler for: the bot must ask Telegram for these and no others (an
    update asked for and not handled is a webhook request for nothing)."""
    from telegram.ext import (
        BaseHandler,
        CallbackQueryHandler,
        ChatMemberHandler,
        CommandHandler,
        InlineQueryHandler,
        MessageHandler,
    )

    from tgcheat.bot.app import build_application

    config = Config(telegram_bot_token="123:abc", redis_url="redis://localhost:1/0")
    application = build_application(config, cast(Any, aioredis.Redis()), send_rate=0)
    member_kinds = {
        ChatMemberHandler.MY_CHAT_MEMBER: {"my_chat_member"},
        ChatMemberHandler.CHAT_MEMBER: {"chat_member"},
        ChatMemberHandler.ANY_CHAT_MEMBER: {"my_chat_member", "chat_member"},
    }
    handled: set[str] = set()
    handlers: list[BaseHandler[Any, Any, Any]] = [
        handler for group in application.handlers.values() for handler in group
    ]
    assert handlers
    for handler in handlers:
        if isinstance(handler, CallbackQueryHandler):
            handled.add("callback_query")
        elif isinstance(handler, InlineQueryHandler):
            # Cards shared through inline mode (@bot in any chat, a share button).
            handled.add("inline_query")
        elif isinstance(handler, ChatMemberHandler):
            handled |= member_kinds[handler.chat_member_types]
        elif isinstance(handler, (CommandHandler, MessageHandler)):
            # Commands and service messages in groups and private chats; edited messages are
            # not acted on (a command edited after it was sent is not a new request).
            handled.add("message")
        else:
            pytest.fail(f"a handler of unknown update kinds: {handler!r}")
    return handled


def test_serve_processes_updates_and_stops_on_sigterm(
    tmp_path: Path, api: FakeBotApi, redis_url: str
) -> None:
    _flush(redis_url)
    port = free_port()
    settings = {**webhook_settings(port, api), "REDIS_URL": redis_url}
    process = start(tmp_path, "serve", fake_bot=True, **settings)
    try:
        wait_until_healthy(process, port, tmp_path)
        assert post_update(port, message_update(1), "wrong").status_code == 403
        assert post_update(port, message_update(2), SECRET).status_code == 200
        assert post_update(port, message_update(3), SECRET).status_code == 200
    finally:
        status = stop(process, signal.SIGTERM, tmp_path)
    assert status == 0, log(tmp_path)
    assert "Traceback" not in log(tmp_path)
    assert TOKEN not in log(tmp_path)
    assert "setWebhook" not in api.methods()  # the release step's job, not every start's
    counter = _redis_get(redis_url, b"fake:updates")
    assert counter == b"2"


def test_serve_with_the_embedded_redis_keeps_its_data(tmp_path: Path, api: FakeBotApi) -> None:
    port = free_port()
    data_dir = tmp_path / "data"
    settings = {**webhook_settings(port, api), "TGCHEAT_DATA_DIR": str(data_dir)}
    process = start(tmp_path, "serve", fake_bot=True, **settings)
    try:
        wait_until_healthy(process, port, tmp_path)
        assert post_update(port, message_update(1), SECRET).status_code == 200
    finally:
        status = stop(process, signal.SIGTERM, tmp_path)
    assert status == 0, log(tmp_path)
    assert "Using an embedded Redis" in log(tmp_path)

    # The server stopped with the program (else its lock would refuse a new one) and saved.
    async def read() -> bytes | None:
        client, close = await open_redis(Config(telegram_bot_token=TOKEN, data_dir=str(data_dir)))
        try:
            return await client.get(b"fake:updates")
        finally:
            await close()

    assert _run_async(read()) == b"1"


@needs_bot_app
def test_serve_with_the_real_bot(tmp_path: Path, api: FakeBotApi, redis_url: str) -> None:
    port = free_port()
    settings = {**webhook_settings(port, api), "REDIS_URL": redis_url}
    process = start(tmp_path, "serve", fake_bot=False, **settings)
    try:
        wait_until_healthy(process, port, tmp_path)
        assert post_update(port, message_update(1), "wrong").status_code == 403
    finally:
        status = stop(process, signal.SIGTERM, tmp_path)
    assert status == 0, log(tmp_path)


@needs_bot_app
def test_serve_answers_metrics_behind_the_token_and_on_its_own_port_and_logs_json(
    tmp_path: Path, api: FakeBotApi, redis_url: str
) -> None:
    port, metrics_port = free_port(), free_port()
    token = "metrics_token-of-the-cli-test"
    settings = {
        **webhook_settings(port, api),
        "REDIS_URL": redis_url,
        "METRICS_TOKEN": token,
        "METRICS_PORT": str(metrics_port),
        "LOG_FORMAT": "json",
    }
    process = start(tmp_path, "serve", fake_bot=False, **settings)
    try:
        wait_until_healthy(process, port, tmp_path)
        metrics = f"http://127.0.0.1:{port}/metrics"
        assert httpx.get(metrics, timeout=10).status_code == 401
        answer = httpx.get(metrics, headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert answer.status_code == 200 and "tgcheat_updates_total" in answer.text
        own = f"http://127.0.0.1:{metrics_port}/metrics"
        assert httpx.get(own, timeout=10).status_code == 401
        answer = httpx.get(own, headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert answer.status_code == 200 and "tgcheat_places_in_progress" in answer.text
    finally:
        status = stop(process, signal.SIGTERM, tmp_path)
    assert status == 0, log(tmp_path)
    entries = [json.loads(line) for line in log(tmp_path).splitlines() if line.strip()]
    assert any(e["message"].startswith("Serving on") for e in entries)
    assert all({"time", "level", "logger", "message"} <= set(e) for e in entries)


@needs_bot_app
def test_poll_serves_metrics_on_its_port_only_when_asked(
    tmp_path: Path, api: FakeBotApi, redis_url: str
) -> None:
    metrics_port = free_port()
    settings = {
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "TELEGRAM_API_BASE_URL": api.base_url,
        "METRICS_PORT": str(metrics_port),
    }
    process = start(tmp_path, "poll", fake_bot=False, REDIS_URL=redis_url, **settings)
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            try:
                answer = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=1)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"no metrics port:\n{log(tmp_path)}")
                time.sleep(0.1)
        assert answer.status_code == 200 and "tgcheat_bot_api_requests_total" in answer.text
    finally:
        status = stop(process, signal.SIGINT, tmp_path)
    assert status == 0, log(tmp_path)


def test_poll_removes_the_webhook_polls_and_stops_on_ctrl_c(
    tmp_path: Path, api: FakeBotApi, redis_url: str
) -> None:
    _flush(redis_url)
    api.updates = [message_update(1), message_update(2)]
    settings = {"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE_URL": api.base_url}
    process = start(tmp_path, "poll", fake_bot=True, REDIS_URL=redis_url, **settings)
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while _redis_get(redis_url, b"fake:updates") != b"2":
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the updates were not processed:\n{log(tmp_path)}")
            time.sleep(0.1)
    finally:
        status = stop(process, signal.SIGINT, tmp_path)
    assert status == 0, log(tmp_path)
    assert "Traceback" not in log(tmp_path)
    assert "Removing the webhook https://old.example.com/hook" in log(tmp_path)
    methods = api.methods()
    assert methods.index("deleteWebhook") < methods.index("getUpdates")
    allowed = json.loads(api.params("getUpdates")["allowed_updates"])
    assert allowed == ["message", "callback_query", "my_chat_member", "inline_query"]


@needs_bot_app
def test_poll_with_the_real_bot(tmp_path: Path, api: FakeBotApi, redis_url: str) -> None:
    settings = {"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE_URL": api.base_url}
    process = start(tmp_path, "poll", fake_bot=False, REDIS_URL=redis_url, **settings)
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while "getUpdates" not in api.methods():
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"did not start polling:\n{log(tmp_path)}")
            time.sleep(0.1)
    finally:
        status = stop(process, signal.SIGINT, tmp_path)
    assert status == 0, log(tmp_path)


def _flush(url: str) -> None:
    client = sync_redis.Redis.from_url(url)
    try:
        client.flushdb()
    finally:
        client.close()


def _redis_get(url: str, key: bytes) -> bytes | None:
    client = sync_redis.Redis.from_url(url)
    try:
        return cast("bytes | None", client.get(key))
    finally:
        client.close()


def _run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    # These tests are synchronous (they wait on processes) and the session's event loop is not
    # theirs to run: a loop in a thread of its own runs the coroutine.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


# --- the Redis the commands open ------------------------------------------------------------


async def test_redis_url_is_used(redis_url: str, redis: aioredis.Redis) -> None:
    client, close = await open_redis(Config(telegram_bot_token=TOKEN, redis_url=redis_url))
    try:
        await client.set(b"k", b"v")
        assert await redis.get(b"k") == b"v"
    finally:
        await close()


async def test_embedded_redis_keeps_data_across_a_restart(tmp_path: Path) -> None:
    config = Config(telegram_bot_token=TOKEN, data_dir=str(tmp_path / "data"))
    client, close = await open_redis(config)
    try:
        await client.set(b"game:1", b"\x00state\xff")
        await client.zadd(b"deadlines", {b"game:1": 1700000000})
    finally:
        await close()
    assert (tmp_path / "data" / DB_FILENAME).exists()
    assert (tmp_path / "data" / AOF_DIRNAME / f"{AOF_FILENAME}.manifest").exists()

    client, close = await open_redis(config)
    try:
        assert await client.get(b"game:1") == b"\x00state\xff"
        assert await client.zrange(b"deadlines", 0, -1, withscores=True) == [
            (b"game:1", 1700000000.0)
        ]
    finally:
        await close()


async def test_embedded_redis_takes_over_a_redis_6_data_directory(tmp_path: Path) -> None:
    # What the embedded Redis 6 of earlier versions left: its append-only file (a plain log of
    # commands) beside the snapshot, in the data directory itself.
    (tmp_path / AOF_FILENAME).write_bytes(
        b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$6\r\ngame:1\r\n$5\r\nstate\r\n"
    )
    config = Config(telegram_bot_token=TOKEN, data_dir=str(tmp_path))
    client, close = await open_redis(config)
    try:
        assert await client.get(b"game:1") == b"state"
        await client.set(b"game:2", b"later")
    finally:
        await close()
    # Moved into the server's append-only directory, and read from there from now on.
    assert not (tmp_path / AOF_FILENAME).exists()
    client, close = await open_redis(config)
    try:
        assert await client.mget(b"game:1", b"game:2") == [b"state", b"later"]
    finally:
        await close()


async def test_embedded_redis_keeps_data_when_its_server_is_killed(tmp_path: Path) -> None:
    server = await EmbeddedRedis.start(str(tmp_path))
    client = aioredis.Redis(unix_socket_path=server.socket_path)
    try:
        await client.set(b"game:1", b"state")
        os.kill(server.pid, signal.SIGKILL)  # no chance to save: the append-only file has it
    finally:
        await client.aclose()
        await server.stop()

    server = await EmbeddedRedis.start(str(tmp_path))
    client = aioredis.Redis(unix_socket_path=server.socket_path)
    try:
        assert await client.get(b"game:1") == b"state"
    finally:
        await client.aclose()
        await server.stop()


async def test_embedded_redis_refuses_a_second_server_on_the_same_data(tmp_path: Path) -> None:
    config = Config(telegram_bot_token=TOKEN, data_dir=str(tmp_path))
    client, close = await open_redis(config)
    try:
        with pytest.raises(RedisStartError, match=r"TGCHEAT_DATA_DIR .* is in use") as info:
            await open_redis(config)
        assert "\n" not in str(info.value)
        assert await client.ping()  # the first one is unharmed
    finally:
        await close()


async def test_embedded_redis_stop_is_idempotent_and_cleans_up(tmp_path: Path) -> None:
    server = await EmbeddedRedis.start(str(tmp_path / "new" / "dir"))
    socket_path = server.socket_path
    assert os.path.exists(socket_path) and server.running
    await server.stop()
    await server.stop()
    assert not server.running
    assert not os.path.exists(os.path.dirname(socket_path))


async def test_embedded_redis_data_dir_not_creatable(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    config = Config(telegram_bot_token=TOKEN, data_dir=str(tmp_path / "file" / "data"))
    with pytest.raises(RedisStartError, match="TGCHEAT_DATA_DIR"):
        await open_redis(config)
