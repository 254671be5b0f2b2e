"""The store's Lua scripts, and for each the one builder of its keys and arguments.

A script reads its keys and arguments by number (KEYS[n], ARGV[n]); the builder next to it
takes them by name and lists them in that order, with the numbers written beside them, so no
caller puts them in order itself.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import NamedTuple

from tgcheat.store.direct import Arg
from tgcheat.store.keys import (
    DOCUMENT_FIELD,
    HISTORY_FIELD,
    MESSAGE_FIELD,
    SHOWN_FIELD,
    UPDATES_FIELD,
    VERSION_FIELD,
)

#: Group messages that may go out at once before the rate applies (a play, a reveal, a table).
GROUP_BURST = 4
#: How many ids of the updates that changed a session it remembers by name.
REMEMBERED_UPDATES = 16
#: Changes whose must-see messages a group keeps waiting at most (the oldest go first): only a
#: bot that has been down for long has more.
OUTBOX_ENTRIES = 32
#: How long the process that committed a change has to show what players must see of it before
#: the clock shows it instead: longer than a Bot API request may take (the sender's timeouts).
OUTBOX_LEASE_MS = 30_000
#: Former tables whose history line a session keeps (the latest; see SET_MESSAGES_SCRIPT).
HISTORY_KEPT = 8
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
# tokens and returns what is left; overdrawn, the table edit is deferred until a token is back,
# and then shows the state of then (edits coalesce, the latest state wins). The bucket also
# keeps Telegram's own word on the group: ``until``, the end of a flood wait (a 429's
# retry_after), before which nothing is sent there, in any topic.
#
# What waits for the clock is each place's own (``Keys.waiting``; for a chat without topics the
# bucket's hash itself, whose fields differ): ``table`` (1: the table waits to be shown),
# ``lines``, announcements not yet shown (a JSON list of texts), ``hands``, players whose hand
# was not shown (a private chat's own flood wait; a JSON list of user ids as strings), and
# ``gone``, old messages to delete (a JSON list of "chat:message" strings). Both keys carry the
# chat's hash tag, as does its shard's deferred set: one script, one slot.
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
  -- nothing and costs nothing: charging the gap would overdraw the group and hide its table
  -- edits until the clocks agree again. The stamp follows the spender, so that the next spend
  -- on this clock refills from here (clocks apart by a few ms refill a few ms more).
  local elapsed = math.max(0, now - at)
  -- Announcements are sent even over budget, but the debt has a floor, so that a group that
  -- played fast catches up within a few tokens' time once play slows down.
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

-- The one table edit that did not go out gets its token back, and waits until a whole token
-- is there for it and any flood wait is over; returns when that is (ms).
local function defer(bucket, waiting, deferred, place, tokens, per_minute, now)
  tokens = tokens + 1
  redis.call('HSET', bucket, 'tokens', tostring(tokens))
  redis.call('HSET', waiting, 'table', '1')
  keep(waiting, 600000)
  local due = now + math.ceil((1 - tokens) / (per_minute / 60000))
  due = math.max(due, flood_end(bucket, now))
  redis.call('ZADD', deferred, due, place)
  return due
end
"""

# What players must see of a change (reveals, passes, the result, a removal), kept in the group's
# budget hash (field ``out``) by the compare-and-set that commits the change, until the process
# that publishes it says it was shown (SETTLE_SCRIPT). An entry: {"v": the version that recorded
# it, "until": ms, "lines": [texts], "table": 1 (the table is posted anew below them) or 0,
# "hands": [user ids whose hand comes back as a new message]}. Until ``until`` (the publisher's
# lease) the entry is the publisher's; after it the clock shows it (RELEASE_SCRIPT), so a change
# whose publisher died or failed between the commit and Telegram's answer is still shown, once.
OUTBOX = f"""
local function entries(json)
  if not json then return {{}} end
  local decoded = cjson.decode(json)
  if type(decoded) ~= 'table' then return {{}} end
  return decoded
end

-- The chat is due in the deferred set at ``due``, or earlier if it was due earlier already.
local function due_by(deferred, chat, due)
  local stored = tonumber(redis.call('ZSCORE', deferred, chat))
  if not stored or stored > due then redis.call('ZADD', deferred, due, chat) end
end

local function post(key, deferred, chat, json, version, lease_until)
  local entry = cjson.decode(json)
  entry['v'] = version
  entry['until'] = lease_until
  local all = entries(redis.call('HGET', key, 'out'))
  all[#all + 1] = entry
  while #all > {OUTBOX_ENTRIES} do table.remove(all, 1) end
  redis.call('HSET', key, 'out', cjson.encode(all))
  keep(key, 600000)
  due_by(deferred, chat, lease_until)
end
"""

