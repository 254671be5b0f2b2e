"""The game store: a group's session and everything kept with it in Redis, one object.

Each concern has a module of its own, reached through an attribute: ``sessions`` (the session
and its compare-and-set), ``shown`` (what Telegram confirmed each place shows, and the lease of
the process that syncs it), ``settings`` (groups' and users' choices), ``clock`` (deadlines)
and ``budget`` (each group's message budget). The main verbs are the store's own: ``load``,
``transact`` and ``forget_chat``.
The constants the rest of the bot and its tests use are importable from here.
"""

from __future__ import annotations

from typing import TypeVar

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from tgcheat.store.budget import GROUP_MESSAGES_PER_MINUTE, GroupBudget
from tgcheat.store.changes import AppRequests, Changes, PlayedPlaces
from tgcheat.store.clock import Deadlines
from tgcheat.store.direct import DirectCommands
from tgcheat.store.hints import ChatHints
from tgcheat.store.keys import KEY_PREFIX, Keys
from tgcheat.store.pings import Pings
from tgcheat.store.quick import QuickQueue
from tgcheat.store.scripts import GROUP_BURST, LEASE_MS, REMEMBERED_UPDATES
from tgcheat.store.send_budget import REPLIES_PER_SECOND, ReplyBudget
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
from tgcheat.store.shown import ShownRecords
from tgcheat.store.stats import Stats
from tgcheat.store.timeout import OPERATION_TIMEOUT_S, bounded
from tgcheat.store.watching import Watching
from tgcheat.table.place import Place, Where
from tgcheat.table.session import Session

__all__ = [
    "GROUP_BURST",
    "GROUP_MESSAGES_PER_MINUTE",
    "KEY_PREFIX",
    "LEASE_MS",
    "OPERATION_TIMEOUT_S",
    "REMEMBERED_UPDATES",
    "SESSION_TTL_S",
    "Change",
    "Committed",
    "ConflictError",
    "GameStore",
    "Loaded",
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
        lease_ms: int = LEASE_MS,
        replies_per_second: float = REPLIES_PER_SECOND,
    ) -> None:
        self._redis = redis
        #: The names of the store's keys.
        self.keys = Keys(prefix)
        # One hint of each chat, which the sessions read and write.
        self._hints = ChatHints()
        direct = DirectCommands(redis)
        self.budget = GroupBudget(redis, self.keys, group_messages_per_minute)
        #: Each committed change announced to the open Mini Apps; their requests carried out.
        self.changes = Changes(self.keys)
        self.shown = ShownRecords(
            redis,
            direct,
            self.keys,
            lambda place, document: self.sessions.decode(place, document),
            per_minute=group_messages_per_minute,
            lease_ms=lease_ms,
        )
        self.sessions = Sessions(
            redis, direct, self.keys, self._hints, self.shown, changes=self.changes
        )
        self.settings = Settings(redis, self.keys)
        self.clock = Deadlines(redis, self.keys)
        self.pings = Pings(redis, self.keys)
        self.stats = Stats(redis, self.keys)
        self.app_requests = AppRequests(redis, self.keys)
        self.played_places = PlayedPlaces(redis, self.keys)
        self.watching = Watching(redis, self.keys)
        #: Who waits for a quick game (/quick), and who plays which.
        self.quick = QuickQueue(redis, self.keys)
        #: What each person's commands may cost in replies (None: no limit, for tests that
        #: play faster than people).
        self.replies = (
            ReplyBudget(redis, self.keys, replies_per_second) if replies_per_second > 0 else None
        )

    async def load(self, where: Where) -> tuple[Session | None, int]:
        """A group's (or a topic's) session (None: none) and its version."""
        return await self.sessions.load(where)

    async def read(self, where: Where) -> Loaded:
        """A group's (or a topic's) session and its version."""
        return await self.sessions.read(where)

    async def transact(
        self,
        where: Where,
        change: Change[R],
        *,
        update_id: int | None = None,
        lease: bool = False,
    ) -> Committed[R]:
        """Apply ``change`` to a group's session atomically (see Sessions.transact); the
        compare-and-set itself announces a change it writes to the open Mini Apps, and with
        ``lease`` takes the place's lease for the sync that shows it."""
        return await self.sessions.transact(where, change, update_id=update_id, lease=lease)

    async def forget_chat(self, chat_id: int) -> None:
        """Remove everything kept for a group's games (the bot left it, or it moved): each
        session (the chat's and its topics', with what they show), its deadline and its due
        sync, the group's next-game sign-ups and its statistics."""
        places = [Place(chat_id), *await self.topics_of(chat_id)]
        async with self._redis.pipeline(transaction=True) as pipe:
            for place in places:
                self._forget(pipe, place)
            pipe.delete(self.keys.pings(chat_id))
            pipe.delete(self.keys.chat_stats(chat_id))
            await bounded(pipe.execute())

    async def forget_place(self, place: Place) -> None:
        """Remove what is kept for one topic's game (the topic was deleted)."""
        async with self._redis.pipeline(transaction=True) as pipe:
            self._forget(pipe, place)
            await bounded(pipe.execute())

    def _forget(self, pipe: Pipeline, place: Place) -> None:
        self._hints.forget(place)
        pipe.delete(self.keys.session(place))
        pipe.zrem(self.keys.deadlines(place.chat_id), place.key)
        pipe.zrem(self.keys.due(place.chat_id), place.key)

    async def topics_of(self, chat_id: int) -> list[Place]:
        """The topics of a forum group that have a session (a scan: for the rare times the
        bot leaves a group, not for a game's moves)."""
        places = []
        async for key in self._redis.scan_iter(match=self.keys.sessions_of(chat_id), count=500):
            name = key.decode() if isinstance(key, bytes) else str(key)
            places.append(Place.from_key(name.removeprefix(f"{self.keys.tag(chat_id)}:chat:")))
        return places
