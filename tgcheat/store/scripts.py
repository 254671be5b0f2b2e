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
from tgcheat.store.keys import DOCUMENT_FIELD, MESSAGE_FIELD, VERSION_FIELD

#: Group messages that may go out at once before the rate applies (a play, a reveal, a table).
GROUP_BURST = 4

# A group's budget is a token bucket (a hash of tokens and when they were counted): GROUP_BURST
# messages at once, refilled at the group's rate a minute. spend() takes ``cost`` tokens and
# returns what is left; overdrawn, the table edit is deferred until a token is back, and then
# shows the state of then (edits coalesce, the latest state wins).
TOKEN_BUCKET = f"""
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

# The compare-and-set of a session (keys and arguments: cas_call). The version must still be the
# one the change was computed from; the update, if any, must not have been handled yet. It then
# writes the document, sets the session's deadline and spends the group's budget. Answers: a
# CasAnswer.
CAS_SCRIPT = (
    TOKEN_BUCKET
    + f"""
local version = redis.call('HGET', KEYS[1], '{VERSION_FIELD}') or '0'
if version ~= ARGV[1] then return 0 end
if ARGV[5] == '1' then
  if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[4]) then return -1 end
end
redis.call('HSET', KEYS[1], '{VERSION_FIELD}', tonumber(version) + 1, '{DOCUMENT_FIELD}', ARGV[2])
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


class CasAnswer(enum.IntEnum):
    """What CAS_SCRIPT answers."""

    #: The version was not the expected one: nothing was written.
    CONFLICT = 0
    #: The new document is stored.
    WRITTEN = 1
    #: Written, but the group's budget is overdrawn: the table edit waits until a token is
    #: back (in the deferred tables).
    WRITTEN_TABLE_DEFERRED = 2
    #: The update was handled already: nothing was written.
    DUPLICATE = -1


class ScriptCall(NamedTuple):
    """A script's keys and arguments, in the order it reads them."""

    keys: list[str]
    args: list[Arg]


def cas_call(
    *,
    session_key: str,
    update_key: str,
    deadlines_key: str,
    budget_key: str,
    deferred_key: str,
    expected_version: int,
    document: bytes,
    session_ttl_s: int,
    update_ttl_s: int,
    remember_update: bool,
    chat_id: int,
    deadline_ms: int,
    group_messages: int,
    per_minute: int,
    now_ms: int,
) -> ScriptCall:
    """CAS_SCRIPT's keys and arguments. ``update_key`` may be any key when there is no update
    to remember (``remember_update`` false); ``deadline_ms`` 0 means no deadline;
    ``group_messages`` counts the table edit."""
    return ScriptCall(
        [
            session_key,  # KEYS[1] the session hash
            update_key,  # KEYS[2] the update's marker
            deadlines_key,  # KEYS[3] the deadlines
            budget_key,  # KEYS[4] the group's message budget (a token bucket)
            deferred_key,  # KEYS[5] the deferred tables
        ],
        [
            expected_version,  # ARGV[1] the version the change was computed from
            document,  # ARGV[2] the new document
            session_ttl_s,  # ARGV[3]
            update_ttl_s,  # ARGV[4]
            "1" if remember_update else "0",  # ARGV[5]
            chat_id,  # ARGV[6]
            deadline_ms,  # ARGV[7] the session's next deadline (ms; 0: none)
            group_messages,  # ARGV[8] group messages the change will send
            per_minute,  # ARGV[9] the group's budget of messages a minute
            now_ms,  # ARGV[10]
        ],
    )


# A deferred table edit takes one token from its group's budget (keys and arguments: take_call).
# Returns 1 when a token was taken (the chat leaves the deferred set), else 0 (deferred again).
TAKE_SCRIPT = (
    TOKEN_BUCKET
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


def take_call(
    *, budget_key: str, deferred_key: str, chat_id: int, per_minute: int, now_ms: int
) -> ScriptCall:
    """TAKE_SCRIPT's keys and arguments."""
    return ScriptCall(
        [
            budget_key,  # KEYS[1] the group's message budget
            deferred_key,  # KEYS[2] the deferred tables
        ],
        [
            chat_id,  # ARGV[1]
            per_minute,  # ARGV[2] the group's budget of messages a minute
            now_ms,  # ARGV[3]
        ],
    )


# A session hash, and whether an update was handled already, in one round trip (keys:
# read_call).
READ_SCRIPT = """
return {redis.call('HGETALL', KEYS[1]), redis.call('EXISTS', KEYS[2])}
"""


def read_call(*, session_key: str, update_key: str) -> ScriptCall:
    """READ_SCRIPT's keys (it takes no arguments)."""
    return ScriptCall(
        [
            session_key,  # KEYS[1] the session hash
            update_key,  # KEYS[2] the update's marker
        ],
        [],
    )


# Message ids are kept only while the session is: a message sent as the session went away
# (expired, or the bot left) is not kept (keys and arguments: set_messages_call).
SET_MESSAGES_SCRIPT = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""


def set_messages_call(*, session_key: str, fields: Iterable[tuple[str, int]]) -> ScriptCall:
    """SET_MESSAGES_SCRIPT's keys and arguments: the message fields and their values."""
    return ScriptCall(
        [session_key],  # KEYS[1] the session hash
        # ARGV: field, value, field, value...
        [part for field_value in fields for part in field_value],
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
