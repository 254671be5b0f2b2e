"""The bot, offline: a real python-telegram-bot Application on a real Redis, fed real update JSON;
every request it sends goes to FakeTelegram, which checks it against the Bot API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest_asyncio
from redis.asyncio import Redis
from telegram import Update
from telegram.ext import Application

from tests.support.fake_telegram import FakeTelegram
from tests.support.updates import UpdateFactory, User, group
from tgcheat.bot.app import CheatApplication, build_application
from tgcheat.bot.handlers import Shell
from tgcheat.bot.taps import tap_from_json
from tgcheat.config import Config
from tgcheat.store.games import GameStore
from tgcheat.table.place import Place, Where
from tgcheat.table.session import MessageIds

TOKEN = "123456:TEST-token-for-offline-tests"
GROUP_ID = -1001234567890


@dataclass
class BotHarness:
    app: Application[Any, Any, Any, Any, Any, Any]
    fake: FakeTelegram
    updates: UpdateFactory
    group: dict[str, Any]
    store: GameStore

    @property
    def shell(self) -> Shell:
        """What the handlers share: its ``rng`` and ``clock`` may be set by a test."""
        assert isinstance(self.app, CheatApplication) and self.app.routes is not None
        return self.app.routes.shell

    async def message_ids(self, where: Where) -> MessageIds:
        """The ids of the messages that show the place now, as delivery recorded them."""
        return await self.shell.delivery.shown_ids(Place.of(where))

    async def feed(self, update: dict[str, Any]) -> None:
        """As the webhook does: a button press straight from the JSON, the rest through
        python-telegram-bot's Update (``tgcheat.web``)."""
        tap = tap_from_json(update)
        if tap is not None:
            assert isinstance(self.app, CheatApplication)
            await self.app.handle_tap(tap)
        else:
            await self.app.process_update(Update.de_json(update, self.app.bot))

    async def command(
        self,
        user: User,
        text: str,
        chat: dict[str, Any] | None = None,
        *,
        reply_to: dict[str, Any] | None = None,
    ) -> None:
        name, _, args = text.partition(" ")
        await self.feed(
            self.updates.command(chat or self.group, user, name, args or None, reply_to=reply_to)
        )

    async def press(self, user: User, chat_id: int, button: Any) -> None:
        await self.feed(self.updates.press(self.fake, user, chat_id, button))

    async def start_private(self, user: User, payload: str | None = None) -> None:
        await self.feed(self.updates.start_private(user, payload))


#: Offline tests play far faster than people: no budget unless a test asks for one.
UNLIMITED = 1_000_000


async def make_harness(
    redis: Redis,
    fake: FakeTelegram | None = None,
    *,
    group_messages_per_minute: int = UNLIMITED,
    send_rate: float = 0,
    replies_per_second: float = 0,
) -> BotHarness:
    fake = fake or FakeTelegram()
    app = build_application(
        Config(telegram_bot_token=TOKEN),
        redis,
        request=fake,
        group_messages_per_minute=group_messages_per_minute,
        send_rate=send_rate,
        replies_per_second=replies_per_second,
    )
    await app.initialize()
    return BotHarness(
        app, fake, UpdateFactory(fake), group(GROUP_ID, "Friday <cards> & co"), GameStore(redis)
    )


@asynccontextmanager
async def running_bot(redis: Redis) -> AsyncIterator[BotHarness]:
    """A bot on ``redis`` for the length of the block; every request it made was valid."""
    harness = await make_harness(redis)
    try:
        yield harness
    finally:
        await harness.app.shutdown()
    harness.fake.assert_clean()


@pytest_asyncio.fixture(loop_scope="session")
async def bot(redis: Redis) -> AsyncIterator[BotHarness]:
    async with running_bot(redis) as harness:
        yield harness
