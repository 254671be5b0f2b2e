"""Games in Redis: one key per group chat, every change one atomic compare-and-set.

A change is computed by a pure function from the stored session; the write succeeds only if
the version is still the one read, else the change is recomputed from the new state (bounded
retries). The same script remembers the update's id, so a re-delivered update that already
changed a game is ignored, whichever process sees it.
"""

from __future__ import annotations

import asyncio
import enum
import json
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

from redis.asyncio import Redis

from tgcheat.engine.rules import Rules
from tgcheat.store.codec import decode, encode
from tgcheat.store.direct import DirectCommands
from tgcheat.table.session import MessageIds, Session

R = TypeVar("R")
T = TypeVar("T")

KEY_PREFIX = "tgc"
#: An abandoned lobby or game disappears this long after its last change.
SESSION_TTL_S = 2 * 24 * 3600
#: How long a handled update id is remembered (Telegram re-delivers for up to a day).
UPDATE_TTL_S = 24 * 3600
#: Telegram lets a bot send about 20 messages a minute to a group, edits included.
GROUP_MESSAGES_PER_MINUTE = 20
#: Group messages that may go out at once before the rate applies (a play, a reveal, a table).
GROUP_BURST = 4
#: Every Redis operation of the store must be done by then (the client has no per-call socket
#: timeout: tgcheat.redis_connection.CLIENT_OPTIONS); a Redis that hangs fails the update, which
#: Telegram then delivers again.
OPERATION_TIMEOUT_S = 5.0
MAX_ATTEMPTS = 30
BACKOFF_S = 0.002
#: How many chats' last state one process keeps as a hint (a busy process's working set).
CACHE_CHATS = 10_000

# KEYS[1] session hash, KEYS[2] update marker, KEYS[3] deadlines, KEYS[4] the group's message
# budget (a token bucket), KEYS[5] deferred tables.
# ARGV[1] expected version, ARGV[2] new document, ARGV[3] session TTL, ARGV[4] update TTL,
# ARGV[5] "1" when there is an update id to remember, ARGV[6] chat id, ARGV[7] the session's
# next deadline (ms; "0": none), ARGV[8] group messages this change will send (the table edit
# included), ARGV[9] the group's budget of messages a minute, ARGV[10] now (ms).
# Returns 1 on success, 0 on a version conflict, -1 when the update was already applied, 2 on
# success when the group's budget is overdrawn: the table edit waits until a token is back,
# and then shows the state of then (edits coalesce, the latest state wins).
# A group's budget is a token bucket (a hash of tokens and when they were counted): BURST
# messages at once, refilled at the group's rate a minute. spend() takes ``cost`` tokens and
# returns what is left; overdrawn, the table edit is deferred until a token is back, and then
# shows the state of then (edits coalesce).
_TOKEN_BUCKET = f"""
local function spend(key, cost, per_minute, now)
  local rate = per_minute / 60000
  local burst = math.max(1, math.min(per_minute, {GROUP_BURST}))
  local stored = redis.call('HMGET', key, 'tokens', 'at')
  local tokens = tonumber(stored[1]) or burst
  local at = tonumber(stored[2]) or now
  -- Announcements are sent even over budget, but the debt has a floor, so that a group that
  -- played fast catches up within a few tokens' time once play slows down.
  tokens = math.max(-burst, math.min(burst, tokens + (now - at) * rate) - cost)
  redis.call('HSET', key, 'tokens', tostring(tokens), 'at', now)
  redis.call('PEXPIRE', key, 600000)
  return tokens
end

-- The one table edit that did not go out gets its token back, and waits until a whole token
-- is there for it; returns when that is (ms).
local function defer(key, deferred, chat, tokens, per_minute, now)
  tokens = tokens + 1
  redis.call('HSET', key, 'tokens', tostring(tokens))
  local due = now + math.ceil((1 - tokens) / (per_minute / 60000))
  redis.call('ZADD', deferred, due, chat)
  return due
end
"""

