"""CPU per Bot API request on the bot's side, by the way the request is made: the bot's
``Sender``, python-telegram-bot's ``Bot.do_api_request`` and ``Bot``'s own methods (with its
objects for the keyboard and link preview options), on the application's bot as
``build_application`` makes it (an ``ExtBot``; ``--rate-limiter`` adds the ``AIORateLimiter``
it has in production).

The requests go to an offline ``BaseRequest`` that reads the parameters as ``HTTPXRequest``
does (``json_parameters`` and ``multipart_data``) and answers at once with Telegram's JSON (an
edited or sent message comes back whole, keyboard and all), so the figures are what each path
costs on top of the HTTP client: encoding the parameters, decoding the answer. Run it in two
trees to compare their ``Sender``::

    python benchmarks/request_paths.py
"""

from __future__ import annotations

import argparse
import asyncio
import time
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import _paths  # noqa: F401  (the repository root on sys.path)
import orjson
from telegram import InlineKeyboardMarkup, LinkPreviewOptions
from telegram.ext import AIORateLimiter, ExtBot
from telegram.request import BaseRequest, RequestData
from telegram.warnings import PTBUserWarning

from tgcheat.bot.sender import Sender

TOKEN = "7000000001:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
BASE_URL = "https://api.invalid/bot"
CHAT_ID = 1001
MESSAGE_ID = 42

#: A hand as the bot shows it: a few lines of HTML and a keyboard of four rows of four.
TEXT = (
    "<b>Your hand</b> (13 cards)\n♠ A 7 9 J · ♥ 2 5 Q · ♦ 3 3 8 K · ♣ 4 10\n"
    "Claim: <b>Sevens</b>. Pick the cards to play face down, then press Play."
)
KEYBOARD = {
    "inline_keyboard": [
        [
            {"text": f"{rank}{suit}", "callback_data": f"p:-100123456789:g7:{row}{col}:{rank}"}
            for col, (rank, suit) in enumerate(zip("A79J", "♠♥♦♣", strict=True))
        ]
        for row in range(4)
    ]
}


def _message(*, edited: bool) -> bytes:
    message: dict[str, Any] = {
        "message_id": MESSAGE_ID,
        "from": {"id": 7000000001, "is_bot": True, "first_name": "tgcheat"},
        "chat": {"id": CHAT_ID, "type": "private", "first_name": "Alice"},
        "date": 1700000000,
        "text": "Your hand (13 cards) …",
        "reply_markup": KEYBOARD,
    }
    if edited:
        message["edit_date"] = 1700000001
    return orjson.dumps({"ok": True, "result": message})


ANSWERS = {
    "getMe": orjson.dumps(
        {
            "ok": True,
            "result": {
                "id": 7000000001,
                "is_bot": True,
                "first_name": "tgcheat",
                "username": "tgcheat_bot",
            },
        }
    ),
    "sendMessage": _message(edited=False),
    "editMessageText": _message(edited=True),
    "answerCallbackQuery": b'{"ok":true,"result":true}',
    "deleteMessage": b'{"ok":true,"result":true}',
}


class OfflineTelegram(BaseRequest):
    """Reads a request as HTTPXRequest does and answers it at once."""

    def __init__(self) -> None:
        self.requests = 0

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
        if request_data is not None:
            request_data.multipart_data  # noqa: B018  (read, as HTTPXRequest does)
            request_data.json_parameters  # noqa: B018
        self.requests += 1
        return 200, ANSWERS[url.rsplit("/", 1)[1]]


Request = Callable[[], Awaitable[Any]]
#: Requests between two looks at the clock.
BATCH = 20


