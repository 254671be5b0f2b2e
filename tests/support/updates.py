"""Real Telegram update JSON for tests.

``UpdateFactory`` builds the dicts Telegram sends to bots (exact Bot API shapes, so
``telegram.Update.de_json(data, bot)`` parses them) with increasing ``update_id``.  Given a
``FakeTelegram`` it keeps the fake's picture of the world in step, as Telegram would: message ids
come from the fake's per-chat counter, users who send /start may be messaged privately, a bot
removed from a group gets 403 there, and so on.

    users = UpdateFactory(fake)
    alice = User(1001, "Alice")
    table = group(-1001234567890, "Cheat table")
    update = Update.de_json(users.command(table, alice, "/new"), app.bot)
    await app.process_update(update)
    await app.process_update(Update.de_json(users.press(fake, alice, table["id"], "Join"), app.bot))
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .fake_telegram import (
    BOT_ID,
    DEFAULT_BOT_USERNAME,
    FakeTelegram,
    JsonDict,
    MessageRecord,
    chat_member_dict,
    chat_type_for_id,
)

# Telegram marks every "/command" (optionally "@botname") that starts a word.
_COMMAND_IN_TEXT = re.compile(r"(?<!\S)/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?")
_LEAVING_STATUSES = ("left", "kicked")
_GROUP_ANONYMOUS_BOT: JsonDict = {
    "id": 1087968824,
    "is_bot": True,
    "first_name": "Group",
    "username": "GroupAnonymousBot",
}
#: The sender Telegram shows for a message written in a group on behalf of a channel.
_CHANNEL_BOT: JsonDict = {
    "id": 136817688,
    "is_bot": True,
    "first_name": "Channel",
    "username": "Channel_Bot",
}


@dataclass(frozen=True)
class User:
    """A human Telegram user."""

    id: int
    first_name: str
    username: str | None = None
    language_code: str | None = "en"
    last_name: str | None = None

    def to_dict(self) -> JsonDict:
        user: JsonDict = {"id": self.id, "is_bot": False, "first_name": self.first_name}
        for key in ("last_name", "username", "language_code"):
            value = getattr(self, key)
            if value is not None:
                user[key] = value
        return user


def private(user: User) -> JsonDict:
    """The private chat between ``user`` and the bot."""
    chat: JsonDict = {"id": user.id, "type": "private", "first_name": user.first_name}
    if user.last_name:
        chat["last_name"] = user.last_name
    if user.username:
        chat["username"] = user.username
    return chat


def group(chat_id: int = -1001000000001, title: str = "Cheat table") -> JsonDict:
    """A group chat; ids of the form -100xxxxxxxxxx are supergroups, like on Telegram."""
    if chat_id >= 0:
        raise ValueError(f"group chat ids are negative, got {chat_id}")
    return {"id": chat_id, "type": chat_type_for_id(chat_id), "title": title}


def forum(chat_id: int = -1003000000001, title: str = "Friday") -> JsonDict:
    """A forum supergroup (a group with topics), as a message's ``chat`` shows it."""
    return {**group(chat_id, title), "type": "supergroup", "is_forum": True}


def channel(chat_id: int = -1002000000001, title: str = "Cheat news") -> JsonDict:
    """A channel, as the ``sender_chat`` of a message written on its behalf."""
    return {"id": chat_id, "type": "channel", "title": title}


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def command_entities(text: str) -> list[JsonDict]:
    """The bot_command entities Telegram attaches to ``text`` (offsets in UTF-16 units)."""
    return [
        {
            "type": "bot_command",
            "offset": _utf16_len(text[: match.start()]),
            "length": _utf16_len(match.group()),
        }
        for match in _COMMAND_IN_TEXT.finditer(text)
    ]


