"""A group's message budget: Telegram lets a bot send about 20 messages a minute to a group,
edits included.

Each group has a token bucket in Redis, shared by every process (its Lua is
tgcheat.store.scripts.TOKEN_BUCKET): a change's group messages are spent in the session's
compare-and-set, and when the bucket is overdrawn the table edit is deferred (a sorted set of
places per shard, scored by when a token is back). The clock then takes a token here for each
deferred table, which shows the state of then.

Telegram's own limit has the last word: when it answers 429 ("retry after N"), what was not
shown is held here (``hold``: the group's flood wait, the table, announcements, hands) and the
chat is deferred until the wait is over; the clock then ``release``s it, once, to one process.

Telegram's limit is the group's, whatever its topics: the games of a forum's topics spend
from one bucket, the chat's (``Keys.bucket``), which also keeps the group's flood wait. What
waits for the clock is each place's own (``Keys.waiting``: its table, announcements, hands and
outbox), in the same hash slot as the bucket.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import orjson
from redis.asyncio import Redis

from tgcheat.store.clock import due_in_shards
from tgcheat.store.keys import Keys
from tgcheat.store.outbox import MustShow
from tgcheat.store.scripts import (
    EXTEND_SCRIPT,
    HOLD_SCRIPT,
    OUTBOX_LEASE_MS,
    RELEASE_SCRIPT,
    REPLY_SCRIPT,
    SETTLE_SCRIPT,
    TAKE_SCRIPT,
    extend_call,
    hold_call,
    release_call,
    reply_call,
    settle_call,
    take_call,
)
from tgcheat.store.timeout import bounded
from tgcheat.table.place import Place, Where

GROUP_MESSAGES_PER_MINUTE = 20


@dataclass(frozen=True, slots=True)
class Held:
    """What waited for a group's budget or a flood wait, now the clock's to show."""

    #: The table is shown again (after the lines).
    table: bool
    #: Announcements (reveals, passes, notices) not shown yet, in order.
    lines: tuple[str, ...] = ()
    #: Players whose hand was not shown.
    hands: tuple[int, ...] = ()
    #: Old messages to delete: (chat id, message id).
    gone: tuple[tuple[int, int], ...] = ()
    #: The number of the entry it now is, leased to this process: settled once shown
    #: (``GroupBudget.settle``), or released again when the lease is over.
    token: int = field(default=0, compare=False)


class GroupBudget:
    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        per_minute: int = GROUP_MESSAGES_PER_MINUTE,
        *,
        lease_ms: int = OUTBOX_LEASE_MS,
    ) -> None:
        self._redis = redis
        self._keys = keys
        #: How long what the clock released is its process's to show (then released again).
        self.lease_ms = lease_ms
        #: Each group's budget of messages a minute.
        self.per_minute = per_minute
        self._take = redis.register_script(TAKE_SCRIPT)
        self._reply = redis.register_script(REPLY_SCRIPT)
        self._hold = redis.register_script(HOLD_SCRIPT)
        self._release = redis.register_script(RELEASE_SCRIPT)
        self._settle = redis.register_script(SETTLE_SCRIPT)
        self._extend = redis.register_script(EXTEND_SCRIPT)

    async def deferred_tables(self, now_ms: int, limit: int = 64) -> list[Place]:
        """Places whose table edit waited for their budget and is now due, at most ``limit``."""
        return await due_in_shards(self._redis, self._keys.deferred_tables_of_shard, now_ms, limit)

    async def take(self, where: Where, now_ms: int) -> bool:
        """Take one group message from the budget for the table, shown now; False (and the
        table deferred) while the budget is overdrawn or the group in a flood wait."""
        place = Place.of(where)
        call = take_call(
            bucket_key=self._keys.bucket(place.chat_id),
            deferred_key=self._keys.deferred_tables(place.chat_id),
            waiting_key=self._keys.waiting(place),
            place=place.key,
            per_minute=self.per_minute,
            now_ms=now_ms,
        )
        return bool(await bounded(self._take(keys=call.keys, args=call.args)))

    async def take_for_reply(self, where: Where, now_ms: int) -> bool:
        """Take one group message for a reply to a command; False while the budget is
        overdrawn or the group in a flood wait (the reply is not sent; nothing waits)."""
        call = reply_call(
            bucket_key=self._keys.bucket(Place.of(where).chat_id),
            per_minute=self.per_minute,
            now_ms=now_ms,
        )
        return bool(await bounded(self._reply(keys=call.keys, args=call.args)))

    async def hold(
        self,
        where: Where,
        until_ms: int,
        now_ms: int,
        *,
        group_flooded: bool,
        table: bool = False,
        lines: Iterable[str] = (),
        hands: Iterable[int] = (),
        gone: Iterable[tuple[int, int]] = (),
    ) -> None:
        """Keep what Telegram's 429 kept from being shown in the group ``where`` (or in its
        players' private chats) until ``until_ms``: the clock shows it then (and deletes the
        messages ``gone``, which no longer show anything). With
        ``group_flooded`` the wait is the group's own, and nothing else is sent there
        before it ends (a change's table edit is deferred, a reply dropped)."""
        place = Place.of(where)
        call = hold_call(
            bucket_key=self._keys.bucket(place.chat_id),
            deferred_key=self._keys.deferred_tables(place.chat_id),
            waiting_key=self._keys.waiting(place),
            place=place.key,
            until_ms=until_ms,
            group_flooded=group_flooded,
            table=table,
            lines_json=orjson.dumps(list(lines)),
            hands_json=orjson.dumps([str(user_id) for user_id in hands]),
            gone_json=orjson.dumps([f"{chat}:{message}" for chat, message in gone]),
            now_ms=now_ms,
        )
        await bounded(self._hold(keys=call.keys, args=call.args))

    async def settle(
        self,
        where: Where,
        version: int,
        now_ms: int,
        rest: MustShow | None = None,
        *,
        still_showing: bool = False,
    ) -> bool:
        """The change committed at ``version`` was shown, what it owed the players (its
        must-see entry goes), or all but ``rest``, which the clock shows now (or, while the
        publisher is ``still_showing`` it, when the lease is over). False when the entry was
        gone already (taken by the clock after the lease)."""
        place = Place.of(where)
        call = settle_call(
            waiting_key=self._keys.waiting(place),
            deferred_key=self._keys.deferred_tables(place.chat_id),
            place=place.key,
            version=version,
            rest=b"" if rest is None or rest.empty else rest.entry(),
            now_ms=now_ms,
            still_showing=still_showing,
        )
        return bool(await bounded(self._settle(keys=call.keys, args=call.args)))

    async def extend(self, where: Where, version: int, now_ms: int) -> bool:
        """The entry of the change at ``version`` (or released to this process as the token
        ``version``) stays this process's for a lease from ``now_ms``: it is still showing it.
        False when the entry is gone (shown, or the clock's)."""
        call = extend_call(
            waiting_key=self._keys.waiting(Place.of(where)),
            version=version,
            lease_until_ms=now_ms + self.lease_ms,
        )
        return bool(await bounded(self._extend(keys=call.keys, args=call.args)))

    async def owes(self, where: Where, version: int) -> bool:
        """Whether the change stored at ``version`` still owes the players messages (its
        entry is there: its publisher, or the clock after it, is showing them)."""
        raw = await bounded(self._redis.hget(self._keys.waiting(Place.of(where)), "out"))
        if raw is None:
            return False
        return any(
            isinstance(entry, dict) and entry.get("v") == version for entry in _json_list(raw)
        )

    async def unseen_hands(self, where: Where) -> frozenset[int]:
        """The players whose hand waits to be shown in the place: held for the clock, or owed
        by a change still being shown (``tgcheat.table.transitions.tick`` lets their turn
        wait for it)."""
        held, owed = await bounded(
            self._redis.hmget(self._keys.waiting(Place.of(where)), "hands", "out")
        )
        users = {int(str(user_id)) for user_id in _json_list(held or b"")}
        for entry in _json_list(owed or b""):
            if isinstance(entry, dict):
                users.update(int(str(user_id)) for user_id in entry.get("hands") or [])
        return frozenset(users)

    async def release(self, where: Where, now_ms: int) -> Held | None:
        """A deferred group's turn on the clock: what it holds, taken out (one process gets
        it), or None while it must still wait (deferred again)."""
        place = Place.of(where)
        call = release_call(
            bucket_key=self._keys.bucket(place.chat_id),
            deferred_key=self._keys.deferred_tables(place.chat_id),
            waiting_key=self._keys.waiting(place),
            place=place.key,
            per_minute=self.per_minute,
            now_ms=now_ms,
            lease_ms=self.lease_ms,
        )
        answer = await bounded(self._release(keys=call.keys, args=call.args))
        if not answer or int(answer[0]) != 1:
            return None
        _, table, lines, hands, gone, token = answer
        return Held(
            table=bool(int(table)),
            lines=tuple(str(line) for line in _json_list(lines)),
            hands=tuple(dict.fromkeys(int(str(user_id)) for user_id in _json_list(hands))),
            gone=tuple(dict.fromkeys(_message_of(str(item)) for item in _json_list(gone))),
            token=int(token),
        )


def _message_of(item: str) -> tuple[int, int]:
    chat, _, message = item.partition(":")
    return int(chat), int(message)


def _json_list(raw: bytes | str) -> list[object]:
    """A held JSON list; Lua's cjson writes an empty one as ``{}``, and none is ``''``."""
    if not raw:
        return []
    value = orjson.loads(raw)
    return value if isinstance(value, list) else []