_CAS_SCRIPT = (
    _TOKEN_BUCKET
    + """
local version = redis.call('HGET', KEYS[1], 'v') or '0'
if version ~= ARGV[1] then return 0 end
if ARGV[5] == '1' then
  if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[4]) then return -1 end
end
redis.call('HSET', KEYS[1], 'v', tonumber(version) + 1, 'd', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
if ARGV[7] == '0' then
  redis.call('ZREM', KEYS[3], ARGV[6])
else
  redis.call('ZADD', KEYS[3], ARGV[7], ARGV[6])
end
local cost = tonumber(ARGV[8])
if cost > 0 then
  local per_minute, now = tonumber(ARGV[9]), tonumber(ARGV[10])
  local tokens = spend(KEYS[4], cost, per_minute, now)
  if tokens < 0 then
    defer(KEYS[4], KEYS[5], ARGV[6], tokens, per_minute, now)
    return 2
  end
end
return 1
"""
)


# KEYS[1] the group's budget, KEYS[2] deferred tables; ARGV[1] chat id, ARGV[2] rate,
# ARGV[3] now (ms).
# Returns 1 when a token was taken (the chat leaves the deferred set), else 0 (deferred again).
_TAKE_SCRIPT = (
    _TOKEN_BUCKET
    + """
local per_minute, now = tonumber(ARGV[2]), tonumber(ARGV[3])
local tokens = spend(KEYS[1], 1, per_minute, now)
if tokens < 0 then
  defer(KEYS[1], KEYS[2], ARGV[1], tokens, per_minute, now)
  return 0
end
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
"""
)


# A session hash holds the version ("v"), the document ("d") and the ids of the messages that
# show the game, one field each ("m:<name>"): one read gets them all, and they expire together.
MESSAGE_FIELD = "m:"
_TABLE = "table"
_HAND = "hand:"
_TOLD = "told:"

# KEYS[1] session hash, KEYS[2] the update's marker. The session hash, and whether the update
# was handled already.
_READ_SCRIPT = """
return {redis.call('HGETALL', KEYS[1]), redis.call('EXISTS', KEYS[2])}
"""

# KEYS[1] session hash; ARGV field, value, field, value... Message ids are kept only while the
# session is: a message sent as the session went away (expired, or the bot left) is not kept.
_SET_MESSAGES_SCRIPT = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""

# KEYS[1] session hash; ARGV the message fields to keep. One round trip at a game's end.
_CLEAR_SCRIPT = f"""
local keep = {{}}
for _, field in ipairs(ARGV) do keep[field] = true end
local gone = {{}}
for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(field, 1, {len(MESSAGE_FIELD)}) == '{MESSAGE_FIELD}' and not keep[field] then
    table.insert(gone, field)
  end
end
if #gone > 0 then redis.call('HDEL', KEYS[1], unpack(gone)) end
return #gone
"""


class ConflictError(Exception):
    """The session kept changing under us for MAX_ATTEMPTS tries."""


class Outcome(enum.Enum):
    """What a transaction did."""

    #: A new session was written.
    CHANGED = "changed"
    #: The change function left the session as it was: nothing was written.
    UNCHANGED = "unchanged"
    #: The update was already applied by an earlier delivery: nothing was done.
    DUPLICATE = "duplicate"


@dataclass(frozen=True, slots=True, kw_only=True)
class Committed(Generic[R]):
    """The outcome of a transaction."""

    outcome: Outcome
    #: The session after the change (the stored one when nothing changed).
    session: Session | None
    #: What the change function returned besides the session (None for a duplicate).
    result: R | None
    #: The version now stored (0: none).
    version: int
    #: The messages that show the session (the table, each player's hand).
    messages: MessageIds
    #: The group's message budget is spent: the table edit is left to the clock.
    table_deferred: bool = False

    @property
    def changed(self) -> bool:
        return self.outcome is Outcome.CHANGED

    @property
    def duplicate(self) -> bool:
        return self.outcome is Outcome.DUPLICATE


