"""The quick games' queue (/quick) in Redis: who waits, since when, and who plays which quick
game, matched by one script so that any number of processes may ask and match at once.

Every key has the ``{quick}`` hash tag (one slot on a Redis Cluster): a sorted set of the people
waiting by when they asked, a hash of how each is shown (language and name), a hash of the quick
game each matched person plays, with a sorted set of until when that holds, and the count of
quick games made. Bounded: a person is in the queue at most once, the queue holds at most
``MAX_WAITING`` people and only for ``WAIT_MS``, and a person has at most one game mark, dropped
``MAX_GAME_MS`` after the game began (or as soon as they ask again once it is over).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from redis.asyncio import Redis

from tgcheat.store.keys import Keys
from tgcheat.store.timeout import bounded
from tgcheat.table.quick import FILL_AFTER_MS, MAX_GAME_MS, SEATS, WAIT_MS, Seeker

#: People waiting at once, at most: beyond, /quick asks to try again in a moment.
MAX_WAITING = 1_000
#: Game marks past their time a match drops at most (the rest go with the next ones).
PRUNE_MARKS = 100
#: How long a process has to deal a table it made of the queue before the clock of any process
#: deals it (the first died on the way).
DEAL_WITHIN_MS = 15_000
#: How often a table is handed out to be dealt before it is given up (a seating that cannot be
#: dealt must not come back for ever).
DEAL_TRIES = 3

# Drops the entries of the queue older than the wait (KEYS[1] the queue, KEYS[2] the seekers:
# per person, how they are shown, and under "m:<user>" the message that told them they wait).
_EXPIRE = """
local function expire(now, wait)
  local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - wait)
  if #old > 0 then
    redis.call('HDEL', KEYS[2], unpack(old))
    for _, user in ipairs(old) do redis.call('HDEL', KEYS[2], 'm:' .. user) end
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - wait)
  end
end
"""

# A person asks to wait, or to stop waiting (KEYS: the queue, the seekers, the game marks, their
# times; ARGV: the user id, now (ms), the mode ('join', 'leave' or 'toggle'), their language,
# their name, WAIT_MS, MAX_WAITING, the number of a game the caller found over for them or '').
# Returns {outcome, detail}: {'queued', people waiting}, {'left', 0}, {'absent', 0} (a leave of
# someone not waiting), {'playing', the game's number}, {'full', 0}.
_ASK = (
    _EXPIRE
    + """
local user, now, mode = ARGV[1], tonumber(ARGV[2]), ARGV[3]
expire(now, tonumber(ARGV[6]))
if redis.call('ZSCORE', KEYS[1], user) then
  if mode == 'join' then return {'queued', redis.call('ZCARD', KEYS[1])} end
  redis.call('ZREM', KEYS[1], user)
  redis.call('HDEL', KEYS[2], user, 'm:' .. user)
  return {'left', 0}
end
if mode == 'leave' then return {'absent', 0} end
local game = redis.call('HGET', KEYS[3], user)
if game then
  local until_ms = tonumber(redis.call('ZSCORE', KEYS[4], user) or '0')
  if until_ms > now and game ~= ARGV[8] then return {'playing', tonumber(game)} end
  redis.call('HDEL', KEYS[3], user)
  redis.call('ZREM', KEYS[4], user)
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[7]) then return {'full', 0} end
redis.call('ZADD', KEYS[1], now, user)
redis.call('HSET', KEYS[2], user, ARGV[4] .. ' ' .. ARGV[5])
return {'queued', redis.call('ZCARD', KEYS[1])}
"""
)

# One table made of the queue, when it is due (KEYS: the queue, the seekers, the game marks,
# their times, the count of games, the tables made and not dealt, when each is due again;
# ARGV: now (ms), SEATS, FILL_AFTER_MS, WAIT_MS, MAX_GAME_MS, PRUNE_MARKS, DEAL_WITHIN_MS,
# DEAL_TRIES). A table made earlier whose process did not deal it in time comes first (handed
# out again, at most DEAL_TRIES times). Else one is due when SEATS people wait, or the first of
# them waited FILL_AFTER_MS: the first SEATS (or fewer) leave the queue, marked as playing the
# new game, and the table is kept until ``dealt``. Returns {} when none is due, else {the
# game's number, user id, "<language> <name>", waiting message id (0: none), user id, ...}.
_MATCH = (
    _EXPIRE
    + """
