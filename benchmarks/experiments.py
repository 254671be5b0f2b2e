"""Prototypes of the proposals from the profile, applied to the benchmark server only (by
``serve_bench.py --experiments NAME,...``), so that their effect is measured before anyone
changes tgcheat. Nothing here is meant to be used as it is: each names the change to make.

- ``strip-keyboard``: a callback query carries the whole message its button is on, keyboard
  included, and python-telegram-bot builds an object for every button; no handler reads them.
  Proposal: in ``tgcheat/web.py`` ``webhook``, drop ``callback_query.message.reply_markup``
  (and ``entities``) from the JSON before ``Update.de_json``. Here the benchmark wrapper does it
  to the request body.
- ``raw-results``: ``Sender.send`` needs only the new message's id and ``Sender.edit`` nothing,
  but python-telegram-bot parses every answer into a ``Message`` (with its keyboard). Proposal:
  in ``tgcheat/bot/sender.py``, post with ``Bot.do_api_request`` (the raw JSON result) and keep
  the message id.
- ``dict-keyboards`` (needs ``raw-results``): views build keyboards from python-telegram-bot's
  ``InlineKeyboardButton`` objects, whose every attribute set is checked, and the sender turns
  them back into dicts. Proposal: in ``tgcheat/bot/views.py``, build the keyboard as the JSON
  dicts the Bot API takes.
"""

from __future__ import annotations

import contextlib
import json
from types import SimpleNamespace
from typing import Any

from telegram.error import BadRequest, Forbidden

NAMES = ("strip-keyboard", "raw-results", "dict-keyboards")


def strip_keyboard(body: bytes) -> bytes:
    """The update without the keyboard and entities of a callback query's message."""
    try:
        update = json.loads(body)
        message = update["callback_query"]["message"]
    except (ValueError, KeyError, TypeError):
        return body
    if not isinstance(message, dict):
        return body
    message.pop("reply_markup", None)
    message.pop("entities", None)
    return json.dumps(update).encode()


class LightButton:
    """An inline keyboard button as the Bot API's JSON."""

    __slots__ = ("data",)

    def __init__(self, text: str, **fields: Any) -> None:
        self.data = {"text": text, **{k: v for k, v in fields.items() if v is not None}}


class LightMarkup:
    """An inline keyboard as the Bot API's JSON."""

    __slots__ = ("inline_keyboard",)

    def __init__(self, rows: Any) -> None:
        self.inline_keyboard = [list(row) for row in rows]

    def to_dict(self) -> dict[str, Any]:
        return {
            "inline_keyboard": [[button.data for button in row] for row in self.inline_keyboard]
        }


def _message_kwargs(view: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "text": view.text,
        "parse_mode": "HTML",
        "link_preview_options": {"is_disabled": True},
    }
    if view.markup is not None:
        kwargs["reply_markup"] = view.markup.to_dict()
    return kwargs


def _apply_raw_results() -> None:
    from tgcheat.bot import sender as sender_module

    edit_outcome = sender_module.Edit

    async def send(self: Any, chat_id: int, view: Any, *, silent: bool = False) -> Any:
        kwargs = _message_kwargs(view)
        kwargs.update(chat_id=chat_id, disable_notification=silent)
        try:
            # The lower-case name: Telegram's method names are case-insensitive, and
            # do_api_request warns for a name the Bot has a method of.
            result = await self.bot.do_api_request("sendmessage", api_kwargs=kwargs)
        except Forbidden:
            return None
        return SimpleNamespace(message_id=result["message_id"])

    async def edit(self: Any, chat_id: int, message_id: int, view: Any) -> Any:
        kwargs = _message_kwargs(view)
        kwargs.update(chat_id=chat_id, message_id=message_id)
        try:
            await self.bot.do_api_request("editmessagetext", api_kwargs=kwargs)
        except BadRequest as error:
            text = error.message.lower()
            if "message is not modified" in text:
                return edit_outcome.DONE
            if "message to edit not found" in text or "message can't be edited" in text:
                return edit_outcome.GONE
            raise
        except Forbidden:
            return edit_outcome.UNREACHABLE
        return edit_outcome.DONE

    async def edit_markup(self: Any, chat_id: int, message_id: int, markup: Any) -> None:
        kwargs: dict[str, Any] = {"chat_id": chat_id, "message_id": message_id}
        if markup is not None:
            kwargs["reply_markup"] = markup.to_dict()
        with contextlib.suppress(BadRequest, Forbidden):
            await self.bot.do_api_request("editmessagereplymarkup", api_kwargs=kwargs)

    sender_module.Sender.send = send  # type: ignore[method-assign]
    sender_module.Sender.edit = edit  # type: ignore[method-assign]
    sender_module.Sender.edit_markup = edit_markup  # type: ignore[method-assign]


def _apply_dict_keyboards() -> None:
    from tgcheat.bot import views

    views.InlineKeyboardButton = LightButton  # type: ignore[attr-defined,misc,assignment]
    views.InlineKeyboardMarkup = LightMarkup  # type: ignore[attr-defined,misc,assignment]


def apply(names: list[str]) -> None:
    """Patch tgcheat in this process; ``strip-keyboard`` is applied by the web wrapper."""
    unknown = set(names) - set(NAMES)
    if unknown:
        raise ValueError(f"unknown experiments: {sorted(unknown)}; known: {NAMES}")
    if "dict-keyboards" in names and "raw-results" not in names:
        raise ValueError("dict-keyboards needs raw-results")
    if "raw-results" in names:
        _apply_raw_results()
    if "dict-keyboards" in names:
        _apply_dict_keyboards()
