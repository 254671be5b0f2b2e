"""Delivering messages: Telegram's expected errors become plain results, not exceptions.

The bot's own messages (sends, edits, deletes, button answers) go straight to the HTTP client
python-telegram-bot uses, with the parameters already JSON-shaped (``tgcheat.bot.api_request``
says how, and why not through ``Bot``'s methods: these requests are most of what a play costs);
Telegram's errors are raised as python-telegram-bot's own exceptions. An answer is decoded only
when the bot reads it (a sent message's id): an edited message comes back whole, keyboard and
all, and nothing in it is news to the bot.

Telegram's "429 Too Many Requests, retry after N" is never slept out here: a webhook request
that waited would hold the update, and everything the bot does after it, for up to N seconds
(a flood limit is a group's own). It is raised as ``ChatFlooded`` for the chat, and the chat is
remembered until then, so that this process sends nothing more there meanwhile; the sync of the
place leaves what was not shown for the clock (``tgcheat.bot.delivery.sync``).

Every message sent, edited or deleted also counts against the bot's budget across all chats
(``tgcheat.store.send_budget``). A sync takes the tokens of all its requests at once, by their
priorities, before it makes them (``paid``); any other request here answers a person's own
action (a reply, a notice) and is never refused: it is counted with this process's next
request for tokens, without a round trip of its own. A 429 empties that budget only when it is
the bot's limit across all chats (``SendBudget.flooded`` decides): a chat's own limit makes that
chat wait, no other.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime
import enum
import logging
import math
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from http import HTTPStatus
from typing import Any

import orjson
from telegram import Bot
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Conflict,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
)

from tgcheat.bot import api_request
from tgcheat.bot.api_request import JsonParams
from tgcheat.bot.views import Keyboard, View
from tgcheat.metrics import FLOODS, chat_kind
from tgcheat.store.send_budget import SendBudget
from tgcheat.table.place import Place, Where

log = logging.getLogger(__name__)

#: Link previews are off for every message: a game message never links anywhere worth a card.
_NO_PREVIEW = {"is_disabled": True}
#: Chats in a flood wait that one process remembers before it forgets those whose wait is over.
_FLOODS_KEPT = 1024
#: The most messages one deleteMessages request may name (Bot API).
DELETE_AT_ONCE = 100
#: The requests that count against the bot's budget of messages (Telegram counts button
#: answers and questions apart).
_COUNTED = frozenset(
    {"sendMessage", "editMessageText", "editMessageReplyMarkup", "deleteMessage", "deleteMessages"}
)


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


class ChatFlooded(Exception):
    """Telegram answered 429 for a chat: nothing may be sent there before ``until_ms`` (by the
    sender's clock). Raised instead of sleeping; also raised without a request while that wait
    lasts."""

    def __init__(self, chat_id: int, until_ms: int, topic: int | None = None) -> None:
        super().__init__(f"chat {chat_id} is in a flood wait until {until_ms}")
        self.chat_id = chat_id
        self.until_ms = until_ms
        #: The forum topic the refused request was for (the wait is the whole chat's).
        self.topic = topic

    @property
    def place(self) -> Place:
        """Where what the wait held back belongs."""
        return Place(self.chat_id, self.topic)

    @property
    def in_group(self) -> bool:
        return self.chat_id < 0

    @property
    def chat_waits(self) -> bool:
        """Telegram asked this chat to wait: nothing else may go there before ``until_ms``."""
        return True


class TopicGone(Exception):
    """A message to a forum topic was refused because the topic is closed or deleted: its game
    cannot go on there (``Publisher.end_topic``)."""

    def __init__(self, place: Place, reason: str) -> None:
        super().__init__(f"topic {place} cannot be written to: {reason}")
        self.place = place


#: Telegram's words for a topic that is deleted, or closed (to a bot that may not manage
#: topics).
_TOPIC_GONE = ("message thread not found", "topic_closed")


class WebhookReply:
    """The answer to a webhook request may carry one Bot API call, which Telegram then makes
    (its outcome is never told). A button press's answer goes there: one request fewer per
    press, and the press is answered as the bot finishes with it."""

    __slots__ = ("call",)

    def __init__(self) -> None:
        self.call: JsonParams | None = None


_WEBHOOK_REPLY: contextvars.ContextVar[WebhookReply | None] = contextvars.ContextVar(
    "tgcheat_webhook_reply", default=None
)


@contextlib.contextmanager
def webhook_reply() -> Iterator[WebhookReply]:
    """While an update from the webhook is handled: where its answer's call may go."""
    reply = WebhookReply()
    token = _WEBHOOK_REPLY.set(reply)
    try:
        yield reply
    finally:
        _WEBHOOK_REPLY.reset(token)


#: The requests made here were paid for by their caller (``paid``).
_PAID: contextvars.ContextVar[bool] = contextvars.ContextVar("tgcheat_paid", default=False)


class Edit(enum.Enum):
    DONE = "done"
    #: The message no longer exists (deleted by someone): post it anew.
    GONE = "gone"
    #: The chat cannot be reached: the user blocked the bot, or it was removed from the group.
    UNREACHABLE = "unreachable"


class Sender:
    def __init__(self, bot: Bot, clock: Callable[[], int] = wall_clock_ms) -> None:
        self.bot = bot
        #: The time (Unix ms) a flood wait is counted in: Telegram's seconds are real ones.
        self.clock = clock
        #: Chats in a flood wait, and until when (ms).
        self._floods: dict[int, int] = {}
        #: The bot's budget of messages across all chats; None: no budget but Telegram's.
        self.budget: SendBudget | None = None

    @staticmethod
    @contextlib.contextmanager
    def paid() -> Iterator[None]:
        """The requests made inside took their tokens of the bot's budget already (a sync
        takes those of all its requests in one round trip: ``SendBudget.take_many``)."""
        token = _PAID.set(True)
        try:
            yield
        finally:
            _PAID.reset(token)

    async def call(
        self,
        method: str,
        params: JsonParams,
        *,
        result: bool = False,
    ) -> Any:
        """One Bot API request; with ``result``, its result as JSON (else None). Telegram's
        errors are raised as python-telegram-bot raises them (BadRequest, Forbidden, ...),
        but a 429 for a chat as ``ChatFlooded`` (RetryAfter when the request names none)."""
        chat_id = params.get("chat_id")
        if type(chat_id) is not int:
            return await self._post(f"{self.bot.base_url}/{method}", params, result)
        topic = params.get("message_thread_id")
        topic = topic if type(topic) is int else None
        until = self._floods.get(chat_id)
        if until is not None:
            if until > self.clock():
                raise ChatFlooded(chat_id, until, topic)
            del self._floods[chat_id]
        if self.budget is not None and method in _COUNTED and not _PAID.get():
            self.budget.answered()
        try:
            return await self._post(f"{self.bot.base_url}/{method}", params, result)
        except RetryAfter as error:
            FLOODS.labels(chat_kind(chat_id)).inc()
            if self.budget is not None:
                await self.budget.flooded(chat_id, self.clock())
            flooded = self.flooded(chat_id, error, topic)
            wait_s = (flooded.until_ms - self.clock()) / 1000
            log.info("%s to chat %s: Telegram asks to wait %.1f s", method, chat_id, wait_s)
            raise flooded from error

    def flooded(self, chat_id: int, error: RetryAfter, topic: int | None = None) -> ChatFlooded:
        """Remember that Telegram asked to wait before the chat's next message (``error``, a
        429 to a request of the chat, whoever made it); the exception that says so."""
        until = self.clock() + math.ceil(_retry_seconds(error) * 1000)
        if len(self._floods) >= _FLOODS_KEPT:
            now = self.clock()
            self._floods = {chat: end for chat, end in self._floods.items() if end > now}
        self._floods[chat_id] = max(until, self._floods.get(chat_id, 0))
        return ChatFlooded(chat_id, self._floods[chat_id], topic)

    def flood_ends(self, chat_id: int) -> int | None:
        """When the chat's flood wait ends, if this process knows of one that lasts."""
        until = self._floods.get(chat_id)
        return until if until is not None and until > self.clock() else None

    async def _post(self, url: str, params: JsonParams, result: bool) -> Any:
        code, payload = await api_request.post(self.bot.request, url, params)
        if 200 <= code <= 299:
            return orjson.loads(payload)["result"] if result else None
        raise telegram_error(code, payload)

    async def send(
        self,
        to: Where,
        view: View,
        *,
        silent: bool = False,
        reply_to: int | None = None,
    ) -> int | None:
        """Send a new message to a chat (an id) or a place (in its topic); its id, or None when
        the chat cannot be reached (the user never started the bot, or blocked it).
        ``reply_to``: the id of a message in that chat it answers (a command); should that
        message be gone, it is sent all the same. TopicGone when the topic is closed or
        deleted."""
        place = Place.of(to)
        chat_id = place.chat_id
        request = _message_params(view)
        request["chat_id"] = chat_id
        if place.topic is not None:
            request["message_thread_id"] = place.topic
        if silent:
            request["disable_notification"] = True
        if reply_to is not None:
            request["reply_parameters"] = {
                "message_id": reply_to,
                "allow_sending_without_reply": True,
            }
        try:
            sent = await self.call("sendMessage", request, result=True)
        except Forbidden as error:
            log.info("chat %s unreachable: %s", chat_id, error.message)
            return None
        except BadRequest as error:
            if place.topic is not None and any(
                words in error.message.lower() for words in _TOPIC_GONE
            ):
                raise TopicGone(place, error.message) from error
            raise
        return int(sent["message_id"])

    async def answer(self, query_id: str, text: str | None = None) -> None:
        """Answer a button press; a re-delivered press may already have been answered."""
        request: JsonParams = {"callback_query_id": query_id}
        if text:
            request["text"] = text
        reply = _WEBHOOK_REPLY.get()
        if reply is not None and (reply.call is None or _replaces(reply.call, request)):
            reply.call = {"method": "answerCallbackQuery", **request}
            return
        try:
            await self.call("answerCallbackQuery", request)
        except (BadRequest, RetryAfter) as error:
            # Already answered, or Telegram asks the bot to slow down: the spinner stops by
            # itself, and a pop-up is not worth holding anything for.
            log.info("callback %s not answered: %s", query_id, error)

    async def answer_inline(
        self, query_id: str, results: list[dict[str, Any]], cache_s: int
    ) -> None:
        """Answer an inline query with the cards a person may post (no message of the bot's:
        outside its send budget); one answered late (Telegram waits seconds) is let go."""
        request: JsonParams = {
            "inline_query_id": query_id,
            "results": results,
            "cache_time": cache_s,
            "is_personal": True,
        }
        try:
            await self.call("answerInlineQuery", request)
        except BadRequest as error:
            log.info("inline query %s not answered: %s", query_id, error)

    async def prepare_inline(self, user_id: int, result: dict[str, Any]) -> str:
        """A card kept by Telegram for ``user_id`` to post into a chat they pick from the Mini
        App (``shareMessage``); its id."""
        request: JsonParams = {
            "user_id": user_id,
            "result": result,
            "allow_user_chats": True,
            "allow_group_chats": True,
            "allow_channel_chats": True,
        }
        prepared = await self.call("savePreparedInlineMessage", request, result=True)
        return str(prepared["id"])

    async def edit(self, chat: Where, message_id: int, view: View) -> Edit:
        """Edit a message in place (the chat's id names it with the message's: no topic)."""
        request = _message_params(view)
        request["chat_id"] = Place.of(chat).chat_id
        request["message_id"] = message_id
        try:
            await self.call("editMessageText", request)
        except BadRequest as error:
            text = error.message.lower()
            if "message is not modified" in text:
                return Edit.DONE
            if "message to edit not found" in text or "message can't be edited" in text:
                return Edit.GONE
            raise
        except Forbidden:
            return Edit.UNREACHABLE
        return Edit.DONE

    async def edit_markup(self, chat: Where, message_id: int, markup: Keyboard | None) -> None:
        chat_id = Place.of(chat).chat_id
        request: JsonParams = {"chat_id": chat_id, "message_id": message_id}
        if markup is not None:
            request["reply_markup"] = markup
        try:
            await self.call("editMessageReplyMarkup", request)
        except BadRequest as error:
            if "message is not modified" not in error.message.lower():
                log.info("markup of %s/%s not edited: %s", chat_id, message_id, error.message)
        except (Forbidden, ChatFlooded):
            # Taking the buttons off an old message: its buttons are refused as stale anyway.
            pass

    async def delete(self, chat: Where, message_id: int) -> None:
        """Delete a message; ChatFlooded in a flood wait (the caller may delete it later)."""
        chat_id = Place.of(chat).chat_id
        try:
            await self.call("deleteMessage", {"chat_id": chat_id, "message_id": message_id})
        except (BadRequest, Forbidden) as error:
            # Already gone, or too old to delete (48 h): nothing is lost either way.
            log.info("message %s/%s not deleted: %s", chat_id, message_id, error.message)

    async def delete_many(self, chat: Where, message_ids: Sequence[int]) -> None:
        """Delete messages of one chat, up to ``DELETE_AT_ONCE`` a request; ChatFlooded in a
        flood wait. Those already gone or too old are skipped by Telegram."""
        chat_id = Place.of(chat).chat_id
        for start in range(0, len(message_ids), DELETE_AT_ONCE):
            batch = list(message_ids[start : start + DELETE_AT_ONCE])
            try:
                await self.call("deleteMessages", {"chat_id": chat_id, "message_ids": batch})
            except (BadRequest, Forbidden) as error:
                log.info("messages of %s not deleted: %s", chat_id, error.message)


def _replaces(waiting: JsonParams, answer: JsonParams) -> bool:
    """Whether ``answer`` takes the place of the answer still waiting in the webhook's reply:
    nothing has gone yet, so a pop-up found after the press was answered without one (a
    refusal) is what Telegram gets."""
    return (
        "text" in answer
        and "text" not in waiting
        and waiting.get("callback_query_id") == answer["callback_query_id"]
    )


def _message_params(view: View) -> JsonParams:
    request: JsonParams = {
        "text": view.text,
        "parse_mode": "HTML",
        "link_preview_options": _NO_PREVIEW,
    }
    if view.markup is not None:
        request["reply_markup"] = view.markup
    return request


def telegram_error(status: int, payload: bytes) -> TelegramError:
    """The exception python-telegram-bot raises for Telegram's answer with this HTTP status
    (as ``BaseRequest`` maps them): the handlers catch those they expect by their class."""
    try:
        phrase = f"{HTTPStatus(status).phrase} ({status})"
    except ValueError:
        phrase = f"Unknown HTTPError ({status})"
    try:
        answer = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return NetworkError(f"{phrase}. Parsing the server response {payload!r} failed")
    if not isinstance(answer, dict):
        answer = {}
    message = str(answer.get("description") or phrase)
    parameters = answer.get("parameters") or {}
    if parameters.get("migrate_to_chat_id"):
        return ChatMigrated(int(parameters["migrate_to_chat_id"]))
    if parameters.get("retry_after"):
        return RetryAfter(int(parameters["retry_after"]))
    match status:
        case HTTPStatus.FORBIDDEN:
            return Forbidden(message)
        case HTTPStatus.NOT_FOUND | HTTPStatus.UNAUTHORIZED:
            return InvalidToken(message)
        case HTTPStatus.BAD_REQUEST:
            return BadRequest(message)
        case HTTPStatus.CONFLICT:
            return Conflict(message)
        case _:
            return NetworkError(message)


def _retry_seconds(error: RetryAfter) -> float:
    with warnings.catch_warnings():
        # Reading retry_after warns that its type becomes a timedelta; either is taken.
        warnings.simplefilter("ignore")
        wait = error.retry_after
    if isinstance(wait, datetime.timedelta):
        return wait.total_seconds()
    return float(wait)
