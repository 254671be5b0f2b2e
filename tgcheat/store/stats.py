"""Players' statistics in Redis: a hash per person (across groups) and a hash per chat (a
group's table, one row per player), each counted once per finished game.

Exactly once, with one key per script call (so that the keys of several players need not share
a Redis Cluster slot): every hash remembers the last few games it counted (``RECENT_GAMES``),
and a game is counted in two steps:

1. the chat's script: a game the chat knows as counted for everyone (field ``d``) stops here;
   else the group's rows are added, once (field ``r``);
2. one pipeline: each person's script (which adds a game it does not remember) and the chat's
   mark that the game is counted for everyone.

So a re-delivered update, two processes, or the clock showing a result whose publisher died,
count a game once: whoever comes second finds it remembered, and one who died between the steps
is completed by the next try. Only the chat's current game is ever counted again (the trigger is
its finished session), and it is the newest the chat remembers: a late second try, even days
later, stops at the first step. Two round trips a game.

Memory is bounded per person: one row of numbers, a name, the last games counted and the groups
whose tables have a row of theirs (``MAX_GROUPS``, so that /forgetme can remove those rows; the
group that falls out of the list loses the person's row at once). Statistics are forgotten
``STATS_TTL_S`` after their last game counted; a group's when the bot leaves it
(``GameStore.forget_chat``), a person's with /forgetme (``forget_person``).
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import cast

from redis.asyncio import Redis, RedisCluster
from redis.exceptions import NoScriptError

from tgcheat.store.keys import Keys
from tgcheat.store.timeout import bounded
from tgcheat.table.stats import BEST_STREAK_AT, ROW_FIELDS, STREAK_AT, GameRecord, Line, Row

#: How many games each hash remembers as counted: a second try comes within seconds (the
#: outbox's lease), long before a person finishes this many other games.
RECENT_GAMES = 8
#: The groups whose tables keep a row of a person, at most (the latest groups played in).
MAX_GROUPS = 64
#: Statistics not added to for this long are forgotten (a person's, a group's).
STATS_TTL_S = 365 * 24 * 3600
#: How long /forgetme's mark stays: a game that ended before it is not counted for the person
#: when its count comes late (a second process, the clock showing a result whose publisher
#: died: within minutes), nor does it bring back their row in the group's table.
FORGOTTEN_MARK_S = 3600

_NAME, _ROW, _RECENT = b"n", b"s", "r"
_DONE, _GAMES = "d", b"g"

_HELPERS = f"""
local function has(list, item)
  return string.find(' ' .. list .. ' ', ' ' .. item .. ' ', 1, true) ~= nil
