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
