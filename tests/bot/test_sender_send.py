"""What a sent message carries: a reply to a command quotes it, and is sent even when the
command is gone."""

from __future__ import annotations

from telegram import Bot

from tests.support.fake_telegram import FakeTelegram
from tests.support.updates import UpdateFactory, User, group
from tgcheat.bot.sender import Sender
from tgcheat.bot.views import View

TOKEN = "123456:TEST-token-for-offline-tests"
GROUP_ID = -1001234567890
ANN = User(1, "Ann")


def _harness() -> tuple[FakeTelegram, UpdateFactory, Sender]:
    fake = FakeTelegram()
    return fake, UpdateFactory(fake), Sender(Bot(TOKEN, request=fake, get_updates_request=fake))


async def test_a_reply_names_the_message_it_answers() -> None:
    fake, updates, sender = _harness()
    command = updates.command(group(GROUP_ID, "Cards"), ANN, "/rules")["message"]
    sent = await sender.send(GROUP_ID, View("The rules"), reply_to=command["message_id"])
    [call] = fake.calls_to("sendMessage")
    assert call.params["reply_parameters"] == {
        "message_id": command["message_id"],
        "allow_sending_without_reply": True,
    }
    assert call.params["chat_id"] == GROUP_ID
    assert sent == call.result["message_id"]
    fake.assert_clean()


async def test_a_message_that_answers_nothing_has_no_reply_parameters() -> None:
    fake, updates, sender = _harness()
    updates.command(group(GROUP_ID, "Cards"), ANN, "/new")
    await sender.send(GROUP_ID, View("A new game"), silent=True)
    [call] = fake.calls_to("sendMessage")
    assert "reply_parameters" not in call.params
    assert call.params["disable_notification"] is True
    fake.assert_clean()
