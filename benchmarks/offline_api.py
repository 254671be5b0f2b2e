"""A fast offline Bot API for benchmarks: a python-telegram-bot ``BaseRequest`` that answers at
once, with results shaped like Telegram's, and keeps only counters.

``tests/support/fake_telegram.py`` (FakeTelegram) checks every request against the Bot API spec,
parses the HTML of every text and keeps every message with its history: right for tests, but in
a benchmark that work would be counted as the bot's own cost, and its records grow with every
call. This class does what the bot's side of a real HTTP request costs, minus the network:
the parameters are read as ``HTTPXRequest`` sends them (``RequestData.json_parameters``: each
JSON-encoded unless a string), and the answer is JSON as Telegram's (a sent or edited message
comes back with its text, chat, sender and keyboard), which python-telegram-bot decodes and
hands over raw or as its objects, as the bot asks.

Answered: getMe, sendMessage, editMessageText, editMessageReplyMarkup, answerCallbackQuery,
deleteMessage, getChatMember; any other method answers ``true``. Nothing is refused.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import orjson
from telegram.request import BaseRequest, RequestData

BOT_ID = 7000000001
BOT_USERNAME = "tgcheat_bot"

#: ``record(method, chat, toast)``: chat is "group", "private" or "none" (no chat_id, e.g.
#: answerCallbackQuery); toast is True for a callback answer that shows a text.
Recorder = Callable[[str, str, bool], None]


def chat_kind(chat_id: object) -> str:
    if isinstance(chat_id, int) and not isinstance(chat_id, bool):
        return "group" if chat_id < 0 else "private"
    if isinstance(chat_id, str) and chat_id:
        return "group" if chat_id.startswith(("-", "@")) else "private"
    return "none"


class FastBotAPI(BaseRequest):
    """Answers every Bot API call at once; see the module docstring."""

    def __init__(
        self,
        *,
        username: str = BOT_USERNAME,
        bot_id: int = BOT_ID,
        record: Recorder | None = None,
    ) -> None:
        self.username = username
        self.bot_id = bot_id
        self.record = record
        # Per-chat message id counters: one int per chat, never a list of calls.
        self._next_id: dict[int, int] = {}
        self._bot_user = {
            "id": bot_id,
            "is_bot": True,
            "first_name": "tgcheat",
            "username": username,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
        }
        self._sender = {"id": bot_id, "is_bot": True, "first_name": "tgcheat", "username": username}

    @property
    def read_timeout(self) -> float | None:
        return 5.0

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: object = BaseRequest.DEFAULT_NONE,
        write_timeout: object = BaseRequest.DEFAULT_NONE,
        connect_timeout: object = BaseRequest.DEFAULT_NONE,
        pool_timeout: object = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        api = url.rsplit("/", 1)[-1].lower()
        # What HTTPXRequest sends: every parameter a string, JSON-encoded unless a string.
        params = request_data.json_parameters if request_data is not None else {}
        chat_id = _chat_id(params.get("chat_id"))
        if self.record is not None:
            toast = api == "answercallbackquery" and bool(params.get("text"))
            self.record(api, chat_kind(chat_id), toast)
        result = self._answer(api, params, chat_id)
        return 200, b'{"ok":true,"result":' + result + b"}"

    def _answer(self, api: str, params: dict[str, str], chat_id: int | None) -> bytes:
        """The result as Telegram's JSON."""
        if api == "sendmessage" and chat_id is not None:
            message_id = self._next_id.get(chat_id, 0) + 1
            self._next_id[chat_id] = message_id
            return self._message(params, chat_id, message_id, edited=False)
        if api in ("editmessagetext", "editmessagereplymarkup"):
            if chat_id is None:
                return b"true"  # an inline message
            message_id = int(params.get("message_id", "1"))
            return self._message(params, chat_id, message_id, edited=True)
        if api == "getme":
            return orjson.dumps(self._bot_user)
        if api == "getchatmember":
            user_id = int(params.get("user_id", "0"))
            member = {
                "status": "member",
                "user": {"id": user_id, "is_bot": False, "first_name": f"User {user_id}"},
            }
            return orjson.dumps(member)
        return b"true"

    def _message(
        self, params: dict[str, str], chat_id: int, message_id: int, *, edited: bool
    ) -> bytes:
        now = int(time.time())
        if chat_kind(chat_id) == "group":
            chat: dict[str, Any] = {"id": chat_id, "type": "supergroup", "title": "Group"}
        else:
            chat = {"id": chat_id, "type": "private", "first_name": f"User {chat_id}"}
        message: dict[str, Any] = {
            "message_id": message_id,
            "from": self._sender,
            "chat": chat,
            "date": now,
        }
        if edited:
            message["edit_date"] = now
        text = params.get("text")
        if text is not None:
            message["text"] = text
        encoded = orjson.dumps(message)
        markup = params.get("reply_markup")
        if markup is not None and markup.startswith('{"inline_keyboard"'):
            # The keyboard comes back as it was sent: its JSON goes in as it is.
            encoded = b'%s,"reply_markup":%s}' % (encoded[:-1], markup.encode())
        return encoded


def _chat_id(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None  # a @username: no benchmark sends one
