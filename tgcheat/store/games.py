"""The game store: a group's session and everything kept with it in Redis, one object.

Each concern has a module of its own, reached through an attribute: ``sessions`` (the session
and its compare-and-set), ``messages`` (the ids of the messages that show it), ``settings``
(groups' and users' choices), ``clock`` (deadlines) and ``budget`` (each group's message
budget). The main verbs are the store's own: ``load``, ``transact`` and ``forget_chat``.
The constants the rest of the bot and its tests use are importable from here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from redis.asyncio import Redis

from tgcheat.store.budget import GROUP_MESSAGES_PER_MINUTE, GroupBudget
from tgcheat.store.clock import Deadlines
from tgcheat.store.direct import DirectCommands
from tgcheat.store.hints import ChatHints
from tgcheat.store.keys import KEY_PREFIX, Keys
from tgcheat.store.messages import Messages
from tgcheat.store.outbox import MustShow
from tgcheat.store.pings import Pings
from tgcheat.store.scripts import GROUP_BURST, OUTBOX_LEASE_MS, REMEMBERED_UPDATES
from tgcheat.store.sessions import (
    SESSION_TTL_S,
    Change,
    Committed,
    ConflictError,
    Loaded,
    Outcome,
    Sessions,
)
from tgcheat.store.settings import Settings
from tgcheat.store.stats import Stats
from tgcheat.store.timeout import OPERATION_TIMEOUT_S, bounded
from tgcheat.table.session import MessageIds, Session

__all__ = [
    "GROUP_BURST",
    "GROUP_MESSAGES_PER_MINUTE",
    "KEY_PREFIX",
    "OPERATION_TIMEOUT_S",
    "OUTBOX_LEASE_MS",
    "REMEMBERED_UPDATES",
    "SESSION_TTL_S",
    "Change",
    "Committed",
    "ConflictError",
    "GameStore",
    "Loaded",
    "MustShow",
    "Outcome",
]

R = TypeVar("R")


class GameStore:
    def __init__(
        self,
        redis: Redis,
        *,
        prefix: str = KEY_PREFIX,
        group_messages_per_minute: int = GROUP_MESSAGES_PER_MINUTE,
        outbox_lease_ms: int = OUTBOX_LEASE_MS,
    ) -> None:
        self._redis = redis
        #: The names of the store's keys.
        self.keys = Keys(prefix)
        # One hint of each chat, which the sessions read and write and the message ids update.
        self._hints = ChatHints()
        direct = DirectCommands(redis)
        self.budget = GroupBudget(
            redis, self.keys, group_messages_per_minute, lease_ms=outbox_lease_ms
        )
        self.sessions = Sessions(
            redis, direct, self.keys, self._hints, self.budget, outbox_lease_ms=outbox_lease_ms
        )
        self.messages = Messages(redis, direct, self.keys, self._hints)
        self.settings = Settings(redis, self.keys)
        self.clock = Deadlines(redis, self.keys)
        self.pings = Pings(redis, self.keys)
        self.stats = Stats(redis, self.keys)

    async def load(self, chat_id: int) -> tuple[Session | None, MessageIds]:
        """A group's session (None: none) and the messages that show it."""
        return await self.sessions.load(chat_id)

    async def read(self, chat_id: int) -> Loaded:
        """A group's session, the messages that show it and its version."""
        return await self.sessions.read(chat_id)

    async def transact(
        self,
        chat_id: int,
        change: Change[R],
        *,
        update_id: int | None = None,
        group_messages: Callable[[R], int] | None = None,
        must_show: Callable[[Session, R], MustShow | None] | None = None,
    ) -> Committed[R]:
        """Apply ``change`` to a group's session atomically (see Sessions.transact)."""
        return await self.sessions.transact(
            chat_id,
            change,
            update_id=update_id,
            group_messages=group_messages,
            must_show=must_show,
        )

    async def forget_chat(self, chat_id: int) -> None:
        """Remove everything kept for a group's game (the bot left it, or it moved): its
        session, its deadline, its deferred table edit, its next-game sign-ups and its
        statistics, in one round trip."""
        self._hints.forget(chat_id)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.delete(self.keys.session(chat_id))
            pipe.zrem(self.keys.deadlines, chat_id)
            pipe.zrem(self.keys.deferred_tables, chat_id)
            pipe.delete(self.keys.pings(chat_id))
            pipe.delete(self.keys.chat_stats(chat_id))
            await bounded(pipe.execute())
