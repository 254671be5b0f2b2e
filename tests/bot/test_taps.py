"""A button press read straight from the webhook's JSON is the press python-telegram-bot reads,
and anything not shaped like one is left to python-telegram-bot."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from telegram import Bot, Update

from tests.support.fake_telegram import FakeTelegram
from tests.support.updates import UpdateFactory, User, group, private
from tgcheat.bot.taps import Tap, tap_from_json, tap_from_update

TOKEN = "123456:TEST-token-for-offline-tests"
ANN = User(1, "Ann", language_code="ru")
BOB = User(2, "Bob", language_code=None)


def _message(chat: dict[str, Any], message_id: int = 41) -> dict[str, Any]:
    return {
        "message_id": message_id,
        "date": 1_700_000_000,
        "chat": chat,
        "from": {"id": 7, "is_bot": True, "first_name": "tgcheat", "username": "tgcheat_bot"},
        "text": "Your hand",
        "reply_markup": {"inline_keyboard": [[{"text": "7♣", "callback_data": "k:-1:ab:3::7"}]]},
    }


def _presses() -> list[dict[str, Any]]:
    updates = UpdateFactory()
    return [
        updates.callback(ANN, _message(private(ANN)), "k:-1001:abc123:3:77:K"),
        updates.callback(BOB, _message(group(-1001234567890)), "c:-1001234567890:abc123:4"),
        # An inaccessible message (older than 48 h): date 0, chat and id only.
        updates.callback(BOB, {"message_id": 9, "date": 0, "chat": private(BOB)}, "x"),
    ]


@pytest.mark.parametrize("index", range(3))
async def test_the_json_press_is_the_one_python_telegram_bot_reads(index: int) -> None:
    data = _presses()[index]
    async with Bot(TOKEN, request=FakeTelegram(), get_updates_request=FakeTelegram()) as bot:
        from_update = tap_from_update(Update.de_json(copy.deepcopy(data), bot))
    from_json = tap_from_json(data)
    assert from_json is not None
    assert from_json == from_update
    query = data["callback_query"]
    assert from_json.query_id == query["id"] and from_json.data == query["data"]
    assert from_json.chat_id == query["message"]["chat"]["id"]


def test_a_press_without_its_message_has_no_chat() -> None:
    data = _presses()[0]
    del data["callback_query"]["message"]
    data["callback_query"]["inline_message_id"] = "AAAA"
    assert tap_from_json(data) == Tap(
        data["update_id"],
        data["callback_query"]["id"],
        ANN.id,
        "ru",
        "k:-1001:abc123:3:77:K",
        full_name="Ann",
    )


def _set(data: dict[str, Any], path: tuple[str, ...], value: object) -> dict[str, Any]:
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("update_id",), "12"),
        (("update_id",), True),
        (("callback_query",), []),
        (("callback_query", "id"), 5),
        (("callback_query", "from"), _DELETE),
        (("callback_query", "from", "id"), "1"),
        (("callback_query", "from", "id"), 1.0),
        (("callback_query", "from", "language_code"), 3),
        (("callback_query", "data"), ["k"]),
        (("callback_query", "message"), "hand"),
        (("callback_query", "message", "chat"), _DELETE),
        (("callback_query", "message", "chat", "id"), None),
        (("callback_query", "message", "message_id"), False),
    ],
)
def test_a_malformed_press_is_left_to_python_telegram_bot(
    path: tuple[str, ...], value: object
) -> None:
    data = _set(_presses()[0], path, value)
    assert tap_from_json(data) is None


def test_other_updates_are_not_presses() -> None:
    updates = UpdateFactory()
    assert tap_from_json(updates.command(group(), ANN, "/new")) is None
    assert tap_from_json({"update_id": 3}) is None
