"""The bot's own requests stand in for python-telegram-bot's RequestData with its public
members only, and python-telegram-bot's HTTP client sends for them what it sends for ``Bot``'s
own request."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest
from telegram import Bot, InlineKeyboardMarkup, LinkPreviewOptions, ReplyParameters
from telegram.error import NetworkError
from telegram.request import BaseRequest, HTTPXRequest, RequestData

from tgcheat.bot import api_request
from tgcheat.bot.api_request import EncodedParameters
from tgcheat.bot.sender import Sender
from tgcheat.bot.views import View, button, keyboard

TOKEN = "123456:TEST-token-for-offline-tests"
CHAT_ID = -1001234567890
TEXT = "<b>Your hand</b>: 7♠ 7♥ K♦ — pick, then “Play”"
MARKUP = keyboard(
    [
        [button("7♠", callback_data="p:1:2:7"), button("K♦", callback_data="p:1:2:K")],
        [button("Rules", url="https://example.org/rules")],
    ]
)
SENT = {
    "message_id": 8,
    "from": {"id": 123456, "is_bot": True, "first_name": "tgcheat"},
    "chat": {"id": CHAT_ID, "type": "supergroup", "title": "Cards"},
    "date": 1700000000,
    "text": "Your hand: 7♠ 7♥ K♦ — pick, then “Play”",
    "reply_markup": MARKUP,
}


def public_members(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def test_every_public_member_of_request_data_is_offered() -> None:
    assert public_members(RequestData) <= public_members(EncodedParameters)


def test_the_members_read_as_request_datas_do() -> None:
    params = {"chat_id": CHAT_ID, "text": TEXT, "reply_markup": MARKUP, "protect_content": None}
    ours = EncodedParameters(params)
    encoded = {"chat_id": str(CHAT_ID), "text": TEXT, "reply_markup": json.dumps(MARKUP)}
    assert ours.contains_files is False
    assert ours.multipart_data == {}
    assert ours.parameters == {"chat_id": CHAT_ID, "text": TEXT, "reply_markup": MARKUP}
    assert {name: _decoded(value) for name, value in ours.json_parameters.items()} == {
        name: _decoded(value) for name, value in encoded.items()
    }
    assert set(ours.json_parameters) == set(encoded)
    assert _decoded_form(ours.url_encoded_parameters()) == _decoded_form(encoded)
    assert ours.parametrized_url("https://api.invalid/x").startswith("https://api.invalid/x?")
    assert {name: _decoded(value) for name, value in json.loads(ours.json_payload).items()} == {
        name: _decoded(value) for name, value in encoded.items()
    }


class Wire:
    """What python-telegram-bot's HTTPXRequest puts on the wire, answered as Telegram would."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200, json={"ok": True, "result": SENT})


@pytest.fixture
async def wire() -> AsyncIterator[tuple[Wire, Bot]]:
    wire = Wire()
    request = HTTPXRequest(httpx_kwargs={"transport": httpx.MockTransport(wire)})
    await request.initialize()
    try:
        yield wire, Bot(TOKEN, request=request)
    finally:
        await request.shutdown()


async def test_httpx_sends_what_it_sends_for_bots_own_method(wire: tuple[Wire, Bot]) -> None:
    recorder, bot = wire
    sent = await Sender(bot).send(CHAT_ID, View(TEXT, MARKUP), silent=True, reply_to=5)
    await bot.send_message(
        CHAT_ID,
        TEXT,
        parse_mode="HTML",
        link_preview_options=LinkPreviewOptions(is_disabled=True),
        reply_markup=InlineKeyboardMarkup.de_json(MARKUP, bot),
        disable_notification=True,
        reply_parameters=ReplyParameters(5, allow_sending_without_reply=True),
    )
    assert sent == SENT["message_id"]
    ours, theirs = recorder.requests
    assert (ours.method, ours.url) == (theirs.method, theirs.url)
    assert ours.headers["content-type"] == theirs.headers["content-type"]
    assert _decoded_form(ours.content.decode()) == _decoded_form(theirs.content.decode())


async def test_an_error_of_the_http_client_becomes_a_network_error() -> None:
    class Broken(BaseRequest):
        @property
        def read_timeout(self) -> float | None:
            return 1.0

        async def initialize(self) -> None:
            return None

        async def shutdown(self) -> None:
            return None

        async def do_request(self, *args: Any, **kwargs: Any) -> tuple[int, bytes]:
            raise OSError("connection reset")

    with pytest.raises(NetworkError, match="Unknown error in HTTP implementation") as raised:
        await api_request.post(Broken(), "https://api.invalid/bot1:x/getMe", {})
    assert isinstance(raised.value.__cause__, OSError)


def _decoded(value: str) -> Any:
    """A form value as Telegram reads it: JSON where it is JSON (whitespace and escapes aside),
    else the string."""
    try:
        return json.loads(value)
    except ValueError:
        return value


def _decoded_form(form: str | dict[str, str]) -> dict[str, Any]:
    pairs = parse_qs(form, strict_parsing=True) if isinstance(form, str) else form
    decoded = {}
    for name, values in pairs.items():
        if isinstance(values, list):
            assert len(values) == 1, f"{name} sent {len(values)} times"
            values = values[0]
        decoded[name] = _decoded(values)
    return decoded