end
-- The list with item first, the others after it, keep items at most.
local function remembered(list, item, keep)
  local items = {{item}}
  for word in string.gmatch(list, '%S+') do
    if #items >= keep then break end
    if word ~= item then items[#items + 1] = word end
  end
  return table.concat(items, ' ')
end
-- Add the numbers of added to the row in field; outcome 1 (won) lengthens the streak, 0
-- (lost) ends it, 2 (a game with computer players) leaves it.
local function add_row(key, field, added, outcome)
  local row = {{}}
  for n in string.gmatch(redis.call('HGET', key, field) or '', '%-?%d+') do
    row[#row + 1] = tonumber(n)
  end
  local i = 0
  for n in string.gmatch(added, '%-?%d+') do
    i = i + 1
    row[i] = (row[i] or 0) + tonumber(n)
  end
  for j = 1, {len(ROW_FIELDS)} do row[j] = row[j] or 0 end
  local s, b = {STREAK_AT + 1}, {BEST_STREAK_AT + 1}
  if outcome == '1' then
    row[s] = row[s] + 1
    if row[s] > row[b] then row[b] = row[s] end
  elseif outcome == '0' then
    row[s] = 0
  end
  redis.call('HSET', key, field, table.concat(row, ' '))
end
"""

# The chat's step (KEYS: the chat's hash; ARGV: the game, RECENT_GAMES, the TTL, 1 when the
# group's table counts it, then for each person: user id, name, outcome, the numbers added).
# 0: counted for everyone already; 1: go on with the people.
_CHAT = (
    _HELPERS
    + """
local key, game = KEYS[1], ARGV[1]
if has(redis.call('HGET', key, 'd') or '', game) then return 0 end
local counted = redis.call('HGET', key, 'r') or ''
if not has(counted, game) then
  if ARGV[4] == '1' then
    redis.call('HINCRBY', key, 'g', 1)
    for i = 5, #ARGV, 4 do
      redis.call('HSET', key, 'n:' .. ARGV[i], ARGV[i + 1])
      add_row(key, 's:' .. ARGV[i], ARGV[i + 3], ARGV[i + 2])
    end
  end
  redis.call('HSET', key, 'r', remembered(counted, game, tonumber(ARGV[2])))
end
redis.call('EXPIRE', key, ARGV[3])
return 1
"""
)

# A person's step (KEYS: their hash; ARGV: the game, RECENT_GAMES, the TTL, the name, the
# outcome, the numbers added, the group whose table has their row now or '', MAX_GROUPS, when
# the game ended (ms), FORGOTTEN_MARK_S in ms). Returns 'dup' for a game counted already,
# 'forgotten' for one that ended before the person asked to be forgotten (field 'f', left by
# forget_person), else the group that fell out of their list, or ''.
_PERSON = (
    _HELPERS
    + """
local key, game = KEYS[1], ARGV[1]
local forgot = tonumber(redis.call('HGET', key, 'f'))
if forgot then
  local ended = tonumber(ARGV[9])
  if ended <= forgot then return 'forgotten' end
  -- A game ended this long after the wish: no earlier game can still be on its way.
  if ended - forgot > tonumber(ARGV[10]) then redis.call('HDEL', key, 'f') end
end
local counted = redis.call('HGET', key, 'r') or ''
if has(counted, game) then return 'dup' end
redis.call('HSET', key, 'r', remembered(counted, game, tonumber(ARGV[2])), 'n', ARGV[4])
add_row(key, 's', ARGV[6], ARGV[5])
local dropped = ''
if ARGV[7] ~= '' then
  local most = tonumber(ARGV[8])
  local groups = {}
  local list = remembered(redis.call('HGET', key, 'gs') or '', ARGV[7], most + 1)
  for word in string.gmatch(list, '%S+') do groups[#groups + 1] = word end
  if #groups > most then dropped = table.remove(groups) end
  redis.call('HSET', key, 'gs', table.concat(groups, ' '))
end
redis.call('EXPIRE', key, ARGV[3])
return dropped
"""
)

# The chat's last step: the game is counted for everyone (KEYS: the chat's hash; ARGV: the
# game, RECENT_GAMES).
_DONE_SCRIPT = (
    _HELPERS
    + """
local list = redis.call('HGET', KEYS[1], 'd') or ''
redis.call('HSET', KEYS[1], 'd', remembered(list, ARGV[1], tonumber(ARGV[2])))
return 1
"""
)

# /forgetme on a person's hash (KEYS: it; ARGV: now in ms, FORGOTTEN_MARK_S): it keeps only the
# time of the wish, for a while. Returns the groups whose tables had a row of theirs.
_FORGET = """
local groups = redis.call('HGET', KEYS[1], 'gs') or ''
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'f', ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return groups
"""


def game_mark(key: str) -> str:
    """A game's key as the hashes remember it: short, the same in every process."""
    return hashlib.blake2b(key.encode(), digest_size=6).hexdigest()


def _numbers(row: Row) -> str:
    return " ".join(str(n) for n in row.numbers())


def _row(raw: bytes | str | None) -> Row:
    text = raw.decode() if isinstance(raw, bytes) else (raw or "")
    return Row.of(int(n) for n in text.split())


def _text(raw: bytes | str | None) -> str:
    return raw.decode() if isinstance(raw, bytes) else (raw or "")


class Stats:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys
        self._chat = redis.register_script(_CHAT)
        self._person = redis.register_script(_PERSON)
        self._done = redis.register_script(_DONE_SCRIPT)
        self._forget = redis.register_script(_FORGET)
        #: The person's and the done scripts are known to Redis (loaded by this process).
        self._loaded = False

    async def count(self, record: GameRecord) -> bool:
        """Count a finished game in its players' and its group's statistics, once whoever asks
        and however often; True when this call found it not yet counted for everyone."""
        mark = game_mark(record.key)
        chat_key = self._keys.chat_stats(record.chat_id)
        if not await self._chat_step(record, mark, chat_key):
            return False
        group = str(record.chat_id) if record.group_rows else ""
        answers = await self._people_and_done(record, mark, chat_key, group)
        dropped = []
        for line, answer in zip(record.lines, answers, strict=False):
            said = _text(answer)
            if said == "forgotten" and record.group_rows:
                # The chat's step gave them a row again: it goes as /forgetme's did.
                dropped.append((line.user_id, record.chat_id))
            elif said not in ("", "dup", "forgotten"):
                dropped.append((line.user_id, int(said)))
        if dropped:
            # Rare: a person's list of groups was full (their row goes from the group that
            # fell out of it, so that no row is left that /forgetme would not find), or they
            # asked to be forgotten after the game ended.
            async with self._redis.pipeline(transaction=False) as pipe:
                for user_id, chat_id in dropped:
                    pipe.hdel(self._keys.chat_stats(chat_id), f"n:{user_id}", f"s:{user_id}")
                await bounded(pipe.execute())
        return True

    async def _chat_step(self, record: GameRecord, mark: str, chat_key: str) -> bool:
        """The chat's script: False when the game is counted for everyone already."""
        people: list[str | int] = []
        if record.group_rows:
            for line in record.lines:
                people += [line.user_id, line.name, line.outcome, _numbers(line.added)]
        args = [mark, RECENT_GAMES, STATS_TTL_S, int(record.group_rows), *people]
        return bool(int(await bounded(self._chat(keys=[chat_key], args=args))))

    async def _people_and_done(
        self, record: GameRecord, mark: str, chat_key: str, group: str
    ) -> list[bytes | str | None]:
        """Each person's step, then the chat's mark, in one round trip. The scripts go by
        their digest (a pipeline would ask Redis whether it knows them each time); when Redis
        forgot them (restarted), they are loaded and the steps sent again (each is idempotent).
        A cluster client pipelines no scripts: there each person's step goes on its own, all at
        once (one round trip to each master), then the chat's mark."""
        if isinstance(self._redis, RedisCluster):
            answers = await bounded(
                asyncio.gather(
                    *(
                        self._person(
                            keys=[self._keys.person_stats(line.user_id)],
                            args=self._person_args(mark, line, group, record.ended_ms),
                        )
                        for line in record.lines
                    )
                )
            )
            await bounded(self._done(keys=[chat_key], args=[mark, RECENT_GAMES]))
            return cast(list[bytes | str | None], answers)
        for attempt in range(2):
            if not self._loaded:
                for script in (self._person, self._done):
                    script.sha = await bounded(self._redis.script_load(script.script))
                self._loaded = True
            try:
                async with self._redis.pipeline(transaction=False) as pipe:
                    for line in record.lines:
                        person = self._keys.person_stats(line.user_id)
                        pipe.evalsha(
                            self._person.sha,
                            1,
                            person,
                            *self._person_args(mark, line, group, record.ended_ms),
                        )
                    pipe.evalsha(self._done.sha, 1, chat_key, mark, RECENT_GAMES)
                    return cast(list[bytes | str | None], await bounded(pipe.execute()))
            except NoScriptError:
                self._loaded = False
                if attempt:
                    raise
        raise AssertionError("unreachable")

    @staticmethod
    def _person_args(mark: str, line: Line, group: str, ended_ms: int) -> list[str | int]:
        return [
            mark,
            RECENT_GAMES,
            STATS_TTL_S,
            line.name,
            line.outcome,
            _numbers(line.added),
            group,
            MAX_GROUPS,
            ended_ms,
            FORGOTTEN_MARK_S * 1000,
        ]

    async def person(self, user_id: int) -> Row | None:
        """A person's figures across groups (None: nothing counted)."""
        raw = await bounded(self._redis.hget(self._keys.person_stats(user_id), _ROW.decode()))
        return None if raw is None else _row(cast(bytes, raw))

    async def group(self, chat_id: int) -> dict[int, tuple[str, Row]]:
        """A group's table: each player's latest name and figures, by user id."""
        raw = await bounded(self._redis.hgetall(self._keys.chat_stats(chat_id)))
        names: dict[int, str] = {}
        rows: dict[int, Row] = {}
        for field, value in cast(dict[bytes, bytes], raw).items():
            kind, _, user = field.partition(b":")
            if not user:
                continue
            if kind == _NAME:
                names[int(user)] = _text(value)
            elif kind == _ROW:
                rows[int(user)] = _row(value)
        return {user_id: (names.get(user_id, ""), row) for user_id, row in rows.items()}

    async def forget_person(self, user_id: int, now_ms: int) -> None:
        """/forgetme: a person's statistics, their rows in the groups' tables, their next-game
        sign-ups in those groups, their settings (language, /play rules), where they were dealt
        lately, their Mini App requests and their reply budget go. Their hash
        keeps only the time of the wish, for ``FORGOTTEN_MARK_S``: a game that ended before it
        and is counted only now (a late try) is not counted for them."""
        person = self._keys.person_stats(user_id)
        # At once, so that a game counted meanwhile leaves no row in a group not listed.
        raw = await bounded(self._forget(keys=[person], args=[now_ms, FORGOTTEN_MARK_S]))
        groups = _text(raw).split()
        async with self._redis.pipeline(transaction=False) as pipe:
            # One DEL a key: on a Redis Cluster they are of different slots.
            for key in (
                self._keys.chat_stats(user_id),
                self._keys.user(user_id),
                self._keys.played_places(user_id),
                self._keys.app_requests(user_id),
                self._keys.replies(user_id),
                # Their private chat's message budget (and what it held back), and its
                # settings: the rules of their games against the computer (/settings there).
                self._keys.bucket(user_id),
                self._keys.group(user_id),
            ):
                pipe.delete(key)
            for group in groups:
                pipe.hdel(self._keys.chat_stats(int(group)), f"n:{user_id}", f"s:{user_id}")
                pipe.srem(self._keys.pings(int(group)), user_id)
            await bounded(pipe.execute())

    async def memory(self, user_id: int) -> int:
        """Bytes Redis uses for a person's hash (MEMORY USAGE), for the benchmark."""
        used = await bounded(self._redis.memory_usage(self._keys.person_stats(user_id)))
        return int(used or 0)
