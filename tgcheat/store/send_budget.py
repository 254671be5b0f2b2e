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
What a place has waited for long goes before them all but the answers (it leaves a tenth), so
that an overloaded bot slows every game down rather than starving the quiet ones.
A request the budget refuses is not sent: the sync that planned it leaves its place due for the
clock, as for Telegram's own flood wait, so that over the budget nothing is lost and the games
slow down together.

Telegram's own limit has the last word, but its 429 does not say which limit it is: a chat's
own (a private chat about a message a second, a group twenty a minute) or the bot's across all
chats. Only the latter empties the bucket (``SendBudget.flooded``): when the bucket held less
than one message (the bot was sending at its rate), or when several chats got a 429 within a
second (the limit is lower than the budget believes). A 429 in one chat while the bot sends
below its rate is that chat's: the chat waits (``tgcheat.bot.sender``), the others do not.

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
from collections.abc import Sequence

from redis.asyncio import Redis
from redis.exceptions import RedisError

from tgcheat.metrics import SEND_BUDGET_REFUSALS
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
    ALWAYS = -2
    #: What a place has been kept waiting for by the budgets for long (``plan.aged``): it
    #: leaves a tenth of the bucket, where what players must see leaves a fifth, so that busy
    #: games cannot starve it; counted, never sent beyond the budget.
    OVERDUE = -1
    #: What a player must see to act: their turn's hand, a reveal, the table posted anew.
    MUST = 0
    #: An edit of the table (the clock shows the latest one should it wait).
    TABLE = 1
    #: What may wait: hands of players who are not to act, deletions, lobby edits.
    LATER = 2


#: The share of the bucket each priority leaves to those above it.
_RESERVE_SHARE = {
    Priority.ALWAYS: -0.1,
    Priority.OVERDUE: 0.1,
    Priority.MUST: 0.2,
    Priority.TABLE: 0.4,
    Priority.LATER: 0.6,
}

# KEYS[1] the bucket. ARGV: rate a second, burst, now (ms), tokens taken whatever is there
# (answers counted before) down to a floor (the answers' reserve: a little debt), the floor,
# then for each request group its tokens and reserve. Each group is
# taken when the bucket leaves its reserve, in order (a later, smaller one may be taken after
# one refused). Returns {ms until the first refused group would be taken (0: none refused),
# then 1 or 0 for each group}.
TAKE_MANY_SCRIPT = """
local rate, burst, now = tonumber(ARGV[1]) / 1000, tonumber(ARGV[2]), tonumber(ARGV[3])
local stored = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(stored[1]) or burst
local at = tonumber(stored[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
at = math.max(at, now)
tokens = math.max(math.min(tokens, tonumber(ARGV[5])), tokens - tonumber(ARGV[4]))
local answers = {0}
for i = 6, #ARGV, 2 do
  local wanted, reserve = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
  if tokens - wanted >= reserve then
    tokens = tokens - wanted
    answers[#answers + 1] = 1
  else
    answers[#answers + 1] = 0
    local wait = math.ceil((reserve + wanted - tokens) / rate)
    if answers[1] == 0 or wait < answers[1] then answers[1] = math.max(1, wait) end
  end
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', at)
redis.call('PEXPIRE', KEYS[1], 60000)
return answers
"""

#: A 429 counts as the bot's limit across all chats when this many chats got one within
#: ``FLOOD_WINDOW_MS`` (each chat counted once, however many it got): Telegram's limit for all
#: chats refuses every chat the bot writes to, so at 30 messages a second many chats meet it
#: within a second, while a chat's own limit is met one chat at a time.
GLOBAL_FLOOD_CHATS = 5
FLOOD_WINDOW_MS = 1_000

