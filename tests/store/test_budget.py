"""Each group's message budget (tgcheat.store.budget): spent by the compare-and-set, table
edits deferred while it is overdrawn, and a token taken for each when it is due."""

from __future__ import annotations

import dataclasses
import time

from redis.asyncio import Redis

from tests.store.helpers import BUCKET, CHAT, DEFERRED, game_session
from tgcheat.store.budget import Held
from tgcheat.store.games import GROUP_BURST, GameStore, MustShow
from tgcheat.table.place import Place


async def test_a_busy_groups_table_waits_seconds_not_minutes(redis: Redis) -> None:
    """The budget (20 a minute, bursts of 4) defers table edits of a fast group, but its debt
    has a floor: however fast the group played, the table is shown again within seconds."""
    store = GameStore(redis, group_messages_per_minute=20)
    assert store.budget.per_minute == 20
    session = game_session()
    outcomes = []
    for i in range(40):
        replaced = dataclasses.replace(session, title=f"t{i}")
        committed = await store.transact(
            CHAT, lambda s, new=replaced: (new, 2), group_messages=lambda cost: cost
        )
        outcomes.append(committed.table_deferred)
    assert outcomes[:2] == [False, False] and all(outcomes[4:])
    due = await redis.zscore(DEFERRED, CHAT)
    assert due is not None
    assert due - time.time() * 1000 < 20_000
    assert await store.budget.deferred_tables(int(due) - 1) == []
    assert await store.budget.deferred_tables(int(due)) == [Place(CHAT)]
    # When it is due, one token is there for the one edit that shows the latest state.
    assert await store.budget.take(CHAT, int(due) + 1)
    assert await redis.zscore(DEFERRED, CHAT) is None


async def test_a_table_taken_too_early_is_deferred_again(redis: Redis) -> None:
    store = GameStore(redis, group_messages_per_minute=60)  # a token a second
    session = game_session()
    now_ms = int(time.time() * 1000)
    committed = await store.transact(
        CHAT, lambda s: (session, GROUP_BURST + 1), group_messages=lambda cost: cost
    )
    assert committed.table_deferred
    assert not await store.budget.take(CHAT, now_ms)
    due = await redis.zscore(DEFERRED, CHAT)
    assert due is not None and due > now_ms
    assert await store.budget.deferred_tables(now_ms) == []


async def test_a_change_without_group_messages_spends_nothing(redis: Redis) -> None:
    store = GameStore(redis)
    await store.transact(CHAT, lambda s: (game_session(), None))
    assert await redis.exists(BUCKET) == 0


async def test_a_flood_wait_defers_the_group_until_it_is_over(redis: Redis) -> None:
    """Telegram's 429 for the group: its table edits, and replies, wait until the end of the
    wait, whatever the budget says; what was held comes out once, in order."""
    store = GameStore(redis, group_messages_per_minute=60)
    now = int(time.time() * 1000)
    ends = now + 30_000
    await store.budget.hold(CHAT, ends, now, group_flooded=True, table=True, lines=["one"])
    await store.budget.hold(CHAT, now + 10_000, now, group_flooded=True, lines=["two"])
    # Woken at the earlier time, the clock finds the group still waiting: deferred again.
    assert await redis.zscore(DEFERRED, CHAT) == now + 10_000
    assert await store.budget.release(CHAT, now + 10_000) is None
    assert await redis.zscore(DEFERRED, CHAT) == ends
    # A change meanwhile: written, its table deferred to the end of the wait; no reply.
    committed = await store.transact(
        CHAT, lambda s: (game_session(), 1), group_messages=lambda cost: cost
    )
    assert committed.table_deferred
    assert await redis.zscore(DEFERRED, CHAT) == ends
    assert not await store.budget.take_for_reply(CHAT, now + 1000)
    assert not await store.budget.take(CHAT, now + 1000)
    assert await store.budget.release(CHAT, ends - 1) is None
    held = await store.budget.release(CHAT, ends)
    assert held == Held(table=True, lines=("one", "two"))
    # Shown, it is settled: nothing is left for the clock.
    assert await store.budget.settle(CHAT, held.token, ends)
    assert await redis.zscore(DEFERRED, CHAT) is None
    assert await store.budget.take_for_reply(CHAT, ends + 1000)


async def test_hands_held_by_a_private_flood_wait_come_out_whatever_the_group_budget(
    redis: Redis,
) -> None:
    store = GameStore(redis, group_messages_per_minute=1)
    now = int(time.time() * 1000)
    for _ in range(3):  # the group's budget is spent
        await store.budget.take(CHAT, now)
    await redis.zrem(DEFERRED, CHAT)
    await redis.hdel(BUCKET, "table")
    await store.budget.hold(
        CHAT, now + 2000, now, group_flooded=False, hands=[5, 6, 5], gone=[(5, 40)]
    )
    assert await store.budget.release(CHAT, now + 2000) == Held(
        table=False, hands=(5, 6), gone=((5, 40),)
    )