#: A change: from the stored session (or None) to the new one and a result. Returning the
#: very same session object means "no change": nothing is written.
Change = Callable[[Session | None], tuple[Session | None, R]]


class GameStore:
    def __init__(
        self,
        redis: Redis,
        *,
        prefix: str = KEY_PREFIX,
        group_messages_per_minute: int = GROUP_MESSAGES_PER_MINUTE,
    ) -> None:
        self._redis = redis
        #: A press's own reads and writes (see tgcheat.store.direct).
        self._direct = DirectCommands(redis)
        self._prefix = prefix
        self.group_messages_per_minute = group_messages_per_minute
        #: Per chat: the version, session and message ids this process last saw. Only a hint
        #: that may save a read; Redis stays the truth (see transact).
        self._cache: dict[int, tuple[int, Session | None, MessageIds]] = {}
        #: Per chat: the last stored document this process wrote or read, and its session, so
        #: that reading the same document again skips decoding it (sessions are immutable).
        self._decoded: dict[int, tuple[bytes, Session]] = {}
        self._cas = redis.register_script(_CAS_SCRIPT)
        self._take = redis.register_script(_TAKE_SCRIPT)
        self._clear = redis.register_script(_CLEAR_SCRIPT)
        self._read_with_update = redis.register_script(_READ_SCRIPT)
        self._set_messages = redis.register_script(_SET_MESSAGES_SCRIPT)

    @property
    def _deadlines_key(self) -> str:
        return f"{self._prefix}:deadlines"

    async def due(self, now_ms: int, limit: int = 64) -> list[int]:
        """Chats whose deadline has passed (the clock must act there)."""
        raw = await _io(self._redis.zrangebyscore(self._deadlines_key, "-inf", now_ms, 0, limit))
        return [int(cast(bytes, chat_id)) for chat_id in raw]

    @property
    def _deferred_key(self) -> str:
        return f"{self._prefix}:deferred-tables"

    async def deferred_tables(self, now_ms: int, limit: int = 64) -> list[int]:
        """Groups whose table edit waited for a new minute's budget, now due."""
        raw = await _io(self._redis.zrangebyscore(self._deferred_key, "-inf", now_ms, 0, limit))
        return [int(cast(bytes, chat_id)) for chat_id in raw]

    async def take_group_budget(self, chat_id: int, now_ms: int) -> bool:
        """Take one group message from the budget for a deferred table edit; False (and
        deferred again) while the budget is overdrawn."""
        taken = await _io(
            self._take(
                keys=[f"{self._prefix}:rate:{chat_id}", self._deferred_key],
                args=[chat_id, self.group_messages_per_minute, now_ms],
            )
        )
        return bool(taken)

    async def forget_chat(self, chat_id: int) -> None:
        """Remove everything kept for a group's game (the bot left it, or it moved)."""
        self._cache.pop(chat_id, None)
        self._decoded.pop(chat_id, None)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.delete(self._session_key(chat_id))
            pipe.zrem(self._deadlines_key, chat_id)
            pipe.zrem(self._deferred_key, chat_id)
            await _io(pipe.execute())

    async def forget_deadline(self, chat_id: int) -> None:
        """Drop a deadline whose session is gone (expired), so it is not looked at again."""
        await _io(self._redis.zrem(self._deadlines_key, chat_id))

    def _session_key(self, chat_id: int) -> str:
        return f"{self._prefix}:chat:{chat_id}"

    def _update_key(self, update_id: int) -> str:
        return f"{self._prefix}:upd:{update_id}"

    async def _read(
        self, chat_id: int, update_id: int | None
    ) -> tuple[Session | None, int, MessageIds, bool]:
        """One round trip: the session, its message ids and whether the update was seen."""
        key = self._session_key(chat_id)
        if update_id is None:
            answer = await _io(self._direct.execute("HGETALL", key))
            seen = False
        else:
            answer, seen_flag = await _io(
                self._direct.run_script(
                    self._read_with_update, [key, self._update_key(update_id)], ()
                )
            )
            seen = bool(seen_flag)
        # A script answers a hash as a flat list; HGETALL as a map under RESP3.
        fields: dict[bytes, bytes] = (
            answer
            if isinstance(answer, dict)
            else dict(zip(answer[::2], answer[1::2], strict=True))
        )
        raw_doc = fields.pop(b"d", None)
        version = int(fields.pop(b"v", 0))
        session = self._decode(chat_id, raw_doc) if raw_doc is not None else None
        return session, version, _message_ids(fields), seen

    async def load(self, chat_id: int) -> tuple[Session | None, MessageIds]:
        session, version, messages, _seen = await self._read(chat_id, None)
        self._remember(chat_id, version, session, messages)
        return session, messages

    def _decode(self, chat_id: int, doc: bytes) -> Session:
        known = self._decoded.get(chat_id)
        if known is not None and known[0] == doc:
            return known[1]
        session = decode(doc)
        self._keep_decoded(chat_id, doc, session)
        return session

    def _keep_decoded(self, chat_id: int, doc: bytes, session: Session) -> None:
        if len(self._decoded) >= CACHE_CHATS:
            self._decoded.clear()
        self._decoded[chat_id] = (doc, session)

    def _remember(
        self, chat_id: int, version: int, session: Session | None, messages: MessageIds
    ) -> None:
        if len(self._cache) >= CACHE_CHATS:
            self._cache.clear()
        self._cache[chat_id] = (version, session, messages)

    def _remember_messages(self, chat_id: int, ids: MessageIds) -> None:
        cached = self._cache.get(chat_id)
        if cached is not None:
            version, session, messages = cached
            self._cache[chat_id] = (version, session, messages.merged(ids))

    async def transact(
        self,
        chat_id: int,
        change: Change[R],
        *,
        update_id: int | None = None,
        group_messages: Callable[[R], int] | None = None,
    ) -> Committed[R]:
        """Apply ``change`` atomically. Exceptions from ``change`` propagate; nothing is
        written then. ``group_messages`` says how many group messages the change's result will
        send; they are counted against the group's budget in the same round trip."""
        # The first try may start from what this process last wrote or read for the chat,
        # saving the read: the compare-and-set proves it is still current. A refusal or a
        # no-op computed from it is confirmed against a fresh read before it is believed.
        cached = self._cache.pop(chat_id, None)
        for attempt in range(MAX_ATTEMPTS):
            if cached is not None:
                version, session, messages = cached
            else:
                session, version, messages, seen = await self._read(chat_id, update_id)
                if seen:
                    return Committed(
                        outcome=Outcome.DUPLICATE,
                        session=session,
                        result=None,
                        version=version,
                        messages=messages,
                    )
            try:
                new_session, result = change(session)
            except Exception:
                if cached is None:
                    raise
                cached = None
                continue
            if new_session is session:
                if cached is not None:
                    cached = None
                    continue
                self._remember(chat_id, version, session, messages)
                return Committed(
                    outcome=Outcome.UNCHANGED,
                    session=session,
                    result=result,
                    version=version,
                    messages=messages,
                )
            cached = None
            assert new_session is not None, "sessions are replaced, never deleted"
            doc = encode(new_session)
            outcome = await _io(
                self._direct.run_script(
                    self._cas,
                    [
                        self._session_key(chat_id),
                        self._update_key(update_id or 0),
                        self._deadlines_key,
                        f"{self._prefix}:rate:{chat_id}",
                        self._deferred_key,
                    ],
                    [
                        version,
                        doc,
                        SESSION_TTL_S,
                        UPDATE_TTL_S,
                        "1" if update_id is not None else "0",
                        chat_id,
                        new_session.deadline_ms,
                        group_messages(result) if group_messages is not None else 0,
                        self.group_messages_per_minute,
                        int(time.time() * 1000),
                    ],
                )
            )
            if outcome in (1, 2):
                self._remember(chat_id, version + 1, new_session, messages)
                self._keep_decoded(chat_id, doc, new_session)
                return Committed(
                    outcome=Outcome.CHANGED,
                    session=new_session,
                    result=result,
                    version=version + 1,
                    messages=messages,
                    table_deferred=outcome == 2,
                )
            if outcome == -1:
                return Committed(
                        outcome=Outcome.DUPLICATE,
                        session=session,
                        result=None,
                        version=version,
                        messages=messages,
                    )
            # Lost a race: back off a random little while so that racing writers spread out.
            await asyncio.sleep(random.uniform(0, BACKOFF_S * 2 ** min(attempt, 5)))
        raise ConflictError(f"chat {chat_id}: too many concurrent changes")

    def _group_key(self, chat_id: int) -> str:
        return f"{self._prefix}:group:{chat_id}"

    async def group_rules(self, chat_id: int) -> Rules | None:
        """The rules a group chose with /settings for its next games (None: the default)."""
        raw = await _io(self._redis.hget(self._group_key(chat_id), "rules"))
        return Rules.from_dict(json.loads(raw)) if raw else None

    async def save_group_rules(self, chat_id: int, rules: Rules) -> None:
        await _io(self._redis.hset(self._group_key(chat_id), "rules", json.dumps(rules.to_dict())))

    async def group_language(self, chat_id: int) -> str | None:
        raw = await _io(self._redis.hget(self._group_key(chat_id), "lang"))
        return _text(raw) if raw else None

    async def save_group_language(self, chat_id: int, language: str) -> None:
        await _io(self._redis.hset(self._group_key(chat_id), "lang", language))

    async def user_language(self, user_id: int) -> str | None:
        raw = await _io(self._redis.hget(f"{self._prefix}:user:{user_id}", "lang"))
        return _text(raw) if raw else None

    async def save_user_language(self, user_id: int, language: str) -> None:
        await _io(self._redis.hset(f"{self._prefix}:user:{user_id}", "lang", language))

    async def set_messages(self, chat_id: int, ids: MessageIds) -> None:
        """Keep the ids of messages just sent (added to those kept)."""
        if ids.empty:
            return
        self._remember_messages(chat_id, ids)
        fields: list[str | int] = []
        for name, message_id in _message_fields(ids):
            fields += (name, message_id)
        await _io(self._direct.run_script(self._set_messages, [self._session_key(chat_id)], fields))

    async def clear_messages(self, chat_id: int, *, keep_table: bool = False) -> None:
        """Forget the message ids of a finished game (all but the table's, with
        ``keep_table``)."""
        self._cache.pop(chat_id, None)
        keep = [MESSAGE_FIELD + _TABLE] if keep_table else []
        await _io(self._clear(keys=[self._session_key(chat_id)], args=keep))


