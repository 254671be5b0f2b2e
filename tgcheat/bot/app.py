"""The python-telegram-bot Application: handlers wired to the store, and the command menu."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from redis.asyncio import Redis
from telegram import Bot, BotCommand, BotCommandScopeAllGroupChats, BotCommandScopeAllPrivateChats
from telegram.ext import (
    Application,
    ApplicationBuilder,
    ApplicationHandlerStop,
    ContextTypes,
)
from telegram.request import BaseRequest

from tgcheat.bot.handlers import Routes, Shell
from tgcheat.bot.handlers.shell import Asker
from tgcheat.bot.publish import Publisher
from tgcheat.bot.sender import ChatFlooded, Sender
from tgcheat.bot.taps import Tap
from tgcheat.bot.timers import Timers
from tgcheat.i18n import N_, available_languages, load_all, translator
from tgcheat.store.games import GROUP_MESSAGES_PER_MINUTE, GameStore

if TYPE_CHECKING:
    from tgcheat.config import Config

log = logging.getLogger(__name__)

#: How long stopping waits for the clock to end after cancelling it, before cancelling again.
CLOCK_STOP_WAIT_S = 0.5

#: The updates the bot asks Telegram for (setWebhook / getUpdates).
ALLOWED_UPDATES: list[str] = ["message", "callback_query", "my_chat_member", "chat_member"]

GROUP_COMMANDS = (
    ("new", N_("Open a new game of Cheat")),
    ("join", N_("Join the open game")),
    ("leave", N_("Leave the game")),
    ("stop", N_("End the game (its creator or an admin)")),
    ("kick", N_("Remove a player (reply to them, or give their seat)")),
    ("settings", N_("Choose the rules of this group's games")),
    ("rules", N_("The rules in force")),
    ("language", N_("The language of this group's games (an admin)")),
    ("help", N_("How to play")),
)
PRIVATE_COMMANDS = (
    ("help", N_("How to play")),
    ("rules", N_("The rules in force")),
    ("language", N_("The language of your messages")),
)


class CheatApplication(Application):  # type: ignore[type-arg]
    """An Application that runs the game clock while it runs (webhook or polling alike)."""

    timers: Timers | None = None
    routes: Routes | None = None
    _clock_task: asyncio.Task[None] | None = None

    async def handle_tap(self, tap: Tap) -> None:
        """A button press read straight from the webhook's JSON (see `tgcheat.bot.taps`); an
        exception escapes to the caller, as a handler's does not in `process_update`. A flood
        wait met on the way is not a failure (``held_back``)."""
        assert self.routes is not None, "built by build_application"
        try:
            await self.routes.tap(tap)
        except ChatFlooded as flooded:
            asker = Asker(
                tap.user_id, tap.language_code, chat_id=tap.chat_id, query_id=tap.query_id
            )
            await self.routes.shell.held_back(flooded, asker)

    async def start(self) -> None:
        await super().start()
        if self.timers is not None:
            self._clock_task = asyncio.create_task(self.timers.run(), name="tgcheat-clock")

    async def stop(self) -> None:
        clock = self._clock_task
        if clock is not None:
            # Cancelled again until it ends: on Python 3.11 a cancellation that meets an
            # inner operation finishing at that moment can be swallowed (asyncio.wait_for,
            # used inside some clients), and the clock would then run on for ever.
            while not clock.done():
                clock.cancel()
                await asyncio.wait({clock}, timeout=CLOCK_STOP_WAIT_S)
            with contextlib.suppress(asyncio.CancelledError):
                clock.result()
            self._clock_task = None
        await super().stop()


def build_application(
    config: Config,
    redis: Redis,
    *,
    request: BaseRequest | None = None,
    group_messages_per_minute: int = GROUP_MESSAGES_PER_MINUTE,
) -> Application:  # type: ignore[type-arg]
    """The bot.

    It has no python-telegram-bot rate limiter: AIORateLimiter sleeps out a RetryAfter (429)
    inside the request, and pauses every other request of the process meanwhile, so one
    group's flood wait would stall all of them. A 429 is the chat's own: the game's messages
    (``Sender``) keep what it held back for the clock, and the few requests made through
    ``Bot`` (an admin check) meet it as ``ChatFlooded`` too (``Shell.is_admin``). The per-group
    budget that keeps the bot under Telegram's limits is kept across processes in Redis by the
    store (see GameStore.transact)."""
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
    store = GameStore(redis, group_messages_per_minute=group_messages_per_minute)
    sender = Sender(application.bot)
    publisher = Publisher(store, sender)
    shell = Shell(store, sender, publisher)
    # What a view says of the time left follows the handlers' clock (tests and tools move it).
    publisher.clock = lambda: shell.clock()
    routes = Routes(shell)
    assert isinstance(application, CheatApplication)
    application.timers = Timers(store, publisher, rng=shell.rng)
    application.routes = routes
    routes.register(application)

    async def flood_is_no_failure(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A handler met a chat's flood wait: what it held back waits for the clock, and the
        update is handled (the webhook answers 200: delivering it again would not help)."""
        if not isinstance(context.error, ChatFlooded):
            return
        try:
            await publisher.held_back(context.error)
        except Exception:
            log.exception("a flood wait could not be kept")
            return  # a failure after all: the webhook's own error handler reports it
        raise ApplicationHandlerStop

    application.add_error_handler(flood_is_no_failure)
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