local now, seats = tonumber(ARGV[1]), tonumber(ARGV[2])
local within, tries = tonumber(ARGV[7]), tonumber(ARGV[8])
local late = redis.call('ZRANGEBYSCORE', KEYS[7], '-inf', now, 'LIMIT', 0, 1)
if #late > 0 then
  local made = cjson.decode(redis.call('HGET', KEYS[6], late[1]) or '{"t":0,"f":[]}')
  if made.t < tries and #made.f > 0 then
    made.t = made.t + 1
    redis.call('HSET', KEYS[6], late[1], cjson.encode(made))
    redis.call('ZADD', KEYS[7], now + within, late[1])
    return made.f
  end
  redis.call('HDEL', KEYS[6], late[1])
  redis.call('ZREM', KEYS[7], late[1])
end
expire(now, tonumber(ARGV[4]))
local over = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now, 'LIMIT', 0, tonumber(ARGV[6]))
if #over > 0 then
  redis.call('HDEL', KEYS[3], unpack(over))
  redis.call('ZREM', KEYS[4], unpack(over))
end
local waiting = redis.call('ZRANGE', KEYS[1], 0, seats - 1, 'WITHSCORES')
if #waiting == 0 then return {} end
if #waiting < 2 * seats and tonumber(waiting[2]) > now - tonumber(ARGV[3]) then return {} end
local number = redis.call('INCR', KEYS[5])
local found = {number}
for i = 1, #waiting, 2 do
  local user = waiting[i]
  found[#found + 1] = user
  found[#found + 1] = redis.call('HGET', KEYS[2], user) or 'en ?'
  found[#found + 1] = redis.call('HGET', KEYS[2], 'm:' .. user) or '0'
  redis.call('ZREM', KEYS[1], user)
  redis.call('HDEL', KEYS[2], user, 'm:' .. user)
  redis.call('HSET', KEYS[3], user, number)
  redis.call('ZADD', KEYS[4], now + tonumber(ARGV[5]), user)
end
redis.call('HSET', KEYS[6], number, cjson.encode({t = 1, f = found}))
redis.call('ZADD', KEYS[7], now + within, number)
return found
"""
)


# The message that told a person they wait, kept while they still do (KEYS: the queue, the
# seekers; ARGV: the user id, the message id).
_NOTE = """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('HSET', KEYS[2], 'm:' .. ARGV[1], ARGV[2])
end
return 1
"""


class Asked(enum.Enum):
    """What asking for a quick game (or to stop waiting) came to."""

    QUEUED = "queued"
    LEFT = "left"
    ABSENT = "absent"
    PLAYING = "playing"
    FULL = "full"


@dataclass(frozen=True, slots=True)
class Answer:
    outcome: Asked
    #: People waiting now (``QUEUED``), or the number of the game they play (``PLAYING``).
    detail: int = 0


@dataclass(frozen=True, slots=True)
class Match:
    """A table made of the queue: quick game ``number`` and the people seated at it, first
    asked first."""

    number: int
    seekers: tuple[Seeker, ...]


class Mode(enum.StrEnum):
    JOIN = "join"
    LEAVE = "leave"
    #: /quick: in the queue, or out of it when already waiting.
    TOGGLE = "toggle"


class QuickQueue:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys
        self._ask = redis.register_script(_ASK)
        self._match = redis.register_script(_MATCH)
        self._note = redis.register_script(_NOTE)

    def _queue_keys(self) -> list[str]:
        keys = self._keys
        return [
            keys.quick_queue(),
            keys.quick_seekers(),
            keys.quick_playing(),
            keys.quick_playing_until(),
        ]

    async def ask(
        self,
        user_id: int,
        mode: Mode,
        *,
        name: str,
        language: str,
        now_ms: int,
        over: int | None = None,
    ) -> Answer:
        """The person asks to wait for a quick game (``mode``); ``over``: the number of a game
        of theirs found over, whose mark no longer keeps them out."""
        raw = await bounded(
            self._ask(
                keys=self._queue_keys(),
                args=[
                    user_id,
                    now_ms,
                    str(mode),
                    language,
                    name,
                    WAIT_MS,
                    MAX_WAITING,
                    "" if over is None else over,
                ],
            )
        )
        outcome, detail = raw
        text = outcome.decode() if isinstance(outcome, bytes) else str(outcome)
        return Answer(Asked(text), int(detail))

    async def match(self, now_ms: int) -> Match | None:
        """One table to deal when one is due (``tgcheat.table.quick``), else None: made of the
        queue, or made earlier by a process that did not deal it in time. The caller deals it
        and says so (``dealt``)."""
        keys = self._keys
        raw = await bounded(
            self._match(
                keys=[
                    *self._queue_keys(),
                    keys.quick_games(),
                    keys.quick_made(),
                    keys.quick_made_due(),
                ],
                args=[
                    now_ms,
                    SEATS,
                    FILL_AFTER_MS,
                    WAIT_MS,
                    MAX_GAME_MS,
                    PRUNE_MARKS,
                    DEAL_WITHIN_MS,
                    DEAL_TRIES,
                ],
            )
        )
        if not raw:
            return None
        number, *rest = raw
        return Match(int(number), _seekers(rest))

    async def dealt(self, number: int) -> None:
        """Table ``number`` is dealt (or was already): no process deals it again."""
        keys = self._keys
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hdel(keys.quick_made(), str(number))
            pipe.zrem(keys.quick_made_due(), str(number))
            await bounded(pipe.execute())

    async def note_waiting_message(self, user_id: int, message_id: int) -> None:
        """The message that told the person they wait: edited when their table is made (kept
        only while they still wait)."""
        keys = [self._keys.quick_queue(), self._keys.quick_seekers()]
        await bounded(self._note(keys=keys, args=[user_id, message_id]))

    async def waiting(self) -> list[int]:
        """Who waits now, first asked first (for tests and tools)."""
        raw = await bounded(self._redis.zrange(self._keys.quick_queue(), 0, -1))
        return [int(cast(bytes, user)) for user in raw]

    async def waiting_with(self, user_id: int) -> int | None:
        """How many people wait now, when the person is one of them; None when not (an entry
        past its time counts as gone)."""
        key = self._keys.quick_queue()
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.zscore(key, str(user_id))
            pipe.zcard(key)
            asked, count = await bounded(pipe.execute())
        return None if asked is None else int(count)

    async def forget(self, user_id: int) -> None:
        """/forgetme: the person leaves the queue, and their game mark goes."""
        keys = self._keys
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.zrem(keys.quick_queue(), str(user_id))
            pipe.hdel(keys.quick_seekers(), str(user_id), f"m:{user_id}")
            pipe.hdel(keys.quick_playing(), str(user_id))
            pipe.zrem(keys.quick_playing_until(), str(user_id))
            await bounded(pipe.execute())

    async def playing(self, user_id: int) -> int | None:
        """The number of the quick game the person was matched for, while its mark holds."""
        raw = await bounded(self._redis.hget(self._keys.quick_playing(), str(user_id)))
        return int(raw) if raw is not None else None


def _seekers(raw: Sequence[bytes | str]) -> tuple[Seeker, ...]:
    found = []
    for user, shown, message in zip(raw[::3], raw[1::3], raw[2::3], strict=True):
        text = shown.decode() if isinstance(shown, bytes) else shown
        language, _, name = text.partition(" ")
        found.append(Seeker(int(user), name or "?", language or "en", int(message)))
    return tuple(found)
