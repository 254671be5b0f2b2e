"""Telegram's flood limits in the offline Bot API (tests/support/rate_limits.py): each answers
429 "retry after N" beyond its burst and lets messages through again as its clock goes on."""

from __future__ import annotations

import datetime
import warnings
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from telegram import Bot
from telegram.error import RetryAfter

from tests.support.fake_telegram import BOT_ID, FakeTelegram
from tests.support.rate_limits import ALL_CHATS, GROUP, PRIVATE, TelegramLimits
from tests.support.updates import UpdateFactory, User, group

TOKEN = f"{BOT_ID}:TEST-TOKEN-for-the-limits"
GROUP_ID = -1001234567890
ALICE = User(1001, "Alice")


class Clock:
    """The offline API's seconds, moved by the test."""

    def __init__(self) -> None:
        self.now = 1_772_823_600.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def fake(clock: Clock) -> FakeTelegram:
    fake = FakeTelegram(clock=clock, limits=TelegramLimits())
    updates = UpdateFactory(fake)
    updates.start_private(ALICE, None)  # Alice opened her private chat with the bot
    updates.command(group(GROUP_ID), ALICE, "new")
    return fake


@pytest_asyncio.fixture
async def bot(fake: FakeTelegram) -> AsyncIterator[Bot]:
    async with Bot(TOKEN, request=fake, get_updates_request=fake) as bot:
        yield bot


def retry_seconds(error: RetryAfter) -> int:
    with warnings.catch_warnings():
        # Reading retry_after warns that its type becomes a timedelta; either is taken.
        warnings.simplefilter("ignore")
        wait = error.retry_after
    if isinstance(wait, datetime.timedelta):
        return int(wait.total_seconds())
    return int(wait)


async def sent(bot: Bot, chat_id: int, times: int) -> list[int | None]:
    """Send ``times`` messages at once; each one's retry_after when refused, else None."""
    outcomes: list[int | None] = []
    for number in range(times):
        try:
            await bot.send_message(chat_id, f"message {number}")
        except RetryAfter as error:
            outcomes.append(retry_seconds(error))
        else:
            outcomes.append(None)
    return outcomes


async def test_a_private_chat_takes_a_burst_of_three_then_one_a_second(
    bot: Bot, fake: FakeTelegram, clock: Clock
) -> None:
    assert await sent(bot, ALICE.id, 4) == [None, None, None, 1]
    assert fake.limits is not None and fake.limits.refused == {PRIVATE: 1}
    clock.now += 1
    assert await sent(bot, ALICE.id, 2) == [None, 1]
    clock.now += 3
    assert await sent(bot, ALICE.id, 4) == [None, None, None, 1]


async def test_a_group_takes_a_burst_of_eight_then_twenty_a_minute(
    bot: Bot, fake: FakeTelegram, clock: Clock
) -> None:
    assert await sent(bot, GROUP_ID, 9) == [None] * 8 + [3]
    clock.now += 2
    assert await sent(bot, GROUP_ID, 1) == [1]
    clock.now += 1
    assert await sent(bot, GROUP_ID, 2) == [None, 3]
    assert fake.limits is not None and fake.limits.refused == {GROUP: 3}
    # The refused requests are Telegram's 429 with its JSON.
    refused = fake.calls_to("sendMessage")[-1]
    assert refused.status == 429 and refused.error == "Too Many Requests: retry after 3"


async def test_edits_and_deletes_count_and_button_answers_do_not(
    bot: Bot, fake: FakeTelegram, clock: Clock
) -> None:
    message = await bot.send_message(ALICE.id, "hand")
    await bot.edit_message_text("hand, edited", chat_id=ALICE.id, message_id=message.message_id)
    await bot.delete_message(ALICE.id, message.message_id)
    with pytest.raises(RetryAfter):
        await bot.send_message(ALICE.id, "a fourth message")
    for number in range(40):
        await bot.answer_callback_query(f"query-{number}")
        await bot.get_chat_member(GROUP_ID, ALICE.id)
    assert fake.limits is not None and fake.limits.refused == {PRIVATE: 1}


async def test_all_chats_together_take_thirty_a_second(
    bot: Bot, fake: FakeTelegram, clock: Clock
) -> None:
    chats = [-1001000000000 - number for number in range(31)]
    outcomes = [(await sent(bot, chat_id, 1))[0] for chat_id in chats]
    assert outcomes == [None] * 30 + [1]
    assert fake.limits is not None and fake.limits.refused == {ALL_CHATS: 1}
    clock.now += 0.5
    outcomes = [(await sent(bot, chat_id, 1))[0] for chat_id in chats[:16]]
    assert outcomes == [None] * 15 + [1]
    assert fake.limits.refused == {ALL_CHATS: 2}


async def test_without_limits_the_offline_api_sends_everything(clock: Clock) -> None:
    fake = FakeTelegram(clock=clock)
    UpdateFactory(fake).start_private(ALICE, None)
    async with Bot(TOKEN, request=fake, get_updates_request=fake) as bot:
        assert await sent(bot, ALICE.id, 10) == [None] * 10
    assert fake.limits is None
