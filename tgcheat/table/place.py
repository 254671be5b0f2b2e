"""Where a group's session lives: a chat, and in a forum supergroup the topic its game was
opened in.

A forum group holds a game in each topic at once: each has a session, messages, a deadline
and an outbox of its own, named by its place. A chat without topics, and a forum's General
topic (whose messages carry no topic), is the place of its chat alone, named as the chat always
was (keys, callback data and links of such a chat are what they were before topics).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_KEY = re.compile(r"(-?[0-9]{1,16})(?::([0-9]{1,10}))?")

#: Quick games (/quick) are played at places of their own, not Telegram chats: chat ids at and
#: below this one, far beyond any id Telegram gives a chat a bot is in (groups, supergroups and
#: channels use ids above -2 * 10**12). Each quick game has its number; the place is shown in
#: its players' private chats and in the Mini App.
QUICK_CHAT_BASE = -9_000_000_000_000
#: Quick games numbered up to this: the chat id keeps within the 16 digits a place key holds.
MAX_QUICK_NUMBER = 999_999_999_999_999 + QUICK_CHAT_BASE


@dataclass(frozen=True, slots=True)
class Place:
    chat_id: int
    #: The forum topic (its ``message_thread_id``); None for a chat without topics and for a
    #: forum's General topic.
    topic: int | None = None

    @property
    def key(self) -> str:
        """The place's name in Redis (a key's suffix, a member of the clock's sets): the chat
        id alone without a topic, else "<chat id>:<topic>"."""
        return str(self.chat_id) if self.topic is None else f"{self.chat_id}:{self.topic}"

    @property
    def quick(self) -> bool:
        """A quick game's place (/quick): no Telegram chat, shown in its players' private
        chats."""
        return self.chat_id <= QUICK_CHAT_BASE

    @classmethod
    def of_quick_game(cls, number: int) -> Place:
        """The place of quick game ``number`` (1, 2, …)."""
        if not 0 < number <= MAX_QUICK_NUMBER:
            raise ValueError(f"not a quick game's number: {number}")
        return cls(QUICK_CHAT_BASE - number)

    @classmethod
    def from_key(cls, key: str) -> Place:
        """The place a ``key`` names; ValueError when it names none."""
        match = _KEY.fullmatch(key)
        if match is None:
            raise ValueError(f"not a place: {key!r}")
        chat, topic = match.groups()
        return cls(int(chat), int(topic) if topic is not None else None)

    @classmethod
    def of(cls, where: Where) -> Place:
        """The place ``where`` names: a chat id alone names the chat's own place."""
        return where if isinstance(where, Place) else cls(where)

    def __str__(self) -> str:
        return self.key


#: A place, or a chat id for the place of a chat without topics (what the store's callers
#: named before topics, and still may).
Where = Place | int
