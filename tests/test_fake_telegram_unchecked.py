"""FakeTelegram without its checks (``checks=False``, the benchmarks' mode): answers with
Telegram's shapes, refuses and keeps nothing, and tells its ``record`` hook of every request."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden

from tests.support.fake_telegram import BOT_ID, SPEC, FakeTelegram, chat_kind

TOKEN = f"{BOT_ID}:TEST-TOKEN-for-the-fake"
GROUP_ID = -1001234567890
ALICE_ID = 1001


class Counts:
    """A ``Recorder`` that counts requests by method and kind of chat, and pop-ups."""

    def __init__(self) -> None:
        self.requests: Counter[tuple[str, str]] = Counter()
        self.toasts = 0

    def __call__(self, method: str, chat: str, toast: bool) -> None:
        self.requests[method, chat] += 1
        self.toasts += toast


class KeepingAnswers(FakeTelegram):
    """Keeps the JSON of every answer, to hold it to the Bot API's types."""

    answers: list[Any]

    async def do_request(self, *args: Any, **kwargs: Any) -> tuple[int, bytes]:
        status, body = await super().do_request(*args, **kwargs)
        self.answers.append(json.loads(body))
        return status, body


def keyboard(*labels: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(label, callback_data=label.lower())] for label in labels]
    )


async def test_answers_with_telegram_shapes_and_counts_by_method_and_chat() -> None:
    counts = Counts()
    fake = FakeTelegram(checks=False, record=counts)
    async with Bot(TOKEN, request=fake, get_updates_request=fake) as bot:
        assert bot.id == BOT_ID
        sent = await bot.send_message(
            GROUP_ID, "<b>Who</b> plays?", parse_mode=ParseMode.HTML, reply_markup=keyboard("Join")
        )
        assert sent.message_id == 1
        assert sent.chat.id == GROUP_ID and sent.chat.type == "supergroup"
        assert sent.from_user is not None and sent.from_user.id == BOT_ID
        # The text comes back as it was sent: its HTML is not parsed.
        assert sent.text == "<b>Who</b> plays?" and not sent.entities
        assert sent.reply_markup == keyboard("Join")
        assert (await bot.send_message(GROUP_ID, "again")).message_id == 2
        private = await bot.send_message(ALICE_ID, "your cards")
        assert private.message_id == 1 and private.chat.type == "private"

        edited = await bot.edit_message_text(
            "Round 2", chat_id=GROUP_ID, message_id=1, reply_markup=keyboard("Pass")
        )
        assert not isinstance(edited, bool)
        assert edited.message_id == 1 and edited.text == "Round 2"
        assert edited.edit_date is not None and edited.reply_markup == keyboard("Pass")
        rekeyed = await bot.edit_message_reply_markup(
            chat_id=GROUP_ID, message_id=2, reply_markup=keyboard("Go")
        )
        assert not isinstance(rekeyed, bool) and rekeyed.reply_markup == keyboard("Go")

        assert await bot.answer_callback_query("7", text="Not your turn") is True
        assert await bot.answer_callback_query("8") is True
        assert await bot.delete_message(GROUP_ID, 2) is True
        member = await bot.get_chat_member(GROUP_ID, ALICE_ID)
        assert member.status == "member" and member.user.id == ALICE_ID

    assert counts.requests == {
        ("getme", "none"): 1,
        ("sendmessage", "group"): 2,
        ("sendmessage", "private"): 1,
        ("editmessagetext", "group"): 1,
        ("editmessagereplymarkup", "group"): 1,
        ("answercallbackquery", "none"): 2,
        ("deletemessage", "group"): 1,
        ("getchatmember", "group"): 1,
    }
    assert counts.toasts == 1
    assert fake.calls == [] and fake.messages == {} and fake.violations == []


@pytest.mark.skipif(SPEC is None, reason="api.json absent: no Bot API types to check against")
async def test_its_answers_are_bot_api_types() -> None:
    fake = KeepingAnswers(checks=False)
    fake.answers = []
    async with Bot(TOKEN, request=fake, get_updates_request=fake) as bot:
        await bot.send_message(GROUP_ID, "Who plays?", reply_markup=keyboard("Join", "Start"))
        await bot.edit_message_text("Round 2", chat_id=GROUP_ID, message_id=1)
        await bot.get_chat_member(GROUP_ID, ALICE_ID)
    assert SPEC is not None
    get_me, sent, edited, member = (answer["result"] for answer in fake.answers)
    assert all(answer["ok"] is True for answer in fake.answers)
    assert SPEC.check_object(get_me, "User") == []
    assert SPEC.check_object(sent, "Message") == []
    assert SPEC.check_object(edited, "Message") == []
    assert SPEC.check_object(member, "ChatMember") == []


async def test_refuses_nothing_that_the_checked_fake_refuses() -> None:
    too_long = "x" * 5000
    checked = FakeTelegram()
    async with Bot(TOKEN, request=checked, get_updates_request=checked) as bot:
        with pytest.raises(BadRequest):
            await bot.send_message(GROUP_ID, too_long)
        with pytest.raises(BadRequest):
            await bot.edit_message_text("gone", chat_id=GROUP_ID, message_id=99)
        with pytest.raises(Forbidden):
            await bot.send_message(ALICE_ID, "never started the bot")
    assert checked.violations

    unchecked = FakeTelegram(checks=False)
    async with Bot(TOKEN, request=unchecked, get_updates_request=unchecked) as bot:
        assert (await bot.send_message(GROUP_ID, too_long)).text == too_long
        await bot.edit_message_text("gone", chat_id=GROUP_ID, message_id=99)
        await bot.send_message(ALICE_ID, "never started the bot")
    assert unchecked.violations == [] and unchecked.calls == [] and unchecked.messages == {}


async def test_fail_next_still_applies() -> None:
    fake = FakeTelegram(checks=False)
    fake.fail_next("sendMessage", status=403, description="Forbidden: bot was blocked by the user")
    async with Bot(TOKEN, request=fake, get_updates_request=fake) as bot:
        with pytest.raises(Forbidden, match="blocked"):
            await bot.send_message(ALICE_ID, "your cards")
        assert (await bot.send_message(ALICE_ID, "your cards")).message_id == 1


@pytest.mark.parametrize("checks", [True, False])
async def test_webhook_answers_and_checked_requests_are_recorded_too(checks: bool) -> None:
    counts = Counts()
    fake = FakeTelegram(checks=checks, record=counts)
    async with Bot(TOKEN, request=fake, get_updates_request=fake) as bot:
        await bot.send_message(GROUP_ID, "hello")
    answer = {"method": "answerCallbackQuery", "callback_query_id": "5", "text": "Taken"}
    await fake.webhook_answer(200, "application/json", json.dumps(answer).encode())
    assert counts.requests == {
        ("getme", "none"): 1,
        ("sendmessage", "group"): 1,
        ("answercallbackquery", "none"): 1,
    }
    assert counts.toasts == 1


def test_chat_kind_reads_chat_ids_decoded_or_as_sent() -> None:
    assert chat_kind(GROUP_ID) == chat_kind(str(GROUP_ID)) == chat_kind("@cards") == "group"
    assert chat_kind(ALICE_ID) == chat_kind(str(ALICE_ID)) == "private"
    assert chat_kind(None) == chat_kind("") == chat_kind(True) == "none"
