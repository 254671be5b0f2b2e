"""The command line: `tgcheat serve | set-webhook | poll`.

Each command is a function `(args) -> exit status` registered in `build_parser`; adding one is
an `add_parser` call and a `set_defaults(run=...)`. A wrong setting, an unreachable Redis or a
token that Telegram refuses prints one line `tgcheat: ...` to stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import logging
import re
import signal
import socket
import sys
from collections.abc import Callable, Sequence
from typing import Any, Protocol, cast

import redis.asyncio
import telegram
import telegram.error
import uvicorn
from telegram.ext import Application, Updater
from telegram.request import BaseRequest

from tgcheat import simulate
from tgcheat.config import Config, ConfigError, log_format_from_env
from tgcheat.i18n import translator
from tgcheat.logs import configure as configure_logging
from tgcheat.metrics_http import MetricsEndpoint, MetricsPortError, metrics_port
from tgcheat.redis_connection import RedisStartError, open_redis
from tgcheat.store.keys import Keys
from tgcheat.store.migration import migrate_keys
from tgcheat.web import GracefulServer, create_web_app

__all__ = ["build_parser", "main"]

_LOGGER = logging.getLogger("tgcheat")

_TOKEN_IN_TEXT = re.compile(r"[0-9]+:[A-Za-z0-9_-]{20,}")

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_STARTUP = 2  # a setting, Redis or the token: the operator must fix something
EXIT_INTERRUPTED = 130

# Seconds uvicorn lets requests in hand finish after SIGTERM; platforms allow about 30 before
# they kill the process.
GRACEFUL_SHUTDOWN_S = 10
# Connections uvicorn serves at once; beyond them it answers 503 at once. Above the Mini App's
# live streams (tgcheat.webapp.streams) and the webhook's connections together.
CONNECTIONS_AT_ONCE = 4_000

AnyApplication = Application[Any, Any, Any, Any, Any, Any]


class StartupError(Exception):
    """The program cannot start; the message is one line for the operator."""


class _BotModule(Protocol):
    """What `tgcheat.bot.app` provides."""

    ALLOWED_UPDATES: list[str]

    def build_application(
        self,
        config: Config,
        redis: redis.asyncio.Redis,
        *,
        request: BaseRequest | None = None,
    ) -> AnyApplication: ...

    async def register_commands(self, bot: telegram.Bot) -> None: ...

    def retry_failed_updates(self, application: AnyApplication) -> object: ...


def _bot_module() -> _BotModule:
    # Imported when a command runs, so that `--help` and the settings check work without it.
    return cast(_BotModule, importlib.import_module("tgcheat.bot.app"))


# --- serve ---------------------------------------------------------------------------------


def _run_serve(args: argparse.Namespace) -> int:
    config = Config.from_env(need_webhook=True)
    return asyncio.run(_serve(config))


async def _serve(config: Config) -> int:
    listener = _listen(config.port)
    try:
        redis_client, close_redis = await open_redis(config)
        try:
            application = _bot_module().build_application(config, redis_client)
            # Checks the token (getMe) before Telegram's requests can arrive; the lifespan's own
            # initialize() is then a no-op.
            await application.initialize()
            web_app = create_web_app(application, redis_client, config)
            server = GracefulServer(
                uvicorn.Config(
                    web_app,
                    lifespan="on",
                    log_config=None,
                    access_log=False,
                    server_header=False,
                    timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
                    limit_concurrency=CONNECTIONS_AT_ONCE,
                )
            )
            _LOGGER.info("Serving on 0.0.0.0:%d", config.port)
            async with _metrics_port(config, redis_client):
                await server.serve(sockets=[listener])
            if not server.started:
                raise StartupError("the web server did not start; see the log above")
        finally:
            await close_redis()
    finally:
        listener.close()
    _LOGGER.info("Stopped")
    return EXIT_OK


def _metrics_port(
    config: Config, redis_client: redis.asyncio.Redis
) -> contextlib.AbstractAsyncContextManager[None]:
    """/metrics on METRICS_PORT while the block runs, when it is set."""
    if config.metrics_port is None:
        return contextlib.nullcontext()
    endpoint = MetricsEndpoint(redis_client, Keys(config.redis_prefix), config.metrics_token)
    return metrics_port(endpoint, config.metrics_port)


def _listen(port: int) -> socket.socket:
    """The server's socket on 0.0.0.0:port, bound now so that a busy port is a clear error."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("0.0.0.0", port))
    except OSError as exc:
        sock.close()
        raise StartupError(f"cannot listen on PORT {port}: {exc.strerror or exc}") from exc
    return sock


# --- set-webhook ---------------------------------------------------------------------------


def _run_set_webhook(args: argparse.Namespace) -> int:
    config = Config.from_env(need_webhook=True)
    print(asyncio.run(_set_webhook(config)))
    return EXIT_OK


