"""A button press (Telegram's callback query), as much of it as the bot reads.

Button presses are most of a game's updates. Building python-telegram-bot's Update from the
JSON costs more than the whole of what the bot then does with the press's few fields, so the
webhook reads them straight from the JSON (`tap_from_json`); polling, which gets Update objects,
converts those (`tap_from_update`). Either way the handlers see the same `Tap`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeGuard

from telegram import Update


@dataclass(frozen=True, slots=True)
class Tap:
    update_id: int
    #: The callback query's id, to answer it.
    query_id: str
    user_id: int
    #: The language of the user's Telegram app, if Telegram tells it.
    language_code: str | None
    #: The button's callback data: untrusted (a client may send anything).
    data: str | None
    #: The chat and id of the message whose button was pressed; None for a button of an
    #: inline message (the bot sends none) or when Telegram leaves the message out.
    chat_id: int | None = None
    message_id: int | None = None
    #: The pressed message's inline keyboard as Telegram sent it with the press (its rows of
    #: button objects, unread until asked: ``offered``); None when the message has none or
    #: Telegram left it out (a message too old to be sent with the press).
    keyboard: Any = None
    #: The presser's name in Telegram (first and last), as a quick game shows them.
    full_name: str = ""

    def pressed_message(self) -> tuple[int, int] | None:
        """(chat, message id) of the pressed message when it really carries the pressed
        button (``offered``); None otherwise: the only message a press may change."""
        if self.chat_id is None or self.message_id is None or not self.offered():
            return None
        return self.chat_id, self.message_id

    def offered(self) -> bool:
        """Whether the pressed message really carries a button with this press's data. The
        data is the client's to choose; the message is Telegram's, so a press made up by a
        custom client on some other message of the bot is told apart."""
        rows = self.keyboard
        if self.data is None or not isinstance(rows, list):
            return False
        return any(
            isinstance(button, dict) and button.get("callback_data") == self.data
            for row in rows
            if isinstance(row, list)
            for button in row
        )


def tap_from_update(update: Update) -> Tap | None:
    query = update.callback_query
    if query is None:
        return None
    message = query.message
    return Tap(
        update_id=update.update_id,
        query_id=query.id,
        user_id=query.from_user.id,
        language_code=query.from_user.language_code,
        data=query.data,
        chat_id=message.chat.id if message is not None else None,
        message_id=message.message_id if message is not None else None,
        keyboard=_keyboard_of(message),
        full_name=query.from_user.full_name,
    )


def _keyboard_of(message: Any) -> Any:
    markup = getattr(message, "reply_markup", None)
    if markup is None:
        return None
    return markup.to_dict().get("inline_keyboard")


def tap_from_json(data: dict[str, Any]) -> Tap | None:
    """The press an update's JSON carries; None when it is not a well-formed callback query
    (any other update, or a malformed one: python-telegram-bot's parsing then judges it)."""
    update_id = data.get("update_id")
    query = data.get("callback_query")
    if not _is_int(update_id) or not isinstance(query, dict):
        return None
    query_id = query.get("id")
    sender = query.get("from")
    button_data = query.get("data")
    if not isinstance(query_id, str) or not isinstance(sender, dict):
        return None
    user_id = sender.get("id")
    language_code = sender.get("language_code")
    if not _is_int(user_id) or not isinstance(language_code, str | None):
        return None
    if not isinstance(button_data, str | None):
        return None
    chat_id = message_id = keyboard = None
    message = query.get("message")
    if message is not None:
        if not isinstance(message, dict):
            return None
        chat = message.get("chat")
        chat_id = chat.get("id") if isinstance(chat, dict) else None
        message_id = message.get("message_id")
        if not _is_int(chat_id) or not _is_int(message_id):
            return None
        markup = message.get("reply_markup")
        keyboard = markup.get("inline_keyboard") if isinstance(markup, dict) else None
    names = (sender.get("first_name"), sender.get("last_name"))
    full_name = " ".join(name for name in names if isinstance(name, str) and name)
    return Tap(
        update_id,
        query_id,
        user_id,
        language_code,
        button_data,
        chat_id,
        message_id,
        keyboard,
        full_name,
    )


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
