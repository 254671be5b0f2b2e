"""The bot's budget of messages across all chats: Telegram lets one bot send about 30 messages
a second in all before it answers 429, whatever the chats.

One token bucket in Redis (``Keys.send_budget``, a key in a hash slot of its own), shared by
every process of the bot: each message sent, edited or deleted takes a token; the rate is
``TGCHEAT_SEND_RATE`` a second and the bucket holds one second's worth. Button answers are not
counted (Telegram counts them apart).

An answer to a person's own action is never refused. What a player must see to act (their
turn, a reveal, the table posted anew below it) may take the last token; a table edit leaves a
quarter of the bucket to those, and what may wait (the hands of players who are not to act,
deletions, the lobby) half of it. A request the budget refuses is not sent: its caller holds
what it would have shown for the clock, as for Telegram's own flood wait
(``tgcheat.bot.sender.OverBudget``), so that over the budget nothing is lost and the games slow
down together. A 429 from Telegram empties the bucket: its own limit has the last word.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import RedisError

from tgcheat.store.keys import Keys
from tgcheat.store.timeout import bounded

log = logging.getLogger(__name__)

#: Telegram's limit for one bot across all chats, roughly (Bot API FAQ).
TELEGRAM_SEND_RATE = 30.0


class Priority(enum.IntEnum):
    """How much of the bucket a request must leave to the others (its reserve)."""

    #: Never refused: an answer to a person's own action (a reply, a card picked), or the
    #: rest of a sequence begun. Counted: the bucket may go a second's worth into debt, which
    #: what may wait then waits out.
    ALWAYS = -1
    #: What a player must see to act: their turn's hand, a reveal, the table posted anew.
    MUST = 0
    #: An edit of the table (the clock shows the latest one should it wait).
    TABLE = 1
    #: What may wait: hands of players who are not to act, deletions, lobby edits.
    LATER = 2


#: The share of the bucket each priority leaves to those above it.
_RESERVE_SHARE = {
    Priority.ALWAYS: -1.0,
    Priority.MUST: 0.0,
    Priority.TABLE: 0.25,
    Priority.LATER: 0.5,
}

# KEYS[1] the bucket. ARGV: rate a second, burst, now (ms), tokens wanted, reserve (tokens
# left to others). Returns {1, 0} when taken, else {0, ms until they would be}.
TAKE_SENDS_SCRIPT = """
local rate, burst, now = tonumber(ARGV[1]) / 1000, tonumber(ARGV[2]), tonumber(ARGV[3])
local wanted, reserve = tonumber(ARGV[4]), tonumber(ARGV[5])
local stored = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(stored[1]) or burst
local at = tonumber(stored[2]) or now
-- A clock behind the last spender's refills nothing (processes' clocks differ by a little).
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
at = math.max(at, now)
local taken = tokens - wanted >= reserve
if taken then tokens = tokens - wanted end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', at)
redis.call('PEXPIRE', KEYS[1], 60000)
if taken then return {1, 0} end
return {0, math.ceil((reserve + wanted - tokens) / rate)}
"""

# KEYS[1] the bucket. ARGV: rate a second, burst, now (ms). Telegram answered 429: the bucket
# is emptied (the tokens it held are not there after all).
EMPTY_SCRIPT = """
local burst, now = tonumber(ARGV[2]), tonumber(ARGV[3])
local stored = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(stored[1]) or burst
local at = tonumber(stored[2]) or now
tokens = math.min(0, math.min(burst, tokens + math.max(0, now - at) * tonumber(ARGV[1]) / 1000))
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', math.max(at, now))
redis.call('PEXPIRE', KEYS[1], 60000)
return 1
"""


@dataclass(frozen=True, slots=True)
class Refusal:
    """The budget holds too few tokens for a request of this priority: they are back in
    ``wait_ms``."""

    wait_ms: int


class SendBudget:
    def __init__(self, redis: Redis, keys: Keys, per_second: float = TELEGRAM_SEND_RATE) -> None:
        if per_second <= 0:
            raise ValueError(f"a send budget needs a rate above 0, got {per_second}")
        self._key = keys.send_budget()
        self.per_second = per_second
        #: What the bucket holds when full: a second's worth.
        self.burst = max(1.0, per_second)
        self._take = redis.register_script(TAKE_SENDS_SCRIPT)
        self._empty = redis.register_script(EMPTY_SCRIPT)

    def reserve(self, priority: Priority) -> float:
        return self.burst * _RESERVE_SHARE[priority]

    async def take(self, now_ms: int, priority: Priority, count: int = 1) -> Refusal | None:
        """Take ``count`` tokens for requests of ``priority`` sent now; None when taken, else
        how long until they would be. Redis out of reach refuses nothing: the budget is a
        courtesy to Telegram, whose own 429 still has the last word."""
        args = [self.per_second, self.burst, now_ms, count, self.reserve(priority)]
        try:
            taken, wait_ms = await bounded(self._take(keys=[self._key], args=args))
        except (RedisError, TimeoutError) as error:
            log.warning("the send budget could not be read (%s): sent regardless", error)
            return None
        if int(taken) == 1 or priority is Priority.ALWAYS:
            return None
        return Refusal(max(1, int(wait_ms)))

    async def emptied(self, now_ms: int) -> None:
        """Telegram answered 429: what the bucket held is spent."""
        try:
            await bounded(self._empty(keys=[self._key], args=[self.per_second, self.burst, now_ms]))
        except (RedisError, TimeoutError) as error:
            log.warning("the send budget could not be emptied after a 429: %s", error)