def requests(bot: ExtBot[Any]) -> dict[str, dict[str, Request]]:
    """For each Bot API method: each way of making the same request."""
    sender = Sender(bot)
    edit = {
        "text": TEXT,
        "parse_mode": "HTML",
        "link_preview_options": {"is_disabled": True},
        "reply_markup": KEYBOARD,
        "chat_id": CHAT_ID,
        "message_id": MESSAGE_ID,
    }
    send = {key: value for key, value in edit.items() if key != "message_id"}
    answer = {"callback_query_id": "4382bfdwdsb323b2d9"}
    no_preview = LinkPreviewOptions(is_disabled=True)
    return {
        "editMessageText": {
            "Sender.call": lambda: sender.call("editMessageText", edit),
            "Bot.do_api_request": lambda: bot.do_api_request("editMessageText", api_kwargs=edit),
            "Bot.edit_message_text": lambda: bot.edit_message_text(
                TEXT,
                chat_id=CHAT_ID,
                message_id=MESSAGE_ID,
                parse_mode="HTML",
                link_preview_options=no_preview,
                reply_markup=InlineKeyboardMarkup.de_json(KEYBOARD, bot),
            ),
        },
        "sendMessage": {
            "Sender.call": lambda: sender.call("sendMessage", send, result=True),
            "Bot.do_api_request": lambda: bot.do_api_request("sendMessage", api_kwargs=send),
            "Bot.send_message": lambda: bot.send_message(
                CHAT_ID,
                TEXT,
                parse_mode="HTML",
                link_preview_options=no_preview,
                reply_markup=InlineKeyboardMarkup.de_json(KEYBOARD, bot),
            ),
        },
        "answerCallbackQuery": {
            "Sender.call": lambda: sender.call("answerCallbackQuery", answer),
            "Bot.do_api_request": lambda: bot.do_api_request(
                "answerCallbackQuery", api_kwargs=answer
            ),
            "Bot.answer_callback_query": lambda: bot.answer_callback_query(
                answer["callback_query_id"]
            ),
        },
    }


async def cpu_per_request(request: Request, budget_s: float) -> float:
    """CPU time per request (µs), over as many requests as take ``budget_s`` of CPU."""
    count = 0
    started = time.process_time()
    while True:
        for _ in range(BATCH):
            await request()
        count += BATCH
        spent = time.process_time() - started
        if spent >= budget_s:
            return spent / count * 1e6


async def run(rounds: int, budget_s: float, rate_limiter: bool) -> None:
    limiter = (
        AIORateLimiter(max_retries=3, overall_max_rate=0, group_max_rate=0)
        if rate_limiter
        else None
    )
    bot: ExtBot[Any] = ExtBot(
        TOKEN,
        base_url=BASE_URL,
        request=OfflineTelegram(),
        get_updates_request=OfflineTelegram(),
        rate_limiter=limiter,
    )
    # do_api_request warns on every call for a method Bot has one of its own for.
    warnings.filterwarnings("ignore", message="Please use 'Bot.", category=PTBUserWarning)
    async with bot:
        paths = requests(bot)
        least = {(method, name): float("inf") for method in paths for name in paths[method]}
        for method, name in least:
            await cpu_per_request(paths[method][name], budget_s / 10)  # warm up
        # In rounds, every path once a round, the least kept: this machine's speed drifts, and
        # a slow moment then spoils one figure of a round, not all of one path's.
        for _ in range(rounds):
            for method, name in least:
                micros = await cpu_per_request(paths[method][name], budget_s)
                least[method, name] = min(least[method, name], micros)
    for method, named in paths.items():
        print(f"{method}:")
        baseline = least[method, next(iter(named))]
        for name in named:
            micros = least[method, name]
            print(f"  {name:<26} {micros:7.1f} µs   ×{micros / baseline:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="rounds; the least is shown")
    parser.add_argument("--budget", type=float, default=0.1, help="CPU seconds per path and round")
    parser.add_argument(
        "--rate-limiter", action="store_true", help="the bot with its production AIORateLimiter"
    )
    args = parser.parse_args()
    asyncio.run(run(args.rounds, args.budget, args.rate_limiter))


if __name__ == "__main__":
    main()
