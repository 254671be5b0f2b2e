"""The sender raises, for each of Telegram's error answers, the exception python-telegram-bot's
own request path raises for it (the handlers catch them by class)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from telegram.error import TelegramError
from telegram.request import BaseRequest, RequestData

from tgcheat.bot.sender import telegram_error


class Canned(BaseRequest):
    """Answers every request with one status and body."""

    def __init__(self, status: int, body: bytes) -> None:
        self.status, self.body = status, body

    @property
    def read_timeout(self) -> float | None:
        return 1.0

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None

    async def do_request(self, *args: Any, **kwargs: Any) -> tuple[int, bytes]:
        return self.status, self.body


def _body(description: str | None, **parameters: int) -> bytes:
    answer: dict[str, Any] = {"ok": False}
    if description is not None:
        answer["description"] = description
    if parameters:
        answer["parameters"] = parameters
    return json.dumps(answer).encode()


CASES = [
    (400, _body("Bad Request: message is not modified")),
    (400, _body("Bad Request: message to edit not found")),
    (403, _body("Forbidden: bot was blocked by the user")),
    (401, _body("Unauthorized")),
    (404, _body("Not Found")),
    (409, _body("Conflict: terminated by other getUpdates request")),
    (429, _body("Too Many Requests: retry after 7", retry_after=7)),
    (400, _body("Bad Request: group chat was upgraded", migrate_to_chat_id=-1001234)),
    (502, _body(None)),
    (502, b"<html>Bad Gateway</html>"),
    (500, _body("Internal Server Error")),
    (599, b""),
]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize(("status", "body"), CASES)
async def test_the_same_exception_as_python_telegram_bot(status: int, body: bytes) -> None:
    with pytest.raises(TelegramError) as theirs:
        await Canned(status, body).post("https://api.invalid/bot1:x/sendMessage", RequestData())
    ours = telegram_error(status, body)
    assert type(ours) is type(theirs.value)
    assert str(ours) == str(theirs.value)
    for detail in ("_retry_after", "new_chat_id"):
        assert getattr(ours, detail, None) == getattr(theirs.value, detail, None)
