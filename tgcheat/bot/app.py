"""The python-telegram-bot Application: handlers wired to the store, and the command menu."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from redis.asyncio import Redis
from telegram import Bot, BotCommand, BotCommandScopeAllGroupChats, BotCommandScopeAllPrivateChats
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
)
from telegram.request import BaseRequest

from tgcheat.bot.handlers import Handlers
from tgcheat.bot.publish import Publisher
from tgcheat.bot.sender import Sender
from tgcheat.bot.timers import Timers
from tgcheat.i18n import N_, available_languages, load_all, translator
from tgcheat.store.games import GameStore

if TYPE_CHECKING:
    from tgcheat.config import Config

#: The updates the bot asks Telegram for (setWebhook / getUpdates).
ALLOWED_UPDATES: list[str] = ["message", "callback_query", "my_chat_member"]

GROUP_COMMANDS = (
    ("new", N_("Open a new game of Cheat")),
    ("join", N_("Join the open game")),
    ("leave", N_("Leave the game")),
    ("stop", N_("End the game (its creator or an admin)")),
    ("settings", N_("Choose the rules of this group's games")),
    ("rules", N_("The rules in force")),
    ("help", N_("How to play")),
)
PRIVATE_COMMANDS = (("help", N_("How to play")), ("rules", N_("The rules in force")))


class CheatApplication(Application):  # type: ignore[type-arg]
    """An Application that runs the game clock while it runs (webhook or polling alike)."""

    timers: Timers | None = None
    _clock_task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await super().start()
        if self.timers is not None:
            self._clock_task = asyncio.create_task(self.timers.run(), name="tgcheat-clock")

    async def stop(self) -> None:
        if self._clock_task is not None:
            self._clock_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._clock_task
            self._clock_task = None
        await super().stop()


def build_application(
    config: Config, redis: Redis, *, request: BaseRequest | None = None
) -> Application:  # type: ignore[type-arg]
    load_all()
    builder = (
        ApplicationBuilder()
        .token(config.telegram_bot_token)
        .updater(None)
        .application_class(CheatApplication)
        .base_url(config.base_url)
        .base_file_url(config.base_file_url)
    )
    if request is not None:
        builder = builder.request(request).get_updates_request(request)
    # Updates of different chats are independent; within a chat the store serialises changes.
    application = builder.concurrent_updates(True).build()
    store = GameStore(redis)
    sender = Sender(application.bot)
    publisher = Publisher(store, sender)
    handlers = Handlers(store, sender, publisher)
    assert isinstance(application, CheatApplication)
    application.timers = Timers(store, publisher)
    application.add_handler(CommandHandler("new", handlers.new))
    application.add_handler(CommandHandler("start", handlers.start))
    application.add_handler(CommandHandler("help", handlers.help))
    application.add_handler(CommandHandler("join", handlers.join_command))
    application.add_handler(CommandHandler("leave", handlers.leave_command))
    application.add_handler(CommandHandler("stop", handlers.stop))
    application.add_handler(CommandHandler("settings", handlers.settings))
    application.add_handler(CommandHandler("rules", handlers.rules))
    application.add_handler(CallbackQueryHandler(handlers.button))
    return application


async def register_commands(bot: Bot) -> None:
    """The command menu, per scope and per language (the default list in English)."""
    for language in (None, *available_languages()):
        tr = translator(language)
        code = language if language is not None else ""
        for scope, commands in (
            (BotCommandScopeAllGroupChats(), GROUP_COMMANDS),
            (BotCommandScopeAllPrivateChats(), PRIVATE_COMMANDS),
        ):
            await bot.set_my_commands(
                [BotCommand(name, tr._(description)) for name, description in commands],
                scope=scope,
                language_code=code or None,
            )
