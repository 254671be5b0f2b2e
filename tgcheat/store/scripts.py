"""The store's Lua scripts, and for each the one builder of its keys and arguments.

A script reads its keys and arguments by number (KEYS[n], ARGV[n]); the builder next to it
takes them by name and lists them in that order, with the numbers written beside them, so no
caller puts them in order itself.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from tgcheat.store.direct import Arg
from tgcheat.store.keys import (
    BURIED_FIELD,
    DOCUMENT_FIELD,
    LEASE_FIELD,
    LEGACY_MESSAGE_FIELD,
    RECHECK_FIELD,
    SHOWN_FIELD,
    UPDATES_FIELD,
    VERSION_FIELD,
)

#: Group messages that may go out at once before the rate applies (a play, a reveal, a table).
GROUP_BURST = 4
#: How many ids of the updates that changed a session it remembers by name.
REMEMBERED_UPDATES = 16
#: How long a process has a place to itself while it syncs it (``tgcheat.store.shown``): longer
#: than the Bot API requests of one sync may take (the sender's timeouts). A process that dies
#: holding it leaves the place to the clock once it is over.
LEASE_MS = 30_000
#: How long update ids are worth remembering: Telegram keeps an update for a day at most, and
#: after a week without updates it may number them from anywhere (Bot API, getUpdates).
UPDATE_MEMORY_MS = 24 * 3600 * 1000

# Which updates changed a session, remembered in its hash (UPDATES_FIELD), so that a
# re-delivered update is ignored whichever process sees it: "<at> <floor> <id> <id> ...", where
# the ids are those of the last REMEMBERED_UPDATES updates that changed it, the floor the
# highest id forgotten since, and at (ms) when the last id was added. Telegram numbers updates
# in increasing order, so that an update at or below the floor is one that changed the session
# long ago (or, rarely, one that waited behind REMEMBERED_UPDATES later ones of the same group):
# on its first look (``strict``) it counts as handled. A change computed again after losing a
# race is no longer strict: its update was judged new at its first look, and, had another
# process applied it meanwhile, its id would be among the remembered ones.
UPDATE_MARKS = f"""
local function update_marks(marks)
  local numbers = {{}}
  for number in string.gmatch(marks or '', '%d+') do table.insert(numbers, number) end
  if #numbers < 2 then return {{'0', '0'}} end
  return numbers
end

local function handled(marks, id, strict, now)
  local numbers = update_marks(marks)
  if now - tonumber(numbers[1]) > {UPDATE_MEMORY_MS} then return false end
  if strict and id <= tonumber(numbers[2]) then return true end
  for i = 3, #numbers do
    if tonumber(numbers[i]) == id then return true end
  end
  return false
end

-- The marks with ``id`` (a decimal string) added at ``now``; past REMEMBERED_UPDATES, the lowest
-- id is forgotten and raises the floor.
local function marked(marks, id, now)
  local numbers = update_marks(marks)
  if now - tonumber(numbers[1]) > {UPDATE_MEMORY_MS} then numbers = {{'0', '0'}} end
  numbers[1] = tostring(now)
  table.insert(numbers, id)
  if #numbers > {REMEMBERED_UPDATES} + 2 then
    local lowest = 3
    for i = 4, #numbers do
      if tonumber(numbers[i]) < tonumber(numbers[lowest]) then lowest = i end
    end
    local forgotten = table.remove(numbers, lowest)
    if tonumber(forgotten) > tonumber(numbers[2]) then numbers[2] = forgotten end
  end
  return table.concat(numbers, ' ')