class UpdateFactory:
    """Builds updates with increasing update_id; keeps a given FakeTelegram in step."""

    def __init__(
        self,
        fake: FakeTelegram | None = None,
        *,
        bot_username: str | None = None,
        first_update_id: int = 1,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.fake = fake
        self.bot_username = bot_username or (fake.username if fake else DEFAULT_BOT_USERNAME)
        self._clock = clock or (fake.clock if fake else time.time)
        self._update_ids = itertools.count(first_update_id)
        self._callback_ids = itertools.count(1)
        self._message_ids: dict[int, Iterator[int]] = {}

    # -- building blocks ------------------------------------------------------------------------

    @property
    def bot_user(self) -> JsonDict:
        if self.fake is not None:
            return self.fake.bot_sender
        return {
            "id": BOT_ID,
            "is_bot": True,
            "first_name": "tgcheat",
            "username": self.bot_username,
        }

    def update(self, **payload: Any) -> JsonDict:
        """An update with the next update_id and the given payload (e.g. message=...)."""
        return {"update_id": next(self._update_ids), **payload}

    def _now(self) -> int:
        return int(self._clock())

    def _next_message_id(self, chat_id: int) -> int:
        if self.fake is not None:
            return self.fake.next_message_id(chat_id)
        return next(self._message_ids.setdefault(chat_id, itertools.count(1)))

    def _note(self, chat: Mapping[str, Any], *users: User) -> None:
        """Tell the fake about the chat and users so its answers use their names; users who
        act in a group are in it (unless the fake knows they left)."""
        if self.fake is None:
            return
        group_chat = chat["type"] != "private"
        if group_chat:
            self.fake.register_chat(chat)
        for user in users:
            self.fake.register_user(user.to_dict())
            if group_chat:
                self.fake.note_member(int(chat["id"]), user.id)

    def message(self, chat: Mapping[str, Any], user: User, **content: Any) -> JsonDict:
        """A Message sent by ``user`` in ``chat`` with the given content fields."""
        message: JsonDict = {
            "message_id": self._next_message_id(int(chat["id"])),
            "from": user.to_dict(),
            "chat": dict(chat),
            "date": self._now(),
            **content,
        }
        self._note(chat, user)
        if self.fake is not None:
            self.fake.note_incoming(message)
        return message

    # -- messages -------------------------------------------------------------------------------

    def text(self, chat: Mapping[str, Any], user: User, text: str) -> JsonDict:
        """A text message; commands in it get bot_command entities, as Telegram adds them."""
        content: JsonDict = {"text": text}
        entities = command_entities(text)
        if entities:
            content["entities"] = entities
        return self.update(message=self.message(chat, user, **content))

    def command(
        self,
        chat: Mapping[str, Any],
        user: User,
        command: str,
        args: str | None = None,
        *,
        reply_to: Mapping[str, Any] | None = None,
    ) -> JsonDict:
        """``/command [args]`` (``command`` may be ``/new@tgcheat_bot``; the slash is optional),
        as a reply to the message ``reply_to`` if given."""
        message = self.message(chat, user, **_command_content(command, args, reply_to))
        return self.update(message=message)

    def topic_command(
        self,
        chat: Mapping[str, Any],
        user: User,
        command: str,
        args: str | None = None,
        *,
        topic: int,
        topic_name: str | None = "Cheat night",
    ) -> JsonDict:
        """``/command`` written in forum topic ``topic`` (its ``message_thread_id``, which is
        the id of the topic's creation message). As Telegram sends it: ``is_topic_message``,
        and, since it replies to nothing else, the topic's creation message as the message it
        replies to (with the topic's name), unless ``topic_name`` is None."""
        content = _command_content(command, args, None)
        content |= {"message_thread_id": topic, "is_topic_message": True}
        if topic_name is not None:
            content["reply_to_message"] = self._topic_created(chat, user, topic, topic_name)
        return self.update(message=self.message(chat, user, **content))

    def _topic_created(
        self, chat: Mapping[str, Any], user: User, topic: int, name: str
    ) -> JsonDict:
        return {
            "message_id": topic,
            "from": user.to_dict(),
            "chat": dict(chat),
            "date": self._now(),
            "message_thread_id": topic,
            "forum_topic_created": {"name": name, "icon_color": 7322096},
        }

    def topic_closed(self, chat: Mapping[str, Any], user: User, topic: int) -> JsonDict:
        """The service message of forum topic ``topic`` being closed (by ``user``)."""
        content = {
            "message_thread_id": topic,
            "is_topic_message": True,
            "forum_topic_closed": {},
        }
        return self.update(message=self.message(chat, user, **content))

    def topic_reopened(self, chat: Mapping[str, Any], user: User, topic: int) -> JsonDict:
        """The service message of forum topic ``topic`` being reopened (by ``user``)."""
        content = {
            "message_thread_id": topic,
            "is_topic_message": True,
            "forum_topic_reopened": {},
        }
        return self.update(message=self.message(chat, user, **content))

    def message_as_chat(
        self, chat: Mapping[str, Any], sender_chat: Mapping[str, Any], **content: Any
    ) -> JsonDict:
        """A Message written in the group ``chat`` on behalf of ``sender_chat``: the group
        itself (an anonymous admin; Telegram names GroupAnonymousBot as the sender) or a
        channel (Channel_Bot). Whoever wrote it stays unknown."""
        sender = _GROUP_ANONYMOUS_BOT if sender_chat["id"] == chat["id"] else _CHANNEL_BOT
        message: JsonDict = {
            "message_id": self._next_message_id(int(chat["id"])),
            "from": dict(sender),
            "sender_chat": dict(sender_chat),
            "chat": dict(chat),
            "date": self._now(),
            **content,
        }
        if self.fake is not None:
            self.fake.register_chat(chat)
            self.fake.note_incoming(message)
        return message

    def command_as_chat(
        self,
        chat: Mapping[str, Any],
        sender_chat: Mapping[str, Any],
        command: str,
        args: str | None = None,
    ) -> JsonDict:
        """``/command [args]`` written on behalf of ``sender_chat`` (``message_as_chat``)."""
        content = _command_content(command, args, None)
        return self.update(message=self.message_as_chat(chat, sender_chat, **content))

    def start_private(
        self, user: User, payload: str | None = None, fake: FakeTelegram | None = None
    ) -> JsonDict:
        """The user's /start (deep link payload optional) in their private chat with the bot.

        Like Telegram, this allows the bot to message the user from now on: the user is added to
        ``fake.started_users`` (and no longer counts as having blocked the bot).
        """
        fake = fake or self.fake
        if fake is not None:
            fake.started_users.add(user.id)
            fake.blocked_users.discard(user.id)
        return self.command(private(user), user, "/start", payload)

    def left_chat_member(
        self, chat: Mapping[str, Any], user: User, actor: User | None = None
    ) -> JsonDict:
        """The service message for ``user`` leaving (or ``actor`` removing them from) a group."""
        if self.fake is not None:
            self.fake.set_member_status(int(chat["id"]), user.id, "left")
        message = self.message(chat, actor or user, left_chat_member=user.to_dict())
        return self.update(message=message)

    def new_chat_members(
        self, chat: Mapping[str, Any], users: Sequence[User], actor: User | None = None
    ) -> JsonDict:
        """The service message for users joining (or ``actor`` adding them to) a group."""
        if self.fake is not None:
            for user in users:
                self.fake.set_member_status(int(chat["id"]), user.id, "member")
        members = [user.to_dict() for user in users]
        message = self.message(chat, actor or users[0], new_chat_members=members)
        self._note(chat, *users)
        return self.update(message=message)

    def migrate(
        self,
        chat_old_id: int,
        new_id: int,
        title: str = "Cheat table",
        actor: User | None = None,
    ) -> JsonDict:
        """The service message in the old group announcing its move to supergroup ``new_id``.

        With a fake, later calls to the old id get Telegram's "group chat was upgraded to a
        supergroup chat" error (PTB raises ``ChatMigrated``).
        """
        old_chat = {"id": chat_old_id, "type": "group", "title": title}
        if self.fake is not None:
            self.fake.register_chat(old_chat)
            self.fake.migrate_chat(chat_old_id, new_id)
            self.fake.register_chat({"id": new_id, "type": "supergroup", "title": title})
        # Telegram sends it on behalf of whoever upgraded the group; without one given, the
        # anonymous admin bot stands in.
        sender = actor.to_dict() if actor else _GROUP_ANONYMOUS_BOT
        message: JsonDict = {
            "message_id": self._next_message_id(chat_old_id),
            "from": sender,
            "chat": old_chat,
            "date": self._now(),
            "migrate_to_chat_id": new_id,
        }
        return self.update(message=message)

    # -- callback queries -----------------------------------------------------------------------

    def callback(
        self,
        user: User,
        message: MessageRecord | Mapping[str, Any] | Any,
        data: str,
        *,
        chat_instance: str | None = None,
    ) -> JsonDict:
        """A callback_query from pressing a button with ``data`` under the bot's ``message``.

        ``message`` may be the fake's MessageRecord, a Message dict, or a ``telegram.Message``.
        """
        if isinstance(message, MessageRecord):
            message_dict = message.to_api_dict()
        elif isinstance(message, Mapping):
            message_dict = dict(message)
        else:
            message_dict = message.to_dict()
        chat_id = int(message_dict["chat"]["id"])
        query: JsonDict = {
            # Telegram's ids are opaque numeric strings, unique per query.
            "id": str(4_000_000_000_000_000 + next(self._callback_ids)),
            "from": user.to_dict(),
            "message": message_dict,
            "chat_instance": chat_instance or _chat_instance(chat_id),
            "data": data,
        }
        if self.fake is not None:
            self.fake.register_user(user.to_dict())
            if chat_id < 0:
                # Only someone in the group sees its messages' buttons.
                self.fake.note_member(chat_id, user.id)
        return self.update(callback_query=query)

    def inline_query(self, user: User, query: str = "", chat_type: str = "private") -> JsonDict:
        """An inline query: ``user`` typed the bot's name and ``query`` in a chat of
        ``chat_type`` (or a share button did it for them)."""
        if self.fake is not None:
            self.fake.register_user(user.to_dict())
        inline: JsonDict = {
            "id": str(5_000_000_000_000_000 + next(self._callback_ids)),
            "from": user.to_dict(),
            "query": query,
            "offset": "",
            "chat_type": chat_type,
        }
        return self.update(inline_query=inline)

    def press(
        self,
        fake: FakeTelegram,
        user: User,
        chat_id: int,
        predicate_or_substring: str | Callable[[JsonDict], bool],
    ) -> JsonDict:
        """``user`` presses the newest visible button in ``chat_id`` that matches.

        A string matches buttons whose text contains it; a callable gets the button dict.
        """
        found = fake.find_button(chat_id, predicate_or_substring)
        if found is None:
            visible = [
                (record.message_id, [button.get("text") for button in record.buttons])
                for record in fake.visible_messages(chat_id)
                if record.buttons
            ]
            raise LookupError(
                f"no button matching {predicate_or_substring!r} in chat {chat_id}; "
                f"buttons by message id: {visible}"
            )
        message_id, button = found
        if "callback_data" not in button:
            raise ValueError(f"button {button.get('text')!r} sends no callback_data: {button}")
        record = fake.message(chat_id, message_id)
        return self.callback(user, record, str(button["callback_data"]))

    # -- membership -----------------------------------------------------------------------------

    def my_chat_member(
        self, chat: Mapping[str, Any], user: User, old_status: str, new_status: str
    ) -> JsonDict:
        """The bot's own membership changed in ``chat``, done by ``user``.

        With a fake: in a group, "left"/"kicked" means the bot gets 403 there from now on and
        "administrator" makes it an admin; in a private chat, "kicked" means the user blocked
        the bot and "member" that they (re)started it.
        """
        chat_id = int(chat["id"])
        if self.fake is not None:
            self._apply_bot_status(chat_id, user, new_status)
        self._note(chat, user)
        changed = {
            "chat": dict(chat),
            "from": user.to_dict(),
            "date": self._now(),
            "old_chat_member": chat_member_dict(self.bot_user, old_status),
            "new_chat_member": chat_member_dict(self.bot_user, new_status),
        }
        return self.update(my_chat_member=changed)

    def chat_member(
        self,
        chat: Mapping[str, Any],
        user: User,
        old_status: str,
        new_status: str,
        actor: User | None = None,
    ) -> JsonDict:
        """``user``'s membership in ``chat`` changed (by ``actor``, default themselves)."""
        if self.fake is not None:
            self.fake.set_member_status(int(chat["id"]), user.id, new_status)
        self._note(chat, user, *([actor] if actor else []))
        changed = {
            "chat": dict(chat),
            "from": (actor or user).to_dict(),
            "date": self._now(),
            "old_chat_member": chat_member_dict(user.to_dict(), old_status),
            "new_chat_member": chat_member_dict(user.to_dict(), new_status),
        }
        return self.update(chat_member=changed)

    def _apply_bot_status(self, chat_id: int, user: User, status: str) -> None:
        fake = self.fake
        assert fake is not None
        if chat_id > 0:
            if status in _LEAVING_STATUSES:
                fake.blocked_users.add(user.id)
            else:
                fake.blocked_users.discard(user.id)
                fake.started_users.add(user.id)
            return
        if status in _LEAVING_STATUSES:
            fake.kick_bot(chat_id)
        else:
            fake.kicked_from.discard(chat_id)
        fake.set_member_status(chat_id, fake.bot_id, status)


def _command_content(
    command: str, args: str | None, reply_to: Mapping[str, Any] | None
) -> JsonDict:
    """A command message's text and entities (and the message it replies to)."""
    command = command if command.startswith("/") else f"/{command}"
    text = f"{command} {args}" if args else command
    entity = {"type": "bot_command", "offset": 0, "length": _utf16_len(command)}
    others = [e for e in command_entities(text) if e["offset"] != 0]
    content: JsonDict = {"text": text, "entities": [entity, *others]}
    if reply_to is not None:
        # Telegram does not nest replies: the replied message comes without its own.
        content["reply_to_message"] = {
            key: value for key, value in reply_to.items() if key != "reply_to_message"
        }
    return content


def _chat_instance(chat_id: int) -> str:
    # Telegram's chat_instance is an opaque signed 64-bit number, stable per chat.
    return str((chat_id * 2654435761) % (2**63) - 2**62)
