"""Delivering messages: Telegram's expected errors become plain results, not exceptions.

Messages are sent and edited with raw Bot API requests: the bot keeps only a sent message's id,
so building python-telegram-bot's Message object from each answer would be wasted work on the
hot path (it was the largest single cost of a play). Method names are given in lower case,
which Telegram accepts, because python-telegram-bot warns when ``do_api_request`` is called
with the name of one of its own methods.
"""

from __future__ import annotations

import enum
import logging
from typing import Any

from telegram import Bot, CallbackQuery, LinkPreviewOptions
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden

from tgcheat.bot.views import Keyboard, View

log = logging.getLogger(__name__)

_NO_PREVIEW = LinkPreviewOptions(is_disabled=True)


class Edit(enum.Enum):
    DONE = "done"
    #: The message no longer exists (deleted by someone): post it anew.
    GONE = "gone"
    #: The chat cannot be reached: the user blocked the bot, or it was removed from the group.
    UNREACHABLE = "unreachable"


class Sender:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def send(self, chat_id: int, view: View, *, silent: bool = False) -> int | None:
        """Send a new message; its id, or None when the chat cannot be reached (the user never
        started the bot, or blocked it)."""
        request = _message_kwargs(view) | {"chat_id": chat_id}
        if silent:
            request["disable_notification"] = True
        try:
            result = await self.bot.do_api_request("sendmessage", api_kwargs=request)
        except Forbidden as error:
            log.info("chat %s unreachable: %s", chat_id, error.message)
            return None
        return int(result["message_id"])

    async def answer(self, query: CallbackQuery, text: str | None = None) -> None:
        """Answer a button press; a re-delivered press may already have been answered."""
        try:
            await query.answer(text)
        except BadRequest as error:
            log.info("callback %s not answered: %s", query.id, error.message)

    async def edit(self, chat_id: int, message_id: int, view: View) -> Edit:
        """Edit a message in place."""
        request = _message_kwargs(view) | {"chat_id": chat_id, "message_id": message_id}
        try:
            await self.bot.do_api_request("editmessagetext", api_kwargs=request)
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

    async def edit_markup(self, chat_id: int, message_id: int, markup: Keyboard | None) -> None:
        request: dict[str, Any] = {"chat_id": chat_id, "message_id": message_id}
        if markup is not None:
            request["reply_markup"] = markup
        try:
            await self.bot.do_api_request("editmessagereplymarkup", api_kwargs=request)
        except BadRequest as error:
            if "message is not modified" not in error.message.lower():
                log.info("markup of %s/%s not edited: %s", chat_id, message_id, error.message)
        except Forbidden:
            pass

    async def delete(self, chat_id: int, message_id: int) -> None:
        try:
            await self.bot.delete_message(chat_id, message_id)
        except (BadRequest, Forbidden) as error:
            # Already gone, or too old to delete (48 h): nothing is lost either way.
            log.info("message %s/%s not deleted: %s", chat_id, message_id, error.message)

    async def upsert(self, chat_id: int, message_id: int | None, view: View) -> int | None:
        """Edit the message if it still exists, else post it anew; the id now showing it."""
        if message_id is not None:
            outcome = await self.edit(chat_id, message_id, view)
            if outcome is Edit.DONE:
                return message_id
            if outcome is Edit.UNREACHABLE:
                return None
        return await self.send(chat_id, view, silent=True)


def _message_kwargs(view: View) -> dict[str, Any]:
    request: dict[str, Any] = {
        "text": view.text,
        "parse_mode": ParseMode.HTML,
        "link_preview_options": _NO_PREVIEW,
    }
    if view.markup is not None:
        request["reply_markup"] = view.markup
    return request