async def _io(operation: Awaitable[T]) -> T:
    """A Redis operation, with its deadline (see OPERATION_TIMEOUT_S)."""
    async with asyncio.timeout(OPERATION_TIMEOUT_S):
        return await operation


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _message_ids(fields: dict[bytes, bytes]) -> MessageIds:
    """The message ids among a session hash's fields (the version and document removed)."""
    table = None
    hands: dict[int, int] = {}
    told: set[int] = set()
    prefix = len(MESSAGE_FIELD)
    for raw_name, value in fields.items():
        name = raw_name[prefix:].decode()
        if name == _TABLE:
            table = int(value)
        elif name.startswith(_HAND):
            hands[int(name[len(_HAND) :])] = int(value)
        elif name.startswith(_TOLD):
            told.add(int(name[len(_TOLD) :]))
    return MessageIds(table, hands, frozenset(told))


def _message_fields(ids: MessageIds) -> list[tuple[str, int]]:
    fields = [(f"{MESSAGE_FIELD}{_HAND}{user_id}", mid) for user_id, mid in ids.hands.items()]
    fields += [(f"{MESSAGE_FIELD}{_TOLD}{user_id}", 1) for user_id in ids.told]
    if ids.table is not None:
        fields.append((MESSAGE_FIELD + _TABLE, ids.table))
    return fields
