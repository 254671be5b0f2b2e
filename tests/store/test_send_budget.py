"""The bot's budget of messages across all chats (tgcheat.store.send_budget): one bucket shared
by every process, a second's worth, priorities as reserves, a 429 emptying it."""

from __future__ import annotations

from redis.asyncio import Redis

from tgcheat.store.keys import Keys
from tgcheat.store.send_budget import (
    FLOOD_WINDOW_MS,
    GLOBAL_FLOOD_CHATS,
    REPLY_BURST,
    Priority,
    ReplyBudget,
    SendBudget,
)

NOW = 1_700_000_000_000


async def take(budget: SendBudget, now_ms: int, priority: Priority, count: int = 1) -> int | None:
    """``count`` tokens for one group of requests: None when taken, else the wait (ms)."""
    (taken,), wait_ms = await budget.take_many(now_ms, [(priority, count)])
    return None if taken else wait_ms


async def test_a_bucket_of_nine_tenths_of_a_second_then_refused_until_tokens_are_back(
    redis: Redis,
) -> None:
    budget = SendBudget(redis, Keys(), per_second=10)
    assert budget.burst == 9
    # A turn leaves a fifth of the bucket (1.8 tokens) to answers to people's own taps.
    taken = [await take(budget, NOW, Priority.MUST) for _ in range(8)]
    assert taken[:7] == [None] * 7
    refusal = taken[7]
    assert refusal == 80
    later = NOW + refusal + 1
    assert await take(budget, later, Priority.MUST) is None
    assert await take(budget, later, Priority.MUST) is not None


async def test_what_may_wait_leaves_the_rest_to_what_players_must_see(redis: Redis) -> None:
    budget = SendBudget(redis, Keys(), per_second=20)  # 18 tokens
    # What may wait leaves three fifths, a table edit two fifths, a turn one fifth.
    later = [await take(budget, NOW, Priority.LATER) for _ in range(8)]
    assert [refusal is None for refusal in later] == [True] * 7 + [False]
    table = [await take(budget, NOW, Priority.TABLE) for _ in range(4)]
    assert [refusal is None for refusal in table] == [True] * 3 + [False]
    must = [await take(budget, NOW, Priority.MUST) for _ in range(5)]
    assert [refusal is None for refusal in must] == [True] * 4 + [False]
    assert await take(budget, NOW, Priority.ALWAYS) is None


async def test_an_answer_to_a_persons_own_action_is_never_refused(redis: Redis) -> None:
    budget = SendBudget(redis, Keys(), per_second=10)
    assert all([await take(budget, NOW, Priority.ALWAYS) is None for _ in range(12)])
    # They are counted with the next request for tokens, down to a tenth of the bucket into
    # debt: a turn waits for them.
    refusal = await take(budget, NOW, Priority.MUST)
    assert refusal == 370


async def test_a_sequence_takes_its_tokens_together_or_none(redis: Redis) -> None:
    budget = SendBudget(redis, Keys(), per_second=10)
    assert await take(budget, NOW, Priority.MUST, count=3) is None
    assert await take(budget, NOW, Priority.MUST, count=5) is not None
    # Refused whole, nothing was taken: six tokens are still there.
    assert await take(budget, NOW, Priority.MUST, count=4) is None


async def test_processes_share_one_bucket(redis: Redis) -> None:
    one, other = SendBudget(redis, Keys(), per_second=4), SendBudget(redis, Keys(), per_second=4)
    assert await take(one, NOW, Priority.MUST) is None
    assert await take(other, NOW, Priority.MUST) is None
    assert await take(one, NOW, Priority.MUST) is not None
    assert await redis.exists(Keys().send_budget()) == 1