# KEYS[1] the bucket, KEYS[2] the chats that got a 429 lately (a sorted set scored by when, at
# most ARGV[6] of them, gone after the window). ARGV: rate a second, burst, now (ms), the chat,
# window (ms), chats that make a 429 the bot's. Telegram answered 429 in the chat: the bucket is
# emptied, and 1 returned, when the 429 is the bot's limit across all chats (the bucket held less
# than one message, or enough chats got one within the window); else 0 and the bucket is as it
# was (a chat's own limit spends nothing of the others').
FLOODED_SCRIPT = """
local rate, burst, now = tonumber(ARGV[1]) / 1000, tonumber(ARGV[2]), tonumber(ARGV[3])
local window, needed = tonumber(ARGV[5]), tonumber(ARGV[6])
local stored = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(stored[1]) or burst
local at = tonumber(stored[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
redis.call('ZADD', KEYS[2], now, ARGV[4])
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -(needed + 1))
redis.call('PEXPIRE', KEYS[2], window)
if tokens >= 1 and redis.call('ZCARD', KEYS[2]) < needed then return 0 end
redis.call('HSET', KEYS[1], 'tokens', tostring(math.min(0, tokens)), 'at', math.max(at, now))
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


class SendBudget:
    def __init__(self, redis: Redis, keys: Keys, per_second: float = TELEGRAM_SEND_RATE) -> None:
        if per_second <= 0:
            raise ValueError(f"a send budget needs a rate above 0, got {per_second}")
        self._key = keys.send_budget()
        self.per_second = per_second
        #: What the bucket holds when full: nine tenths of a second's worth (see above).
        self.burst = max(1.0, per_second * 0.9)
        self._take_many = redis.register_script(TAKE_MANY_SCRIPT)
        self._reads = asyncio.Semaphore(READS_IN_FLIGHT)
        #: Answers to people's own taps sent and not counted in Redis yet: they are never
        #: refused, so they are counted with this process's next request for tokens
        #: (``take_many``, or ``count_answers`` by the clock), not one round trip each.
        self._answers_uncounted = 0
        self._floods_key = keys.send_floods()
        self._flooded = redis.register_script(FLOODED_SCRIPT)

    def reserve(self, priority: Priority) -> float:
        return self.burst * _RESERVE_SHARE[priority]

    def answered(self, count: int = 1) -> None:
        """``count`` requests that answer a person's own action were sent: never refused,
        they are counted with this process's next request for tokens."""
        self._answers_uncounted += count

    async def take_many(
        self, now_ms: int, wanted: Sequence[tuple[Priority, int]]
    ) -> tuple[list[bool], int]:
        """Tokens for groups of requests sent now (each a priority and a count), in one round
        trip: which are taken, and how long until the first refused one would be (ms; 0: none
        refused). Answers to a person's own tap (``Priority.ALWAYS``) are taken without a
        round trip of their own: counted with the next request for tokens. Redis out of reach
        refuses nothing."""
        answers = sum(count for priority, count in wanted if priority is Priority.ALWAYS)
        others = [(p, count) for p, count in wanted if p is not Priority.ALWAYS]
        if not others:
            self._answers_uncounted += answers
            return [True] * len(wanted), 0
        uncounted, self._answers_uncounted = self._answers_uncounted + answers, 0
        floor = self.reserve(Priority.ALWAYS)
        args: list[float | int] = [self.per_second, self.burst, now_ms, uncounted, floor]
        for priority, count in others:
            args += [count, self.reserve(priority)]
        try:
            async with self._reads:
                answer = await bounded(self._take_many(keys=[self._key], args=args))
        except (RedisError, TimeoutError) as error:
            log.warning("the send budget could not be read (%s): sent regardless", error)
            return [True] * len(wanted), 0
        taken = iter(bool(int(flag)) for flag in answer[1:])
        granted = [True if priority is Priority.ALWAYS else next(taken) for priority, _ in wanted]
        _count_refused(wanted, granted)
        return granted, int(answer[0])

    async def count_answers(self, now_ms: int) -> None:
        """Count in Redis the answers this process sent since its last request for tokens."""
        if self._answers_uncounted:
            await self.take_many(now_ms, [(Priority.LATER, 0)])

    async def flooded(self, chat_id: int, now_ms: int) -> bool:
        """Telegram answered 429 in the chat. Its answer does not say which limit it was, so
        the bucket decides: the bot's limit across all chats when the bucket held less than
        a message (the bot was sending at its rate) or when ``GLOBAL_FLOOD_CHATS`` chats got
        a 429 within ``FLOOD_WINDOW_MS``; then what the bucket held is spent (True). Else it
        was the chat's own limit (a private chat's second a message, a group's minute), and
        the other chats' budget is untouched (False)."""
        args = [
            self.per_second,
            self.burst,
            now_ms,
            chat_id,
            FLOOD_WINDOW_MS,
            GLOBAL_FLOOD_CHATS,
        ]
        try:
            keys = [self._key, self._floods_key]
            return bool(await bounded(self._flooded(keys=keys, args=args)))
        except (RedisError, TimeoutError) as error:
            log.warning("the send budget could not be told of a 429: %s", error)
            return False


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


def _count_refused(wanted: Sequence[tuple[Priority, int]], granted: Sequence[bool]) -> None:
    """The requests the budget held back, by priority, for the metrics."""
    for (priority, count), taken in zip(wanted, granted, strict=True):
        if not taken and count:
            SEND_BUDGET_REFUSALS.labels(priority.name.lower()).inc(count)