async def test_hands_held_while_the_group_waits_go_out_alone_at_their_time(
    redis: Redis,
) -> None:
    """A group in a long flood wait keeps its table and reveal; a hand the bot's send budget
    held meanwhile (a player's turn) is not made to wait with them."""
    store = GameStore(redis, group_messages_per_minute=60)
    now = int(time.time() * 1000)
    ends = now + 60_000
    await store.budget.hold(CHAT, ends, now, group_flooded=True, table=True, lines=["reveal"])
    await store.budget.hold(CHAT, now + 100, now, group_flooded=False, hands=[7], gone=[(7, 3)])
    assert await redis.zscore(DEFERRED, CHAT) == now + 100

    alone = await store.budget.release(CHAT, now + 100)
    assert alone == Held(table=False, hands=(7,), gone=((7, 3),))
    assert alone is not None and await store.budget.settle(CHAT, alone.token, now + 200)
    # The group's part still waits for the end of its wait, once.
    assert await store.budget.release(CHAT, now + 200) is None
    assert await redis.zscore(DEFERRED, CHAT) == ends
    assert await store.budget.release(CHAT, ends) == Held(table=True, lines=("reveal",))


async def test_replies_spend_the_budget_and_wait_for_nothing(redis: Redis) -> None:
    store = GameStore(redis, group_messages_per_minute=20)
    now = int(time.time() * 1000)
    assert [await store.budget.take_for_reply(CHAT, now) for _ in range(6)] == [True] * 4 + [
        False
    ] * 2
    assert await redis.zscore(DEFERRED, CHAT) is None
    assert await store.budget.take_for_reply(CHAT, now + 3000)  # a token is back


async def test_a_spend_stamped_earlier_than_the_last_takes_no_tokens_for_the_gap(
    redis: Redis,
) -> None:
    """Two processes' clocks differ (or one ran ahead): a spend whose time is before the last
    one's refills nothing, and must not charge the group for the gap either, which would hide
    the next table edits until the clock caught up."""
    store = GameStore(redis, group_messages_per_minute=60)  # a token a second
    now_ms = int(time.time() * 1000)
    assert await store.budget.take(CHAT, now_ms + 31_000)
    assert await store.budget.take(CHAT, now_ms)
    assert await store.budget.take(CHAT, now_ms + 1)
    assert await store.budget.deferred_tables(now_ms + 120_000) == []


async def test_the_topics_of_a_group_share_its_budget(redis: Redis) -> None:
    """Telegram's limit (about 20 messages a minute) is the group's, whatever its topics: the
    games of two topics together spend from one budget, and a flood wait met in one holds the
    other's table too. What waits for the clock stays each topic's own."""
    store = GameStore(redis, group_messages_per_minute=20)
    day, night = Place(CHAT, 11), Place(CHAT, 12)
    now = int(time.time() * 1000)
    store.sessions.clock = lambda: now
    day_game = dataclasses.replace(game_session(), topic=11)
    night_game = dataclasses.replace(game_session(), topic=12)
    # The burst (4): two messages in each topic spend it all; the next message in either
    # waits for the clock.
    for place, session in ((day, day_game), (night, night_game)):
        committed = await store.transact(
            place, lambda s, new=session: (new, 2), group_messages=lambda cost: cost
        )
        assert not committed.table_deferred
    retitled = dataclasses.replace(day_game, title="more")
    committed = await store.transact(day, lambda s: (retitled, 1), group_messages=lambda cost: cost)
    assert committed.table_deferred
    assert await store.budget.deferred_tables(now + 60_000) == [day]
    assert not await store.budget.take_for_reply(night, now)
    # A token a while later goes to one table, not one a topic.
    later = now + 3000
    assert await store.budget.take(day, later)
    assert not await store.budget.take(night, later)
    assert await store.budget.deferred_tables(later + 60_000) == [night]
    # A flood wait met in one topic is the group's: the other's table waits for its end.
    ends = later + 30_000
    await store.budget.hold(day, ends, later, group_flooded=True)
    assert await store.budget.release(night, ends - 1) is None
    held = await store.budget.release(night, ends)
    assert held is not None and held.table


async def test_the_hands_not_shown_yet_are_those_held_and_those_owed(redis: Redis) -> None:
    store = GameStore(redis)
    now = int(time.time() * 1000)
    assert await store.budget.unseen_hands(CHAT) == frozenset()
    await store.budget.hold(CHAT, now, now, group_flooded=False, hands=[5, 6])
    committed = await store.transact(
        CHAT,
        lambda s: (game_session(), 1),
        must_show=lambda session, _: MustShow(hands=(7,)),
    )
    assert committed.owed
    assert await store.budget.unseen_hands(CHAT) == frozenset({5, 6, 7})
