"""Telegram's flood limits, as an option of the offline Bot API (``FakeTelegram(limits=...)``).

Telegram tells bots to send at most about one message a second to a private chat (short
bursts pass), twenty a minute to a group, and thirty a second across all chats; beyond them it
answers 429 "Too Many Requests: retry after N". ``TelegramLimits`` holds each of them as a
token bucket on the offline API's clock (seconds):

* a private chat: 1 message a second, bursts of 3;
* a group: 20 a minute, bursts of 8;
* all chats together: 30 a second (a second's worth at once).

What counts is what makes or changes a message: sendMessage, editMessageText,
editMessageReplyMarkup, deleteMessage and deleteMessages. The answers to button presses
(answerCallbackQuery) and the bot's questions (getChatMember and the like) are free, as
Telegram counts them apart.

A request beyond a limit takes nothing from any bucket and is answered 429 with the seconds
until that bucket has a message again; ``refused`` counts the refusals by the limit that made
them (``PRIVATE``, ``GROUP``, ``ALL_CHATS``), a chat's own limit named first when both are
spent.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

#: The methods Telegram's limits count (lower case, as the offline API compares them).
COUNTED_METHODS = frozenset(
    {"sendmessage", "editmessagetext", "editmessagereplymarkup", "deletemessage", "deletemessages"}
)
#: The kinds of limit, as ``refused`` names them.
PRIVATE = "private chat"
GROUP = "group"
ALL_CHATS = "all chats"


@dataclass(frozen=True, slots=True)
class Rate:
    """So many messages a second, ``burst`` of them at once."""

    per_second: float
    burst: int


PRIVATE_RATE = Rate(per_second=1.0, burst=3)
GROUP_RATE = Rate(per_second=20 / 60, burst=8)
ALL_CHATS_RATE = Rate(per_second=30.0, burst=30)


@dataclass(slots=True)
class Bucket:
    """Messages left (``tokens``) as of ``at`` (the clock's seconds); it refills continuously
    at its rate up to its burst."""

    rate: Rate
    tokens: float
    at: float

    def level(self, now: float) -> float:
        elapsed = max(0.0, now - self.at)
        return min(float(self.rate.burst), self.tokens + elapsed * self.rate.per_second)

    def wait_s(self, now: float) -> float:
        """Seconds until one message may go (0: now)."""
        missing = 1.0 - self.level(now)
        return max(0.0, missing / self.rate.per_second)

    def take(self, now: float) -> None:
        self.tokens = self.level(now) - 1.0
        self.at = max(self.at, now)


class Refused(Exception):
    """A request beyond a limit: Telegram asks to wait ``retry_after`` whole seconds."""

    def __init__(self, kind: str, retry_after: int) -> None:
        super().__init__(f"{kind} limit: retry after {retry_after}")
        self.kind = kind
        self.retry_after = retry_after


class TelegramLimits:
    """The buckets of every chat and the bot's across all chats; see the module docstring."""

    def __init__(
        self,
        *,
        private: Rate = PRIVATE_RATE,
        group: Rate = GROUP_RATE,
        all_chats: Rate = ALL_CHATS_RATE,
    ) -> None:
        self.private = private
        self.group = group
        self.all_chats = all_chats
        self._chats: dict[int, Bucket] = {}
        self._all: Bucket | None = None
        #: Requests answered 429, by the limit that refused them.
        self.refused: Counter[str] = Counter()
        #: Requests the limits counted and let through.
        self.passed = 0

    def counts(self, method: str) -> bool:
        return method.lower() in COUNTED_METHODS

    def admit(self, method: str, chat_id: object, now: float) -> None:
        """Let a request through (taking a message from each bucket it spends from), or raise
        ``Refused`` when one of them is spent; requests the limits do not count pass free."""
        if not self.counts(method):
            return
        buckets: list[tuple[str, Bucket]] = []
        if isinstance(chat_id, int) and not isinstance(chat_id, bool):
            buckets.append(self._chat_bucket(chat_id, now))
        buckets.append((ALL_CHATS, self._all_chats_bucket(now)))
        for kind, bucket in buckets:
            wait = bucket.wait_s(now)
            if wait > 0:
                self.refused[kind] += 1
                # Whole seconds, as Telegram says them (a float's last bit does not round up).
                raise Refused(kind, max(1, math.ceil(wait - 1e-9)))
        for _, bucket in buckets:
            bucket.take(now)
        self.passed += 1

    def _chat_bucket(self, chat_id: int, now: float) -> tuple[str, Bucket]:
        kind, rate = (PRIVATE, self.private) if chat_id > 0 else (GROUP, self.group)
        bucket = self._chats.get(chat_id)
        if bucket is None:
            bucket = self._chats[chat_id] = Bucket(rate, float(rate.burst), now)
        return kind, bucket

    def _all_chats_bucket(self, now: float) -> Bucket:
        if self._all is None:
            self._all = Bucket(self.all_chats, float(self.all_chats.burst), now)
        return self._all