async def _set_webhook(config: Config) -> str:
    bot_module = _bot_module()
    assert config.webhook_url is not None and config.webhook_secret is not None
    bot = telegram.Bot(
        config.telegram_bot_token, base_url=config.base_url, base_file_url=config.base_file_url
    )
    async with bot:
        await bot.set_webhook(
            url=config.webhook_url,
            secret_token=config.webhook_secret,
            allowed_updates=bot_module.ALLOWED_UPDATES,
            drop_pending_updates=False,
        )
        await bot_module.register_commands(bot)
        if config.app_url is None:
            return (
                f"Webhook of @{bot.username} set to {config.webhook_url}; bot commands registered"
            )
        # The menu button of every private chat with the bot opens the Mini App on the
        # person's game (one text for all: Telegram keeps no language per default button).
        await bot.set_chat_menu_button(
            menu_button=telegram.MenuButtonWebApp(
                translator(None)._("🃏 Open cards"), telegram.WebAppInfo(config.app_url)
            )
        )
    return (
        f"Webhook of @{bot.username} set to {config.webhook_url}; bot commands registered; "
        f"menu button opens {config.app_url}"
    )


# --- poll ----------------------------------------------------------------------------------


def _run_migrate_keys(args: argparse.Namespace) -> int:
    config = Config.from_env(need_webhook=False)
    return asyncio.run(_migrate_keys(config))


async def _migrate_keys(config: Config) -> int:
    redis_client, close_redis = await open_redis(config, older_keys_ok=True)
    try:
        moved = await migrate_keys(redis_client, Keys(config.redis_prefix))
    finally:
        await close_redis()
    print(f"Moved {moved.keys} keys and {moved.clock_entries} clock entries to today's names.")
    for name in moved.left:
        print(f"Left {name}: its new name is taken (a game opened since the upgrade).")
    return EXIT_OK


def _run_poll(args: argparse.Namespace) -> int:
    config = Config.from_env(need_webhook=False)
    # One event loop for everything: the Redis client belongs to the loop that opened it, so
    # PTB's run_polling (which runs a loop of its own) is not used.
    return asyncio.run(_poll(config))


async def _poll(config: Config) -> int:
    redis_client, close_redis = await open_redis(config)
    try:
        bot_module = _bot_module()
        application = bot_module.build_application(config, redis_client)
        # Telegram does not deliver an update that polling fetched again: a failed one is
        # logged and handed to the handlers again, a few times.
        bot_module.retry_failed_updates(application)
        await application.initialize()
        try:
            bot = application.bot
            webhook = await bot.get_webhook_info()
            if webhook.url:
                _LOGGER.warning(
                    "Removing the webhook %s so that polling can work; "
                    "run `tgcheat set-webhook` to restore it",
                    webhook.url,
                )
            await bot.delete_webhook(drop_pending_updates=False)
            # The bot's builder may or may not give the application an Updater.
            updater = application.updater
            own_updater = updater is None
            if updater is None:
                updater = Updater(bot=bot, update_queue=application.update_queue)
                await updater.initialize()
            try:
                await application.start()
                await updater.start_polling(allowed_updates=bot_module.ALLOWED_UPDATES)
                _LOGGER.info("Polling as @%s; press Ctrl+C to stop", bot.username)
                async with _metrics_port(config, redis_client):
                    await _wait_for_stop_signal()
                _LOGGER.info("Stopping")
            finally:
                if updater.running:
                    await updater.stop()
                if application.running:
                    await application.stop()
                if own_updater:
                    await updater.shutdown()
        finally:
            await application.shutdown()
    finally:
        await close_redis()
    _LOGGER.info("Stopped")
    return EXIT_OK


async def _wait_for_stop_signal() -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    signals = (signal.SIGINT, signal.SIGTERM)
    for sig in signals:
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)


# --- the parser and main -------------------------------------------------------------------

Command = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tgcheat",
        description="A Telegram bot that runs the bluffing card game Cheat in group chats. "
        "Settings come from the environment (see docs/operating.md).",
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="how much to log (default: INFO)",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, run: Command, help: str) -> argparse.ArgumentParser:
        command = commands.add_parser(name, help=help, description=help)
        command.set_defaults(run=run)
        return command

    add(
        "serve",
        _run_serve,
        "serve Telegram's webhook and /healthz on $PORT (needs WEBHOOK_URL, WEBHOOK_SECRET)",
    )
    add(
        "set-webhook",
        _run_set_webhook,
        "register WEBHOOK_URL with Telegram and set the bot's command menu (a release step)",
    )
    add("poll", _run_poll, "run the bot with long polling, for a laptop (removes the webhook)")
    add(
        "migrate-keys",
        _run_migrate_keys,
        "move the games an older version stored to today's key names (once, with every bot "
        "process stopped; see docs/operating.md: Upgrading)",
    )
    simulate.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        configure_logging(args.log_level, log_format_from_env())
    except ConfigError as exc:
        return _fail(str(exc), EXIT_STARTUP)
    run = cast(Command, args.run)
    try:
        return run(args)
    except (ConfigError, RedisStartError, StartupError, MetricsPortError) as exc:
        return _fail(str(exc), EXIT_STARTUP)
    except telegram.error.InvalidToken:
        return _fail(
            "Telegram refused TELEGRAM_BOT_TOKEN: check it with @BotFather (/token)", EXIT_STARTUP
        )
    except telegram.error.NetworkError as exc:
        return _fail(f"cannot reach the Telegram Bot API: {_one_line(exc)}", EXIT_STARTUP)
    except telegram.error.TelegramError as exc:
        return _fail(f"Telegram answered: {_one_line(exc)}", EXIT_FAILURE)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _fail(message: str, status: int) -> int:
    print(f"tgcheat: {message}", file=sys.stderr)
    return status


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    # Some of python-telegram-bot's messages quote the token.
    return _TOKEN_IN_TEXT.sub("***", text)


if __name__ == "__main__":
    sys.exit(main())
