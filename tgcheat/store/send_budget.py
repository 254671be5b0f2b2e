"""The bot's budget of messages across all chats: Telegram lets one bot send about 30 messages
a second in all before it answers 429, whatever the chats.

One token bucket in Redis (``Keys.send_budget``, a key in a hash slot of its own), shared by
every process of the bot: each message sent, edited or deleted takes a token; the rate is
``TGCHEAT_SEND_RATE`` a second and the bucket holds nine tenths of a second's worth, so that with
the little debt an answer to a person may run up the bot never sends more than a second's worth
at once, which is what Telegram lets pass. Button answers are not counted (Telegram counts them
apart).

An answer to a person's own action is never refused: a fifth of the bucket is left to those
(and they may run it a tenth into debt). What a player must see to act (their turn, a reveal,
the table posted anew below it) may take the rest; a table edit leaves two fifths of the bucket,
and what may wait (the hands of players who are not to act, deletions, the lobby) three fifths.
A request the budget refuses is not sent: its caller holds what it would have shown for the
clock, as for Telegram's own flood wait (``tgcheat.bot.sender.OverBudget``), so that over the
budget nothing is lost and the games slow down together.

A reply to a person's own command is never refused here, so what one person's commands may cost
is limited apart, before the reply is made (``ReplyBudget``): about a reply a second, three at
once, a bucket per person in Redis that lives no longer than it takes to fill again. Beyond it,
the command gets no reply: a person who repeats /help ten times a second is answered three
times, then once a second, and the games' turns never wait for them.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import RedisError

from tgcheat.store.keys import Keys
from tgcheat.store.timeout import bounded

log = logging.getLogger(__name__)

#: The budget's reads one process has in flight at most: hundreds of games' sends at once would
#: otherwise take every connection of the Redis client's pool, and the game's own commands
#: would find none.
READS_IN_FLIGHT = 16
#: Telegram's limit for one bot across all chats, roughly (Bot API FAQ).
TELEGRAM_SEND_RATE = 30.0


class Priority(enum.IntEnum):
    """How much of the bucket a request must leave to the others (its reserve)."""

    #: Never refused: an answer to a person's own action (a reply, a card picked), or the
    #: rest of a sequence begun. Counted, with a fifth of the bucket kept for it; beyond that,
    #: a tenth into debt, then sent uncounted.
    ALWAYS = -1
    #: What a player must see to act: their turn's hand, a reveal, the table posted anew.
    MUST = 0
    #: An edit of the table (the clock shows the latest one should it wait).
    TABLE = 1
    #: What may wait: hands of players who are not to act, deletions, lobby edits.
    LATER = 2


#: The share of the bucket each priority leaves to those above it.
_RESERVE_SHARE = {
    Priority.ALWAYS: -0.1,
    Priority.MUST: 0.2,
    Priority.TABLE: 0.4,
    Priority.LATER: 0.6,
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


#: What one person's commands may cost: a reply a second, three at once (about what Telegram
#: lets a private chat have, so that the replies meet no 429 of their own either).
REPLIES_PER_SECOND = 1.0
REPLY_BURST = 3

# KEYS[1] a person's bucket. ARGV: rate a second, burst, now (ms). Returns 1 when a reply is
# taken, else 0 (and nothing is written). The key expires when the bucket would be full again:
# gone, it reads as full, so a person costs a key only for the seconds after their commands.
TAKE_REPLY_SCRIPT = """
local rate, burst, now = tonumber(ARGV[1]) / 1000, tonumber(ARGV[2]), tonumber(ARGV[3])
local stored = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(stored[1]) or burst
local at = tonumber(stored[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
if tokens < 1 then return 0 end
tokens = tokens - 1
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', math.max(at, now))
redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil((burst - tokens) / rate)))
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
        #: What the bucket holds when full: nine tenths of a second's worth (see above).
        self.burst = max(1.0, per_second * 0.9)
        self._take = redis.register_script(TAKE_SENDS_SCRIPT)
        self._reads = asyncio.Semaphore(READS_IN_FLIGHT)
        self._empty = redis.register_script(EMPTY_SCRIPT)

    def reserve(self, priority: Priority) -> float:
        return self.burst * _RESERVE_SHARE[priority]

    async def take(self, now_ms: int, priority: Priority, count: int = 1) -> Refusal | None:
        """Take ``count`` tokens for requests of ``priority`` sent now; None when taken, else
        how long until they would be. Redis out of reach refuses nothing: the budget is a
        courtesy to Telegram, whose own 429 still has the last word."""
        args = [self.per_second, self.burst, now_ms, count, self.reserve(priority)]
        try:
            async with self._reads:
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


class ReplyBudget:
    """What one person's commands may cost in replies, shared by every process (a bucket per
    person, ``Keys.replies``)."""

    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        per_second: float = REPLIES_PER_SECOND,
        burst: int = REPLY_BURST,
    ) -> None:
        self._keys = keys
        self.per_second = per_second
        self.burst = burst
        self._take = redis.register_script(TAKE_REPLY_SCRIPT)

    async def take(self, asker_id: int, now_ms: int) -> bool:
        """Take one reply for the person (or the group ``asker_id`` names) answered now; False
        while they have spent their replies (the reply is not sent; nothing waits)."""
        args = [self.per_second, self.burst, now_ms]
        return bool(await bounded(self._take(keys=[self._keys.replies(asker_id)], args=args)))