async def test_a_429_in_one_chat_while_the_bot_sends_below_its_rate_is_that_chats(
    redis: Redis,
) -> None:
    """One private chat's limit (a message a second) answered 429, again and again: the other
    chats' budget is untouched."""
    budget = SendBudget(redis, Keys(), per_second=10)
    assert await take(budget, NOW, Priority.MUST) is None
    for _ in range(10):
        assert not await budget.flooded(66, NOW)
    # The 8 tokens left are there for what players must see, down to the 1.8 kept for answers.
    taken = [await take(budget, NOW, Priority.MUST) for _ in range(7)]
    assert [refusal is None for refusal in taken] == [True] * 6 + [False]


async def test_a_429_is_the_bots_limit_when_several_chats_get_one_within_a_second(
    redis: Redis,
) -> None:
    budget = SendBudget(redis, Keys(), per_second=10)
    chats = range(GLOBAL_FLOOD_CHATS)
    answers = [await budget.flooded(-1000 - chat, NOW + chat) for chat in chats]
    assert answers == [False] * (GLOBAL_FLOOD_CHATS - 1) + [True]
    refusal = await take(budget, NOW + GLOBAL_FLOOD_CHATS, Priority.MUST)
    assert refusal is not None


async def test_429s_of_chats_spread_over_more_than_a_second_are_each_their_chats(
    redis: Redis,
) -> None:
    budget = SendBudget(redis, Keys(), per_second=10)
    for chat in range(3 * GLOBAL_FLOOD_CHATS):
        assert not await budget.flooded(-1000 - chat, NOW + chat * FLOOD_WINDOW_MS // 3)
    # However many chats got one, the set that remembers them stays small and short-lived.
    floods = Keys().send_floods()
    assert await redis.zcard(floods) <= GLOBAL_FLOOD_CHATS
    assert 0 < await redis.pttl(floods) <= FLOOD_WINDOW_MS


async def test_a_429_when_the_bot_was_at_its_rate_empties_the_bucket(redis: Redis) -> None:
    """The bucket spent down (answers to people took the last tokens): the bot was sending at
    its rate, and the 429 is its limit across all chats."""
    budget = SendBudget(redis, Keys(), per_second=10)
    budget.answered(9)
    await budget.count_answers(NOW)
    # Half a token back 50 ms later: less than a message, and the 429 empties it.
    assert await budget.flooded(66, NOW + 50)
    refusal = await take(budget, NOW + 50, Priority.MUST)
    assert refusal == 280


async def test_a_clock_behind_the_last_spenders_refills_nothing(redis: Redis) -> None:
    budget = SendBudget(redis, Keys(), per_second=4)
    assert await take(budget, NOW, Priority.MUST, count=2) is None
    assert await take(budget, NOW - 5_000, Priority.MUST) is not None
    assert await take(budget, NOW + 250, Priority.MUST) is None


def test_the_budget_key_is_a_slot_of_its_own() -> None:
    key = Keys().send_budget()
    assert key == "tgc:{send}:budget"
    assert Keys().send_floods() == "tgc:{send}:floods"  # the same slot: one script reads both


async def test_a_persons_replies_three_at_once_then_one_a_second_each_their_own(
    redis: Redis,
) -> None:
    replies = ReplyBudget(redis, Keys())
    assert [await replies.take(66, NOW) for _ in range(5)] == [True] * 3 + [False] * 2
    assert await replies.take(1, NOW)  # another person's are theirs
    assert not await replies.take(66, NOW + 999)
    assert await replies.take(66, NOW + 1_000)
    assert not await replies.take(66, NOW + 1_000)


async def test_a_persons_bucket_lives_only_until_it_is_full_again(redis: Redis) -> None:
    """However many commands a stranger sends, the key they cost expires within the seconds a
    full bucket takes to refill, and a refused command writes nothing."""
    replies = ReplyBudget(redis, Keys())
    key = Keys().replies(66)
    assert await replies.take(66, NOW)
    assert 0 < await redis.pttl(key) <= 1_000
    for _ in range(REPLY_BURST - 1):
        assert await replies.take(66, NOW)
    assert 0 < await redis.pttl(key) <= REPLY_BURST * 1_000
    before = await redis.hgetall(key)
    assert not await replies.take(66, NOW)
    assert await redis.hgetall(key) == before