# The compare-and-set of a session (keys and arguments: cas_call). The version must still be the
# one the change was computed from; the update, if any, must not have changed the session yet.
# It then writes the document (and remembers the update), sets the session's deadline and
# spends the group's budget. Answers: a CasAnswer.
CAS_SCRIPT = (
    TOKEN_BUCKET
    + OUTBOX
    + UPDATE_MARKS
    + f"""
local version = redis.call('HGET', KEYS[1], '{VERSION_FIELD}') or '0'
if version ~= ARGV[1] then return 0 end
local now = tonumber(ARGV[10])
local fields = {{'{VERSION_FIELD}', tonumber(version) + 1, '{DOCUMENT_FIELD}', ARGV[2]}}
if ARGV[4] ~= '' then
  local marks = redis.call('HGET', KEYS[1], '{UPDATES_FIELD}')
  if handled(marks, tonumber(ARGV[4]), ARGV[5] == '1', now) then return -1 end
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
local answer = 1
local cost = tonumber(ARGV[8])
if cost > 0 then
  local per_minute = tonumber(ARGV[9])
  local tokens = spend(KEYS[3], cost, per_minute, now)
  if tokens < 0 or flood_end(KEYS[3], now) > 0 then
    defer(KEYS[3], KEYS[5], KEYS[4], ARGV[6], tokens, per_minute, now)
    answer = 2
  end
end
if ARGV[11] ~= '' then
  post(KEYS[5], KEYS[4], ARGV[6], ARGV[11], tonumber(version) + 1, now + tonumber(ARGV[12]))
end
if ARGV[13] ~= '' then redis.call('PUBLISH', ARGV[13], ARGV[14]) end
return answer
"""
)


class CasAnswer(enum.IntEnum):
    """What CAS_SCRIPT answers."""

    #: The version was not the expected one: nothing was written.
    CONFLICT = 0
    #: The new document is stored.
    WRITTEN = 1
    #: Written, but the group's budget is overdrawn (or Telegram asked to wait): the table
    #: edit waits until a token is back (in the deferred tables).
    WRITTEN_TABLE_DEFERRED = 2
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
    deferred_key: str,
    waiting_key: str,
    expected_version: int,
    document: bytes,
    session_ttl_s: int,
    update_id: int | None,
    first_look: bool,
    place: str,
    deadline_ms: int,
    group_messages: int,
    per_minute: int,
    now_ms: int,
    outbox_entry: bytes = b"",
    lease_ms: int = OUTBOX_LEASE_MS,
    channel: str = "",
    notice: bytes = b"",
) -> ScriptCall:
    """CAS_SCRIPT's keys and arguments. ``update_id`` None: no update to remember;
    ``first_look``: nothing has judged the update new yet (see UPDATE_MARKS); ``deadline_ms``
    0 means no deadline; ``group_messages`` counts the table edit; ``notice`` is published on
    ``channel`` once the change is written (empty: nothing is)."""
    return ScriptCall(
        [
            session_key,  # KEYS[1] the session hash
            deadlines_key,  # KEYS[2] the deadlines (of the chat's shard)
            bucket_key,  # KEYS[3] the group's message budget (a token bucket)
            deferred_key,  # KEYS[4] the deferred tables (of the chat's shard)
            waiting_key,  # KEYS[5] what waits for the clock in the place
        ],
        [
            expected_version,  # ARGV[1] the version the change was computed from
            document,  # ARGV[2] the new document
            session_ttl_s,  # ARGV[3]
            "" if update_id is None else update_id,  # ARGV[4] the update that made the change
            "1" if first_look else "0",  # ARGV[5]
            place,  # ARGV[6] the place (Place.key)
            deadline_ms,  # ARGV[7] the session's next deadline (ms; 0: none)
            group_messages,  # ARGV[8] group messages the change will send
            per_minute,  # ARGV[9] the group's budget of messages a minute
            now_ms,  # ARGV[10]
            outbox_entry,  # ARGV[11] what players must see of the change (JSON; empty: none)
            lease_ms,  # ARGV[12] how long the committing process has to show it
            channel,  # ARGV[13] where the change is announced (empty: nowhere)
            notice,  # ARGV[14] the announcement
        ],
    )


