"""The python-telegram-bot Application: handlers wired to the store, and the command menu."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from typing import TYPE_CHECKING

from redis.asyncio import Redis
from telegram import (
    Bot,
    BotCommand,
    BotCommandScopeAllGroupChats,
    BotCommandScopeAllPrivateChats,
    Update,
)
from telegram.ext import (
    Application,
    ApplicationBuilder,
    ApplicationHandlerStop,
    ContextTypes,
)
from telegram.request import BaseRequest

from tgcheat.bot.delivery.sync import Delivery
from tgcheat.bot.handlers import Routes, Shell
from tgcheat.bot.handlers.shell import Asker
from tgcheat.bot.sender import ChatFlooded, Sender, TopicGone
from tgcheat.bot.taps import Tap
from tgcheat.bot.timers import Timers
from tgcheat.i18n import N_, available_languages, load_all, telegram_code, translator
from tgcheat.logs import cause_of
from tgcheat.metrics import current_outcome, handling_update
from tgcheat.store.games import GROUP_MESSAGES_PER_MINUTE, LEASE_MS, GameStore
from tgcheat.store.send_budget import REPLIES_PER_SECOND, SendBudget

if TYPE_CHECKING:
    from tgcheat.config import Config

_LOGGER = logging.getLogger(__name__)

MAX_RETRIES = 2
#: How many more times long polling hands an update whose handling failed to the handlers.
POLLING_RETRIES = 3
#: The wait before the first of them (s); each next one waits POLLING_BACKOFF times longer.
POLLING_RETRY_WAIT_S = 2.0
POLLING_BACKOFF = 4
#: How long stopping waits for the clock to end after cancelling it, before cancelling again.
CLOCK_STOP_WAIT_S = 0.5

#: The updates the bot asks Telegram for (setWebhook / getUpdates): those its handlers handle,
#: no more (a player leaving the group arrives as a message, `left_chat_member`).
ALLOWED_UPDATES: list[str] = ["message", "callback_query", "my_chat_member", "inline_query"]

GROUP_COMMANDS = (
    ("new", N_("Open a new game of Cheat")),
    ("join", N_("Join the open game")),
    ("leave", N_("Leave the game")),
    ("stop", N_("End the game (creator or admins)")),
    ("kick", N_("Remove a player (reply to them, or give their seat)")),
    ("settings", N_("Choose the rules of this group's games")),
    ("notify", N_("Get a private message when the next game opens")),
    ("stats", N_("Your statistics in this group, and its best")),
    ("top", N_("This group's best players")),
    ("profile", N_("Your rating, achievements and profile")),
    ("rules", N_("The rules in force")),
    ("language", N_("The language of this group's games (admins only)")),
    ("help", N_("How to play")),
)
PRIVATE_COMMANDS = (
    ("play", N_("Play against computer players")),
    ("quick", N_("A quick game with anyone")),
    ("settings", N_("Choose the rules of your games against the computer")),
    ("help", N_("How to play")),
    ("rules", N_("The rules in force")),
    ("language", N_("The language of your messages")),
    ("stats", N_("Your statistics across groups")),
    ("profile", N_("Your rating, achievements and profile")),
    ("top", N_("The best players across groups")),
    ("forgetme", N_("Delete your statistics and settings")),
)


class CheatApplication(Application):  # type: ignore[type-arg]
    """An Application that runs the game clock while it runs (webhook or polling alike)."""

    timers: Timers | None = None
    routes: Routes | None = None
    #: Long polling's second tries of failed updates (see retry_failed_updates).
    retries: PollingRetries | None = None
    _clock_task: asyncio.Task[None] | None = None

    async def handle_tap(self, tap: Tap) -> None:
        """A button press read straight from the webhook's JSON (see `tgcheat.bot.taps`); an
        exception escapes to the caller, as a handler's does not in `process_update`. A flood
        wait met on the way is not a failure (``held_back``)."""
        assert self.routes is not None, "built by build_application"
        with handling_update("press"):
            try:
                await self.routes.tap(tap)
            except ChatFlooded as flooded:
                asker = Asker(
                    tap.user_id, tap.language_code, chat_id=tap.chat_id, query_id=tap.query_id
                )
                await self.routes.shell.held_back(flooded, asker)
            except TopicGone as gone:
                await self.routes.shell.end_topic(gone.place)

    async def process_update(self, update: object) -> None:
        """python-telegram-bot's, counted by kind and outcome (tgcheat.metrics.UPDATES): an
        error handler marks the update failed (``note_failure`` in build_application)."""
        kind = update_kind(update) if isinstance(update, Update) else "other"
        with handling_update(kind):
            await super().process_update(update)

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
        if self.retries is not None:
            await self.retries.cancel()
        await super().stop()


#: How many times the update being handled was handed to the handlers before (long polling).
_EARLIER_TRIES: contextvars.ContextVar[int] = contextvars.ContextVar(
    "tgcheat_polling_earlier_tries", default=0
)


class PollingRetries:
    """Long polling's error handler: it logs a failed update with its cause, and hands it to
    the handlers again a few times, later.

    Telegram delivers a webhook's update again when handling it failed (tgcheat.web), but an
    update that getUpdates returned is confirmed by the next call, whatever became of it; and
    python-telegram-bot, without an error handler, only logs the error. Trying again is safe:
    the store ignores a change the update already made (it remembers the update's id), and
    shows the stored game again instead (Shell.show), so a change whose showing failed, because
    Telegram or Redis did for a moment, is shown after all.
    """

    def __init__(
        self,
        application: Application,  # type: ignore[type-arg]
        *,
        retries: int = POLLING_RETRIES,
        first_wait_s: float = POLLING_RETRY_WAIT_S,
    ) -> None:
        self._application = application
        self._retries = retries
        self._first_wait_s = first_wait_s
        #: Every second try under way, and those of them still waiting for their time.
        self._tries: set[asyncio.Task[None]] = set()
        self._waiting: set[asyncio.Task[None]] = set()
        self._stopping = False

    async def on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        error = context.error
        if not isinstance(update, Update):
            _LOGGER.error("Error outside an update", exc_info=error)
            return
        what = _described(update)
        earlier = _EARLIER_TRIES.get()
        tries = self._retries + 1
        chat = update.effective_chat
        fields = {
            "update_id": update.update_id,
            "chat_id": chat.id if chat is not None else None,
            "kind": update_kind(update),
            "cause": cause_of(error),
            "try_number": earlier + 1,
            "tries": tries,
        }
        if earlier >= self._retries or self._stopping:
            _LOGGER.error(
                "Handling %s failed (try %d of %d), given up: %s",
                what, earlier + 1, tries, cause_of(error), exc_info=error, extra=fields,
            )  # fmt: skip
            return
        wait = self._first_wait_s * POLLING_BACKOFF**earlier
        _LOGGER.error(
            "Handling %s failed (try %d of %d), trying again in %.3g s: %s",
            what, earlier + 1, tries, wait, cause_of(error), exc_info=error, extra=fields,
        )  # fmt: skip
        task = asyncio.create_task(
            self._again(update, earlier + 1, wait), name=f"tgcheat-retry-{update.update_id}"
        )
        self._tries.add(task)
        self._waiting.add(task)
        task.add_done_callback(self._tries.discard)
        task.add_done_callback(self._waiting.discard)

    async def _again(self, update: Update, earlier: int, wait: float) -> None:
        await asyncio.sleep(wait)
        task = asyncio.current_task()
        assert task is not None
        self._waiting.discard(task)
        _EARLIER_TRIES.set(earlier)
        await self._application.process_update(update)

    async def cancel(self) -> None:
        """The program stops: the updates still waiting are not tried again; those being
        handled again are finished."""
        self._stopping = True
        waiting = list(self._waiting)
        for task in waiting:
            task.cancel()
        if waiting:
            _LOGGER.warning("Stopping: %d failed update(s) will not be tried again", len(waiting))
        await asyncio.gather(*self._tries, return_exceptions=True)


def _described(update: Update) -> str:
    chat = update.effective_chat
    where = f" in chat {chat.id}" if chat is not None else ""
    user = update.effective_user
    who = f" from user {user.id}" if user is not None else ""
    return f"update {update.update_id}{where}{who}"


def update_kind(update: Update) -> str:
    """The kind of an update, as the metrics count it (tgcheat.metrics.UPDATE_KINDS)."""
    if update.callback_query is not None:
        return "press"
    message = update.message
    if message is not None:
        text = message.text
        return "command" if text is not None and text.startswith("/") else "message"
    if update.my_chat_member is not None or update.chat_member is not None:
        return "membership"
    return "other"


def retry_failed_updates(
    application: Application,  # type: ignore[type-arg]
    *,
    retries: int = POLLING_RETRIES,
    first_wait_s: float = POLLING_RETRY_WAIT_S,
) -> PollingRetries:
    """Give a polling application its error handler (see PollingRetries). Not for the webhook:
    there Telegram itself delivers a failed update again."""
    handler = PollingRetries(application, retries=retries, first_wait_s=first_wait_s)
    application.add_error_handler(handler.on_error)
    if isinstance(application, CheatApplication):
        application.retries = handler
    return handler


def build_application(
    config: Config,
    redis: Redis,
    *,
    request: BaseRequest | None = None,
    group_messages_per_minute: int = GROUP_MESSAGES_PER_MINUTE,
    lease_ms: int = LEASE_MS,
    send_rate: float | None = None,
    replies_per_second: float = REPLIES_PER_SECOND,
) -> Application:  # type: ignore[type-arg]
    """The bot.

    It has no python-telegram-bot rate limiter: AIORateLimiter sleeps out a RetryAfter (429)
    inside the request, and pauses every other request of the process meanwhile, so one
    group's flood wait would stall all of them. A 429 is the chat's own: the sync of a place
    leaves what it held back for the clock, and the few requests made through ``Bot`` (an
    admin check) meet it as ``ChatFlooded`` too (``Shell.is_admin``). The per-group budget
    that keeps the bot under Telegram's limits is kept across processes in Redis by the store
    and spent by each place's sync (``tgcheat.bot.delivery.sync``), and the budget across all
    chats by the sender (``send_rate`` a second, ``config.send_rate`` unless given; 0: none).
    Each person's commands get ``replies_per_second`` replies at most (0: no limit)."""
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
    store = GameStore(
        redis,
        prefix=config.redis_prefix,
        group_messages_per_minute=group_messages_per_minute,
        lease_ms=lease_ms,
        replies_per_second=replies_per_second,
    )
    sender = Sender(application.bot)
    rate = config.send_rate if send_rate is None else send_rate
    if rate > 0:
        sender.budget = SendBudget(redis, store.keys, rate)
    delivery = Delivery(store, sender)
    shell = Shell(store, sender, delivery)

    def now_ms() -> int:
        return shell.clock()

    # One clock, the handlers' (tests and tools move it): the commits and leases, delivery's
    # budgets and due times, the sender's flood waits and the clock's deadlines all read it.
    store.sessions.clock = sender.clock = delivery.clock = now_ms
    delivery.app_url = config.app_url
    routes = Routes(shell)
    assert isinstance(application, CheatApplication)
    application.timers = Timers(store, shell, now_ms, rng=shell.rng)
    application.routes = routes
    routes.register(application)

    async def flood_is_no_failure(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A handler met a chat's flood wait: what it held back is synced by the clock, and
        the update is handled (the webhook answers 200: delivering it again would not help)."""
        if isinstance(context.error, TopicGone):
            # A topic closed or deleted under its game: the game ends, and the update is
            # handled (delivering it again would meet the same topic).
            await shell.end_topic(context.error.place)
            raise ApplicationHandlerStop
        if not isinstance(context.error, ChatFlooded):
            return
        await shell.held_back(context.error)
        raise ApplicationHandlerStop

    async def note_failure(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A handler failed (not a flood wait, stopped above): the update counts as failed."""
        outcome = current_outcome()
        if outcome is not None:
            outcome.failed = True

    application.add_error_handler(flood_is_no_failure)
    application.add_error_handler(note_failure)
    return application


async def register_commands(bot: Bot) -> None:
    """The command menu, per scope and per language (the default list in English). Telegram
    takes a two-letter language code: ``pt_BR``'s menu is Portuguese's, ``pt``, which is also
    what Telegram matches for ``pt-br``."""
    for language in (None, *available_languages()):
        tr = translator(language)
        code = telegram_code(language) if language is not None else ""
        for scope, commands in (
            (BotCommandScopeAllGroupChats(), GROUP_COMMANDS),
            (BotCommandScopeAllPrivateChats(), PRIVATE_COMMANDS),
        ):
            await bot.set_my_commands(
                [BotCommand(name, tr._(description)) for name, description in commands],
                scope=scope,
                language_code=code or None,
            )