end
"""

# A group's budget is a token bucket (a hash of tokens and when they were counted: the chat's
# ``Keys.bucket``, shared by the games of all its topics, as Telegram's limit is the group's):
# GROUP_BURST messages at once, refilled at the group's rate a minute. spend() takes ``cost``
# tokens and returns what is left (a debt has a floor, so that a group that played fast catches
# up within a few tokens' time). The bucket also keeps Telegram's own word on the group:
# ``until``, the end of a flood wait (a 429's retry_after), before which nothing is sent there,
# in any topic. Which of a sync's requests the bucket allows is the sync's plan to decide
# (tgcheat.bot.delivery); the scripts only read the bucket and spend what was sent.
TOKEN_BUCKET = f"""
-- The hash lives 10 minutes past its last use, or past a flood wait that ends later.
local function keep(key, ms)
  ms = math.max(600000, ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
end

local function spend(key, cost, per_minute, now)
  local rate = per_minute / 60000
  local burst = math.max(1, math.min(per_minute, {GROUP_BURST}))
  local stored = redis.call('HMGET', key, 'tokens', 'at')
  local tokens = tonumber(stored[1]) or burst
  local at = tonumber(stored[2]) or now
  -- A time before the last spend's (another process's clock is ahead of this one's) refills
  -- nothing and costs nothing. The stamp follows the spender.
  local elapsed = math.max(0, now - at)
  tokens = math.max(-burst, math.min(burst, tokens + elapsed * rate) - cost)
  redis.call('HSET', key, 'tokens', tostring(tokens), 'at', now)
  keep(key, 600000)
  return tokens
end

-- When the group's flood wait ends, if one lasts (else 0).
local function flood_end(key, now)
  local ends = tonumber(redis.call('HGET', key, 'until')) or 0
  if ends > now then return ends end
  return 0
end
"""

# A place's lease (LEASE_FIELD of its session hash, "<token> <until ms>"): the one process that
# syncs the place now. take_lease() takes it for ``token`` unless another holds it; the place
# is due in its shard's due set when the lease ends, so that a holder that dies leaves the
# place to the clock. what_shows() is what a sync starts from: the version and document, the
# shown record, how often a message was posted below the table by others (BURIED_FIELD), and
# the group's bucket (tokens, at, until), as strings ('' for none), and, when nothing is recorded
# yet, the message id fields of an earlier version (a flat list of fields and values), and how
# often a lost lease asked for the messages to be checked again (RECHECK_FIELD).
LEASE = f"""
local function lease_holder(key, now)
  local lease = redis.call('HGET', key, '{LEASE_FIELD}')
  if not lease then return nil end
  local holder, ends = string.match(lease, '(%S+) (%d+)')
  if not holder or tonumber(ends) <= now then return nil end
  return holder
end

local function take_lease(key, due, place, token, now, lease_ms)
  local holder = lease_holder(key, now)
  if holder and holder ~= token then return false end
  redis.call('HSET', key, '{LEASE_FIELD}', token .. ' ' .. tostring(now + lease_ms))
  redis.call('ZADD', due, now + lease_ms, place)
  return true
end

local function what_shows(key, bucket, watching)
  local fields = redis.call('HMGET', key, '{VERSION_FIELD}', '{DOCUMENT_FIELD}', '{SHOWN_FIELD}',
    '{BURIED_FIELD}', '{RECHECK_FIELD}')
  local budget = redis.call('HMGET', bucket, 'tokens', 'at', 'until')
  -- Nothing recorded yet: the message ids an earlier version kept, if any (a live game's
  -- first sync after the upgrade takes them over).
  local legacy = {{}}
  if not fields[3] then
    local all = redis.call('HGETALL', key)
    for i = 1, #all, 2 do
      if string.sub(all[i], 1, {len(LEGACY_MESSAGE_FIELD)}) == '{LEGACY_MESSAGE_FIELD}' then
        legacy[#legacy + 1] = all[i]
        legacy[#legacy + 1] = all[i + 1]
      end
    end
  end
  return {{fields[1] or '0', fields[2] or '', fields[3] or '', fields[4] or '0',
          budget[1] or '', budget[2] or '', budget[3] or '', legacy, fields[5] or '0',
          redis.call('HGETALL', watching)}}
end
"""

# The compare-and-set of a session (keys and arguments: cas_call). The version must still be the
# one the change was computed from; the update, if any, must not have changed the session yet.
# It then writes the document (and remembers the update), sets the session's deadline, and,
# asked to (a lease token), takes the place's lease for the sync that shows the change: the
# press pays no round trip of its own for it. Answers {CasAnswer, leased (1/0), then
# what_shows() when leased}.
CAS_SCRIPT = (
    UPDATE_MARKS
    + LEASE
    + f"""
local version = redis.call('HGET', KEYS[1], '{VERSION_FIELD}') or '0'
if version ~= ARGV[1] then return {{0, 0}} end
local now = tonumber(ARGV[8])
local fields = {{'{VERSION_FIELD}', tonumber(version) + 1, '{DOCUMENT_FIELD}', ARGV[2]}}
if ARGV[4] ~= '' then
  local marks = redis.call('HGET', KEYS[1], '{UPDATES_FIELD}')
  if handled(marks, tonumber(ARGV[4]), ARGV[5] == '1', now) then return {{-1, 0}} end
  table.insert(fields, '{UPDATES_FIELD}')
  table.insert(fields, marked(marks, ARGV[4], now))
end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('EXPIRE', KEYS[1], ARGV[3])
if ARGV[7] == '0' then
  redis.call('ZREM', KEYS[2], ARGV[6])
else
  redis.call('ZADD', KEYS[2], ARGV[7], ARGV[6])
end
if ARGV[9] ~= '' then redis.call('PUBLISH', ARGV[9], ARGV[10]) end
if ARGV[11] == '' or not take_lease(KEYS[1], KEYS[4], ARGV[6], ARGV[11], now, tonumber(ARGV[12]))
then
  return {{1, 0}}
end
local shows = what_shows(KEYS[1], KEYS[3], KEYS[5])
table.insert(shows, 1, 1)
table.insert(shows, 1, 1)
return shows
"""
)


class CasAnswer(enum.IntEnum):
    """What CAS_SCRIPT answers first."""

    #: The version was not the expected one: nothing was written.
    CONFLICT = 0
    #: The new document is stored.
    WRITTEN = 1
    #: The update changed the session already: nothing was written.
    DUPLICATE = -1


class ScriptCall(NamedTuple):
    """A script's keys and arguments, in the order it reads them."""

    keys: list[str]
    args: list[Arg]


def cas_call(
    *,
    session_key: str,
    deadlines_key: str,
    bucket_key: str,
    due_key: str,
    watching_key: str,
    expected_version: int,
    document: bytes,
    session_ttl_s: int,
    update_id: int | None,
    first_look: bool,
    place: str,
    deadline_ms: int,
    now_ms: int,
    channel: str = "",
    notice: bytes = b"",
    lease_token: str = "",
    lease_ms: int = LEASE_MS,
) -> ScriptCall:
    """CAS_SCRIPT's keys and arguments. ``update_id`` None: no update to remember;
    ``first_look``: nothing has judged the update new yet (see UPDATE_MARKS); ``deadline_ms``
    0 means no deadline; ``notice`` is published on ``channel`` once the change is written
    (empty: nothing is); ``lease_token`` empty: no lease is taken."""
    return ScriptCall(
        [
            session_key,  # KEYS[1] the session hash
            deadlines_key,  # KEYS[2] the deadlines (of the chat's shard)
            bucket_key,  # KEYS[3] the group's message budget (a token bucket)
            due_key,  # KEYS[4] the places due to be synced (of the chat's shard)
            watching_key,  # KEYS[5] whose Mini App shows the place (tgcheat.store.watching)
        ],
        [
            expected_version,  # ARGV[1] the version the change was computed from
            document,  # ARGV[2] the new document
            session_ttl_s,  # ARGV[3]
            "" if update_id is None else update_id,  # ARGV[4] the update that made the change
            "1" if first_look else "0",  # ARGV[5]
            place,  # ARGV[6] the place (Place.key)
            deadline_ms,  # ARGV[7] the session's next deadline (ms; 0: none)
            now_ms,  # ARGV[8]
            channel,  # ARGV[9] where the change is announced (empty: nowhere)
            notice,  # ARGV[10] the announcement
            lease_token,  # ARGV[11] the sync's lease token (empty: none taken)
            lease_ms,  # ARGV[12] how long the lease lasts
        ],
    )


# A sync begins without a change of its own (the clock's, a re-delivered update's, a reply's):
# the place's lease is taken, unless another process holds it (that one syncs again before it
# lets go, should anything have changed). Answers {1, what_shows()...} when taken, {0} when
# another holds it, {-1} when the place has no session.
BEGIN_SCRIPT = (
    LEASE
    + """
local now = tonumber(ARGV[2])
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('ZREM', KEYS[3], ARGV[4])
  return {-1}
end
if not take_lease(KEYS[1], KEYS[3], ARGV[4], ARGV[1], now, tonumber(ARGV[3])) then return {0} end
local shows = what_shows(KEYS[1], KEYS[2], KEYS[4])
table.insert(shows, 1, 1)
return shows
"""
)


def begin_call(
    *,
    session_key: str,
    bucket_key: str,
    due_key: str,
    watching_key: str,
    token: str,
    now_ms: int,
    lease_ms: int,
    place: str,
) -> ScriptCall:
    return ScriptCall(
        [
            session_key,  # KEYS[1] the session hash
            bucket_key,  # KEYS[2] the group's message budget
            due_key,  # KEYS[3] the places due to be synced (of the chat's shard)
            watching_key,  # KEYS[4] whose Mini App shows the place (tgcheat.store.watching)
        ],
        [
            token,  # ARGV[1] the sync's lease token
            now_ms,  # ARGV[2]
            lease_ms,  # ARGV[3]
            place,  # ARGV[4] the place (Place.key)
        ],
    )


# A sync ends (keys and arguments: end_call): what Telegram confirmed is kept, the group's
# tokens spent for what was sent there, Telegram's flood wait on the group kept. When the
# session changed meanwhile (its version, a message posted below the table, a check of the
# messages asked for), the lease is kept for another round and what_shows() answered after a 1
# ({1, ...}); else the lease goes and the place is due when what is left can go ({0}). {-1}:
# the lease was lost (another process took the place over after it ran out): nothing is
# written.
END_SCRIPT = (
    TOKEN_BUCKET
    + LEASE
    + f"""
local now = tonumber(ARGV[7])
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('ZREM', KEYS[3], ARGV[11])
  return {{-1}}
end
if lease_holder(KEYS[1], now) ~= ARGV[1] then
  local lease = redis.call('HGET', KEYS[1], '{LEASE_FIELD}')
  if not lease or string.match(lease, '(%S+)') ~= ARGV[1] then return {{-1}} end
end
redis.call('HSET', KEYS[1], '{SHOWN_FIELD}', ARGV[4])
local spent = tonumber(ARGV[5])
if spent > 0 then spend(KEYS[2], spent, tonumber(ARGV[6]), now) end
local flood_until = tonumber(ARGV[8])
if flood_until > now and flood_until > (tonumber(redis.call('HGET', KEYS[2], 'until')) or 0) then
  redis.call('HSET', KEYS[2], 'until', flood_until)
  keep(KEYS[2], flood_until - now + 600000)
end
local current = redis.call('HMGET', KEYS[1], '{VERSION_FIELD}', '{BURIED_FIELD}', '{RECHECK_FIELD}')
if current[1] ~= ARGV[2] or (current[2] or '0') ~= ARGV[3] or (current[3] or '0') ~= ARGV[12] then
  take_lease(KEYS[1], KEYS[3], ARGV[11], ARGV[1], now, tonumber(ARGV[10]))
  local shows = what_shows(KEYS[1], KEYS[2], KEYS[4])
  table.insert(shows, 1, 1)
  return shows
end
redis.call('HDEL', KEYS[1], '{LEASE_FIELD}')
local due = tonumber(ARGV[9])
if ARGV[13] == '1' then
  -- A partial sync saw only some of the place: what was due stays due (the earlier time).
  local before = tonumber(redis.call('ZSCORE', KEYS[3], ARGV[11]))
  if due > 0 and (not before or due < before) then redis.call('ZADD', KEYS[3], due, ARGV[11]) end
elseif due > 0 then
  redis.call('ZADD', KEYS[3], due, ARGV[11])
else
  redis.call('ZREM', KEYS[3], ARGV[11])
end
return {{0}}
"""
)


def end_call(
    *,
    session_key: str,
    bucket_key: str,
    due_key: str,
    watching_key: str,
    token: str,
    version: int,
    buried: int,
    shown: bytes,
    spent: int,
    per_minute: int,
    now_ms: int,
    flood_until_ms: int,
    due_ms: int,
    lease_ms: int,
    place: str,
    recheck: int = 0,
    partial: bool = False,
) -> ScriptCall:
    return ScriptCall(
        [
            session_key,  # KEYS[1] the session hash
            bucket_key,  # KEYS[2] the group's message budget
            due_key,  # KEYS[3] the places due to be synced (of the chat's shard)
            watching_key,  # KEYS[4] whose Mini App shows the place (tgcheat.store.watching)
        ],
        [
            token,  # ARGV[1] the sync's lease token
            version,  # ARGV[2] the version synced
            buried,  # ARGV[3] the count of messages posted below the table, as synced
            shown,  # ARGV[4] the shown record
            spent,  # ARGV[5] group messages sent
            per_minute,  # ARGV[6] the group's budget of messages a minute
            now_ms,  # ARGV[7]
            flood_until_ms,  # ARGV[8] the group's flood wait (0: none met)
            due_ms,  # ARGV[9] when the place is to be synced again (0: nothing is left)
            lease_ms,  # ARGV[10]
            place,  # ARGV[11] the place (Place.key)
            recheck,  # ARGV[12] how often a check of the messages was asked for, as synced
            "1" if partial else "0",  # ARGV[13] the sync saw only part of the place
        ],
    )


# A sync that takes its time (Telegram slow to answer) keeps what it has shown so far while its
# lease lasts (keys and arguments: checkpoint_call): a process that dies, or whose lease runs out
# under a slow Telegram, leaves the place to the clock with every request it made known. The
# lease is not made longer: a place waits for one slow sync at most a lease's time. Answers 1,
# or 0 when the lease is another's (or the place's session is gone): nothing is written.
CHECKPOINT_SCRIPT = f"""
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local lease = redis.call('HGET', KEYS[1], '{LEASE_FIELD}')
if not lease or string.match(lease, '(%S+)') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], '{SHOWN_FIELD}', ARGV[2])
return 1
"""


def checkpoint_call(*, session_key: str, token: str, shown: bytes) -> ScriptCall:
    return ScriptCall(
        [session_key],  # KEYS[1] the session hash
        [
            token,  # ARGV[1] the sync's lease token
            shown,  # ARGV[2] what the sync has shown so far
        ],
    )


# A sync that lost its lease asks for the place's messages to be checked again (keys and
# arguments: recheck_call): its edits may have landed after the new holder's.
RECHECK_SCRIPT = f"""
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[1], '{RECHECK_FIELD}', 1)
redis.call('ZADD', KEYS[2], ARGV[1], ARGV[2])
return 1
"""


def recheck_call(*, session_key: str, due_key: str, now_ms: int, place: str) -> ScriptCall:
    return ScriptCall(
        [
            session_key,  # KEYS[1] the session hash
            due_key,  # KEYS[2] the places due to be synced (of the chat's shard)
        ],
        [
            now_ms,  # ARGV[1] when the place is due
            place,  # ARGV[2] the place (Place.key)
        ],
    )


# A session hash, and whether an update changed it already (1) or not (0), in one round trip
# (keys and arguments: read_call).
READ_SCRIPT = (
    UPDATE_MARKS
    + f"""
local marks = redis.call('HGET', KEYS[1], '{UPDATES_FIELD}')
local seen = handled(marks, tonumber(ARGV[1]), ARGV[2] == '1', tonumber(ARGV[3]))
return {{redis.call('HGETALL', KEYS[1]), seen and 1 or 0}}
"""
)


# A reply to a command takes one token (keys and arguments: reply_call) and, when a session of
# the place is there, counts a message posted below its table (BURIED_FIELD): its next sync
# brings the table down. Returns 1 when it was taken, else 0: over budget or in a flood wait
# the reply is not sent, and nothing is written.
REPLY_SCRIPT = (
    TOKEN_BUCKET
    + f"""
local per_minute, now = tonumber(ARGV[1]), tonumber(ARGV[2])
if flood_end(KEYS[1], now) > 0 then return 0 end
if ARGV[3] == '1' then
  local tokens = spend(KEYS[1], 1, per_minute, now)
  if tokens < 0 then
    redis.call('HSET', KEYS[1], 'tokens', tostring(tokens + 1))
    return 0
  end
end
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HINCRBY', KEYS[2], '{BURIED_FIELD}', 1) end
return 1
"""
)


def reply_call(
    *, bucket_key: str, session_key: str, per_minute: int, now_ms: int, limited: bool = True
) -> ScriptCall:
    """REPLY_SCRIPT's keys and arguments."""
    return ScriptCall(
        [
            bucket_key,  # KEYS[1] the group's message budget
            session_key,  # KEYS[2] the session hash of the place replied in
        ],
        [
            per_minute,  # ARGV[1] the group's budget of messages a minute
            now_ms,  # ARGV[2]
            "1" if limited else "0",  # ARGV[3] the budget is kept
        ],
    )


def read_call(*, session_key: str, update_id: int, first_look: bool, now_ms: int) -> ScriptCall:
    """READ_SCRIPT's keys and arguments (``first_look``: see UPDATE_MARKS)."""
    return ScriptCall(
        [session_key],  # KEYS[1] the session hash
        [
            update_id,  # ARGV[1]
            "1" if first_look else "0",  # ARGV[2]
            now_ms,  # ARGV[3]
        ],
    )