# A table shown now takes one token from its group's budget (keys and arguments: take_call).
# Returns 1 when a token was taken (the table no longer waits; the chat leaves the deferred set
# unless messages are still held there), else 0 (the table waits: deferred).
TAKE_SCRIPT = (
    TOKEN_BUCKET
    + """
local per_minute, now = tonumber(ARGV[2]), tonumber(ARGV[3])
local tokens = spend(KEYS[1], 1, per_minute, now)
if tokens < 0 or flood_end(KEYS[1], now) > 0 then
  defer(KEYS[1], KEYS[3], KEYS[2], ARGV[1], tokens, per_minute, now)
  return 0
end
redis.call('HDEL', KEYS[3], 'table')
local others = redis.call('HMGET', KEYS[3], 'lines', 'hands', 'gone', 'out')
if not others[1] and not others[2] and not others[3] and not others[4] then
  redis.call('ZREM', KEYS[2], ARGV[1])
end
return 1
"""
)


def take_call(
    *,
    bucket_key: str,
    deferred_key: str,
    waiting_key: str,
    place: str,
    per_minute: int,
    now_ms: int,
) -> ScriptCall:
    """TAKE_SCRIPT's keys and arguments."""
    return ScriptCall(
        [
            bucket_key,  # KEYS[1] the group's message budget
            deferred_key,  # KEYS[2] the deferred tables (of the chat's shard)
            waiting_key,  # KEYS[3] what waits for the clock in the place
        ],
        [
            place,  # ARGV[1] the place (Place.key)
            per_minute,  # ARGV[2] the group's budget of messages a minute
            now_ms,  # ARGV[3]
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


# A reply to a command takes one token (keys and arguments: reply_call). Returns 1 when it was
# taken, else 0: over budget or in a flood wait the reply is not sent, and nothing is deferred.
REPLY_SCRIPT = (
    TOKEN_BUCKET
    + """
local per_minute, now = tonumber(ARGV[1]), tonumber(ARGV[2])
if flood_end(KEYS[1], now) > 0 then return 0 end
local tokens = spend(KEYS[1], 1, per_minute, now)
if tokens < 0 then
  redis.call('HSET', KEYS[1], 'tokens', tostring(tokens + 1))
  return 0
end
return 1
"""
)


def reply_call(*, bucket_key: str, per_minute: int, now_ms: int) -> ScriptCall:
    """REPLY_SCRIPT's keys and arguments."""
    return ScriptCall(
        [bucket_key],  # KEYS[1] the group's message budget
        [
            per_minute,  # ARGV[1] the group's budget of messages a minute
            now_ms,  # ARGV[2]
        ],
    )


# What Telegram's 429 kept from being shown waits for the clock (keys and arguments:
# hold_call): the group's flood wait, the table, announcements, hands. The chat is due in the
# deferred set when the wait is over (or later, if it was due later already).
HOLD_SCRIPT = (
    TOKEN_BUCKET
    + """
local bucket, key, chat = KEYS[1], KEYS[3], ARGV[1]
local ends, now = tonumber(ARGV[2]), tonumber(ARGV[7])
if ARGV[3] == '1' and ends > (tonumber(redis.call('HGET', bucket, 'until')) or 0) then
  redis.call('HSET', bucket, 'until', ends)
  keep(bucket, ends - now + 600000)
end
local waits = ARGV[4] == '1'
if waits then redis.call('HSET', key, 'table', '1') end
local function append(field, json)
  local items = cjson.decode(json)
  if #items == 0 then return false end
  local stored = redis.call('HGET', key, field)
  local all = {}
  if stored then all = cjson.decode(stored) end
  for _, item in ipairs(items) do all[#all + 1] = item end
  redis.call('HSET', key, field, cjson.encode(all))
  return true
end
if append('lines', ARGV[5]) then waits = true end
if append('hands', ARGV[6]) then waits = true end
if append('gone', ARGV[8]) then waits = true end
keep(key, ends - now + 600000)
if waits then
  -- The earlier of the two: hands and deletions go out at their time even while the group
  -- waits longer (RELEASE_SCRIPT defers the group's part again); a look too early costs one.
  local due = math.min(ends, tonumber(redis.call('ZSCORE', KEYS[2], chat)) or ends)
  redis.call('ZADD', KEYS[2], due, chat)
end
return 1
"""
)


def hold_call(
    *,
    bucket_key: str,
    deferred_key: str,
    waiting_key: str,
    place: str,
    until_ms: int,
    group_flooded: bool,
    table: bool,
    lines_json: bytes,
    hands_json: bytes,
    gone_json: bytes,
    now_ms: int,
) -> ScriptCall:
    """HOLD_SCRIPT's keys and arguments. ``lines_json``, ``hands_json`` and ``gone_json``: JSON
    lists (of texts, of user ids as strings, of "chat:message" strings), empty when nothing of
    the kind is held."""
    return ScriptCall(
        [
            bucket_key,  # KEYS[1] the group's message budget (its flood wait)
            deferred_key,  # KEYS[2] the deferred tables (of the chat's shard)
            waiting_key,  # KEYS[3] what waits for the clock in the place
        ],
        [
            place,  # ARGV[1] the place (Place.key)
            until_ms,  # ARGV[2] when the flood wait ends (ms)
            "1" if group_flooded else "0",  # ARGV[3] the wait is the group's own
            "1" if table else "0",  # ARGV[4] the table waits to be shown
            lines_json,  # ARGV[5] announcements held
            hands_json,  # ARGV[6] hands held
            now_ms,  # ARGV[7]
            gone_json,  # ARGV[8] messages to delete
        ],
    )


# The clock's turn at a deferred group (keys and arguments: release_call). When the table or an
# announcement waits, it needs a token and the end of any flood wait (else the chat is deferred
# again, and 0 is returned unless hands or deletions were held: those go out meanwhile, alone);
# hands and deletions alone go out regardless. Must-see entries
# (OUTBOX) are taken once their publisher's lease is over, their lines first. Returns {1, table
# (1/0), lines, hands, gone, token}: what is released becomes one entry of its own, numbered
# ``token`` (negative) and leased to this process for ARGV[4] ms, so that one process shows it
# and settles it (SETTLE_SCRIPT); when that process fails or its answer is lost on the way (Redis
# restarting), the clock releases it again once the lease is over.
RELEASE_SCRIPT = (
    TOKEN_BUCKET
    + OUTBOX
    + """
local bucket, key, chat = KEYS[1], KEYS[3], ARGV[1]
local per_minute, now = tonumber(ARGV[2]), tonumber(ARGV[3])

-- What is released becomes an entry of its own among those ``kept``, leased to this process;
-- the clock looks again at ``wake`` or when the lease is over, whichever comes first.
local function released(kept, lines, hands, gone, table_flag, wake)
  local token = -now
  local taken_until = now + tonumber(ARGV[4])
  kept[#kept + 1] = {
    v = token, ['until'] = taken_until, lines = lines, hands = hands, gone = gone,
    table = table_flag,
  }
  redis.call('HSET', key, 'out', cjson.encode(kept))
  keep(key, 600000)
  redis.call('ZADD', KEYS[2], math.min(wake or taken_until, taken_until), chat)
  local function listed(items) return #items > 0 and cjson.encode(items) or '' end
  return {1, table_flag, listed(lines), listed(hands), listed(gone), token}
end

local held = redis.call('HMGET', key, 'table', 'lines', 'hands', 'gone', 'out')
local outbox = entries(held[5])
local due_lines, due_hands, later = {}, {}, {}
local due_table, next_lease = false, nil
local due_gone = {}
for _, entry in ipairs(outbox) do
  if tonumber(entry['until']) <= now then
    for _, line in ipairs(entry['lines'] or {}) do due_lines[#due_lines + 1] = line end
    for _, hand in ipairs(entry['hands'] or {}) do due_hands[#due_hands + 1] = hand end
    for _, old in ipairs(entry['gone'] or {}) do due_gone[#due_gone + 1] = old end
    if entry['table'] == 1 then due_table = true end
  else
    later[#later + 1] = entry
    if not next_lease or entry['until'] < next_lease then next_lease = entry['until'] end
  end
end
local held_lines, held_hands = entries(held[2]), entries(held[3])
for _, old in ipairs(entries(held[4])) do due_gone[#due_gone + 1] = old end
local nothing_else = not held[2] and not held[3] and not held[4]
local nothing_due = #due_lines == 0 and #due_hands == 0 and #due_gone == 0 and not due_table
if nothing_else and #outbox > 0 and nothing_due then
  -- Woken for entries whose publishers still have time.
  redis.call('ZADD', KEYS[2], next_lease, chat)
  return {0}
end
-- Nothing held but the entry: a table edit deferred before anything else was kept here.
local table_waits = held[1] == '1' or due_table or (nothing_else and #outbox == 0)
if table_waits or #due_lines > 0 or #held_lines > 0 then
  local group_due = flood_end(bucket, now)
  if group_due > 0 then
    redis.call('ZADD', KEYS[2], group_due, chat)
  else
    local tokens = spend(bucket, 1, per_minute, now)
    if tokens < 0 then group_due = defer(bucket, key, KEYS[2], chat, tokens, per_minute, now) end
  end
  if group_due > 0 then
    -- The group waits; the hands held and the messages to delete need no group message: they
    -- go now, as an entry of their own (the outbox's entries wait with the group).
    local alone, old = entries(held[3]), entries(held[4])
    if #alone == 0 and #old == 0 then return {0} end
    redis.call('HDEL', key, 'hands', 'gone')
    for i, hand in ipairs(alone) do alone[i] = tostring(hand) end
    return released(outbox, {}, alone, old, 0, group_due)
  end
end
for _, line in ipairs(held_lines) do due_lines[#due_lines + 1] = line end
for _, hand in ipairs(held_hands) do due_hands[#due_hands + 1] = tostring(hand) end
redis.call('HDEL', key, 'table', 'lines', 'hands', 'gone')
return released(later, due_lines, due_hands, due_gone, table_waits and 1 or 0, next_lease)
"""
)


def release_call(
    *,
    bucket_key: str,
    deferred_key: str,
    waiting_key: str,
    place: str,
    per_minute: int,
    now_ms: int,
    lease_ms: int = OUTBOX_LEASE_MS,
) -> ScriptCall:
    """RELEASE_SCRIPT's keys and arguments."""
    return ScriptCall(
        [
            bucket_key,  # KEYS[1] the group's message budget
            deferred_key,  # KEYS[2] the deferred tables (of the chat's shard)
            waiting_key,  # KEYS[3] what waits for the clock in the place
        ],
        [
            place,  # ARGV[1] the place (Place.key)
            per_minute,  # ARGV[2] the group's budget of messages a minute
            now_ms,  # ARGV[3]
            lease_ms,  # ARGV[4] how long the releasing process has to show it
        ],
    )


# A publisher's word on the must-see entry of the change it published (keys and arguments:
# settle_call): shown (no ``rest``: the entry goes), or not all of it (``rest``, a JSON entry of
# what was not shown: the clock shows it now, or once the lease is over when the publisher is
# still at it). Returns 1 when the entry was still there.
SETTLE_SCRIPT = (
    TOKEN_BUCKET
    + OUTBOX
    + """
local key, chat = KEYS[1], ARGV[1]
local version, now = tonumber(ARGV[2]), tonumber(ARGV[4])
local outbox = entries(redis.call('HGET', key, 'out'))
local kept, found = {}, 0
for _, entry in ipairs(outbox) do
  if tonumber(entry['v']) == version then
    found = 1
    if ARGV[3] ~= '' then
      local rest = cjson.decode(ARGV[3])
      rest['v'] = version
      rest['until'] = now
      if ARGV[5] == '1' then rest['until'] = entry['until'] end
      kept[#kept + 1] = rest
    end
  else
    kept[#kept + 1] = entry
  end
end
if found == 0 then return 0 end
if #kept > 0 then
  redis.call('HSET', key, 'out', cjson.encode(kept))
  if ARGV[3] ~= '' and ARGV[5] ~= '1' then due_by(KEYS[2], chat, now) end
  return 1
end
redis.call('HDEL', key, 'out')
local others = redis.call('HMGET', key, 'table', 'lines', 'hands', 'gone')
if not others[1] and not others[2] and not others[3] and not others[4] then
  redis.call('ZREM', KEYS[2], chat)
end
return 1
"""
)


# Keeps a must-see entry leased to the process still showing it (keys and arguments:
# extend_call): its lease ends later, so that the clock does not show it a second time while the
# publisher's requests are slow. Answers 1, or 0 when the entry is gone (settled, or taken by
# the clock once its lease was over: the publisher then stops keeping it).
EXTEND_SCRIPT = (
    OUTBOX
    + """
local all = entries(redis.call('HGET', KEYS[1], 'out'))
local version, lease_until = tonumber(ARGV[1]), tonumber(ARGV[2])
for _, entry in ipairs(all) do
  if tonumber(entry['v']) == version then
    if tonumber(entry['until']) < lease_until then
      entry['until'] = lease_until
      redis.call('HSET', KEYS[1], 'out', cjson.encode(all))
    end
    return 1
  end
end
return 0
"""
)


def extend_call(*, waiting_key: str, version: int, lease_until_ms: int) -> ScriptCall:
    """EXTEND_SCRIPT's keys and arguments."""
    return ScriptCall(
        [waiting_key],  # KEYS[1] what waits for the clock in the place (its outbox)
        [version, lease_until_ms],  # ARGV[1] the entry's version; ARGV[2] its new lease's end
    )


def settle_call(
    *,
    waiting_key: str,
    deferred_key: str,
    place: str,
    version: int,
    rest: bytes,
    now_ms: int,
    still_showing: bool = False,
) -> ScriptCall:
    """SETTLE_SCRIPT's keys and arguments (``rest`` empty: all was shown; ``still_showing``:
    the rest keeps its lease)."""
    return ScriptCall(
        [
            waiting_key,  # KEYS[1] what waits for the clock in the place (its outbox)
            deferred_key,  # KEYS[2] the deferred tables (of the chat's shard)
        ],
        [
            place,  # ARGV[1] the place (Place.key)
            version,  # ARGV[2] the version whose entry is settled
            rest,  # ARGV[3] what was not shown (a JSON entry; empty: all was)
            now_ms,  # ARGV[4]
            "1" if still_showing else "0",  # ARGV[5] the publisher is still showing the rest
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


# Message ids are kept only while the session is: a message sent as the session went away
# (expired, or the bot left) is not kept (keys and arguments: set_messages_call).
# A former table's history line is kept too (HISTORY_FIELD), the last HISTORY_KEPT of them: an
# edit drawn from an older state that lands on it after the table moved is undone with it, and
# a table posted anew by another process does not delete it (answer 2 for ``former``).
SET_MESSAGES_SCRIPT = f"""
if redis.call('EXISTS', KEYS[1]) == 0 then return {{0, 0}} end
local former, replacing, drawn = ARGV[1], ARGV[2], tonumber(ARGV[3])
local kept = redis.call('HGET', KEYS[1], '{MESSAGE_FIELD}table')
local displaced = 0
if replacing ~= '' and kept and kept ~= replacing
    and redis.call('HEXISTS', KEYS[1], '{HISTORY_FIELD}' .. kept) == 0 then
  displaced = tonumber(kept)
end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
local shown = '{SHOWN_FIELD}table'
if drawn > 0 and drawn > (tonumber(redis.call('HGET', KEYS[1], shown)) or 0) then
  redis.call('HSET', KEYS[1], shown, drawn)
end
local lines = {{}}
for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(field, 1, {len(HISTORY_FIELD)}) == '{HISTORY_FIELD}' then
    table.insert(lines, tonumber(string.sub(field, {len(HISTORY_FIELD) + 1})))
  end
end
if #lines > {HISTORY_KEPT} then
  table.sort(lines)
  for i = 1, #lines - {HISTORY_KEPT} do
    redis.call('HDEL', KEYS[1], '{HISTORY_FIELD}' .. string.format('%d', lines[i]))
  end
end
if former ~= '' and redis.call('HEXISTS', KEYS[1], '{HISTORY_FIELD}' .. former) == 1 then
  return {{2, displaced}}
end
return {{1, displaced}}
"""


def set_messages_call(
    *,
    session_key: str,
    fields: Iterable[tuple[str, int | str]],
    former: int | None = None,
    replacing: int | None = None,
    table_version: int = 0,
) -> ScriptCall:
    """SET_MESSAGES_SCRIPT's keys and arguments: the message fields and their values, a
    former table's message id, asked whether it has become a line of the history (answer {2,
    _}), and the table a new one replaces: when the table kept is another (not a line of the
    history), its id is answered second, to be deleted; and the version the new table was drawn
    from, kept as the table's (``m:s:table``) unless a newer one is."""
    return ScriptCall(
        [session_key],  # KEYS[1] the session hash
        [
            "" if former is None else former,  # ARGV[1] a former table's message id
            "" if replacing is None else replacing,  # ARGV[2] the table a new one replaces
            table_version,  # ARGV[3] the version the new table was drawn from (0: none)
            # ARGV[4..]: field, value, field, value...
            *(part for field_value in fields for part in field_value),
        ],
    )


# Which version of the session each message shows ("latest state wins"), kept next to the
# message ids (keys and arguments: record_call): the ids of messages just sent are kept, and each
# message shown (the table, a player's hand) records the version it was drawn from, unless a
# newer one was recorded already: then this request reached Telegram after a newer one and may
# have overwritten it, and the message is shown again from the stored state by the clock (the
# table waits, the hand is held). The table message shown may have become a line of the history
# meanwhile (the table moved on): then that line is returned, for the caller to restore. Returns
# {the roles that were overtaken, the line or ''}. Nothing is kept once the session is gone.
RECORD_SCRIPT = (
    TOKEN_BUCKET
    + OUTBOX
    + f"""
if redis.call('EXISTS', KEYS[1]) == 0 then return {{{{}}, '', {{}}}} end
local chat, version, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local history = ''
if ARGV[4] ~= '' then
  history = redis.call('HGET', KEYS[1], '{HISTORY_FIELD}' .. ARGV[4]) or ''
end
-- Hand messages shown ("<user>:<message>:b" with buttons, ":n" without) and former ones left
-- in place (":r"). A former hand must not keep buttons: whichever of a former hand and an
-- edit that gave it buttons is recorded second names it to be deleted now.
local gone = {{}}
for entry in string.gmatch(ARGV[6], '[^,]+') do
  local user, message, what = string.match(entry, '^(-?%d+):(%d+):(%a)$')
  local former = '{MESSAGE_FIELD}old:' .. user .. ':' .. message
  local buttons = '{MESSAGE_FIELD}btn:' .. user .. ':' .. message
  if what == 'b' then
    if redis.call('HDEL', KEYS[1], former) == 1 then
      gone[#gone + 1] = user .. ':' .. message
    else
      redis.call('HSET', KEYS[1], buttons, '1')
    end
  elseif what == 'n' then
    redis.call('HDEL', KEYS[1], buttons)
  elseif redis.call('HDEL', KEYS[1], buttons) == 1 then
    gone[#gone + 1] = user .. ':' .. message
  else
    redis.call('HSET', KEYS[1], former, '1')
  end
end
local pairs_count = tonumber(ARGV[5])
local fields = {{}}
for i = 7, 6 + 2 * pairs_count do fields[#fields + 1] = ARGV[i] end
local overtaken, hands = {{}}, {{}}
for i = 7 + 2 * pairs_count, #ARGV do
  local role = ARGV[i]
  local field = '{SHOWN_FIELD}' .. role
  local shown = tonumber(redis.call('HGET', KEYS[1], field))
  if shown and shown > version then
    overtaken[#overtaken + 1] = role
    if role == 'table' then
      redis.call('HSET', KEYS[2], 'table', '1')
    else
      hands[#hands + 1] = string.sub(role, {len("hand:") + 1})
    end
  else
    fields[#fields + 1] = field
    fields[#fields + 1] = version
  end
end
if #fields > 0 then redis.call('HSET', KEYS[1], unpack(fields)) end
if #overtaken > 0 then
  if #hands > 0 then
    local held = entries(redis.call('HGET', KEYS[2], 'hands'))
    for _, hand in ipairs(hands) do held[#held + 1] = hand end
    redis.call('HSET', KEYS[2], 'hands', cjson.encode(held))
  end
  keep(KEYS[2], 600000)
  due_by(KEYS[3], chat, now)
end
return {{overtaken, history, gone}}
"""
)


def record_call(
    *,
    session_key: str,
    waiting_key: str,
    deferred_key: str,
    place: str,
    version: int,
    now_ms: int,
    fields: Iterable[tuple[str, int]],
    shown: Iterable[str],
    table_message: int | None = None,
    hand_messages: Iterable[tuple[int, int, str]] = (),
) -> ScriptCall:
    """RECORD_SCRIPT's keys and arguments: message id fields to keep, and the roles of the
    messages shown at ``version`` ("table", "hand:<user id>"); ``table_message``: the message
    the table was shown in; ``hand_messages``: (user id, message id, what) for each hand
    message shown with buttons ("b") or without ("n"), and each former one left ("r")."""
    pairs = [part for field_value in fields for part in field_value]
    hands = ",".join(f"{user}:{message}:{what}" for user, message, what in hand_messages)
    return ScriptCall(
        [
            session_key,  # KEYS[1] the session hash
            waiting_key,  # KEYS[2] what waits for the clock in the place
            deferred_key,  # KEYS[3] the deferred tables (of the chat's shard)
        ],
        [
            place,  # ARGV[1] the place (Place.key)
            version,  # ARGV[2] the version the messages show
            now_ms,  # ARGV[3]
            "" if table_message is None else table_message,  # ARGV[4]
            len(pairs) // 2,  # ARGV[5] how many field/value pairs follow
            hands,  # ARGV[6] the hand messages shown and left
            *pairs,  # ARGV[7..]: field, value, ...
            *shown,  # then the roles of the messages shown
        ],
    )


# Forgets a session's message ids but those named, in one round trip at a game's end (keys and
# arguments: clear_messages_call).
CLEAR_MESSAGES_SCRIPT = f"""
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


def clear_messages_call(*, session_key: str, keep: Iterable[str] = ()) -> ScriptCall:
    """CLEAR_MESSAGES_SCRIPT's keys and arguments: the message fields to keep."""
    return ScriptCall(
        [session_key],  # KEYS[1] the session hash
        list(keep),  # ARGV: the fields to keep
    )
