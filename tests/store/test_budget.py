"""Each group's message budget (tgcheat.store.budget) and each place's record of what is shown,
with the lease of the process that syncs it (tgcheat.store.shown)."""

from __future__ import annotations

import dataclasses
import time

import pytest
from redis.asyncio import Redis

from tests.store.helpers import CHAT, DUE, SESSION, game_session
from tgcheat.store.budget import GroupBucket
from tgcheat.store.games import GameStore
from tgcheat.store.shown import LeaseLost
from tgcheat.table.place import Place


def test_a_bucket_refills_at_its_rate_up_to_its_burst() -> None:
    assert GroupBucket().available(5, 20) == 4  # never used: full
    spent = GroupBucket(tokens=-4, at_ms=0)
    assert spent.available(0, 20) == -4
    assert spent.available(3_000, 20) == pytest.approx(-3)  # a token every 3 s at 20 a minute
    assert spent.available(10**9, 20) == 4
    # A clock behind the last spender's refills nothing.
    assert GroupBucket(tokens=1, at_ms=5_000).available(1_000, 20) == 1
    assert GroupBucket.refill_ms(2, 20) == 6_000


async def test_replies_spend_the_budget_and_bury_the_table(redis: Redis) -> None:
    store = GameStore(redis, group_messages_per_minute=20)
    now = int(time.time() * 1000)
    await store.transact(CHAT, lambda s: (game_session(), None))
    taken = [await store.budget.take_for_reply(CHAT, now) for _ in range(6)]
    assert taken == [True] * 4 + [False] * 2
    # Each reply sent counted a message below the table; the refused ones did not.
    assert await redis.hget(SESSION, "b") == b"4"
    assert await store.budget.take_for_reply(CHAT, now + 3000)  # a token is back


async def test_the_topics_of_a_group_share_its_budget(redis: Redis) -> None:
    """Telegram's limit (about 20 messages a minute) is the group's, whatever its topics: the
    replies in two topics spend from one bucket, which each topic's sync reads."""
    store = GameStore(redis, group_messages_per_minute=20)
    day, night = Place(CHAT, 11), Place(CHAT, 12)
    now = int(time.time() * 1000)
    for place in (day, night):
        session = dataclasses.replace(game_session(), topic=place.topic)
        await store.transact(place, lambda s, new=session: (new, None))
    assert await store.budget.take_for_reply(day, now)
    assert await store.budget.take_for_reply(day, now)
    lease = await store.shown.begin(night, now)
    assert lease is not None
    assert lease.bucket.available(now, 20) == pytest.approx(2)


async def test_a_place_is_synced_by_one_process_at_a_time(redis: Redis) -> None:
    store = GameStore(redis)
    now = int(time.time() * 1000)
    assert await store.shown.begin(Place(CHAT), now) is None  # no session
    committed = await store.transact(CHAT, lambda s: (game_session(), None), lease=True)
    lease = committed.lease
    assert lease is not None and lease.session == committed.session and lease.shown == b""
    # Held: another sync does not begin; the place is due when the lease would end.
    assert await store.shown.begin(Place(CHAT), now) is None
    assert await store.shown.due(now + store.shown.lease_ms + 60_000) == [Place(CHAT)]
    # The end keeps the record and lets go; the place is due when what is left can go.
    assert (
        await store.shown.end(
            Place(CHAT), lease, b"shown", spent=0, flood_until_ms=0, due_ms=now + 5, now_ms=now
        )
        is None
    )
    assert await store.shown.read(Place(CHAT)) == b"shown"
    assert await redis.zscore(DUE, str(CHAT)) == now + 5
    # A change while a sync runs: its end keeps the lease for another round from it.
    again = await store.shown.begin(Place(CHAT), now)
    assert again is not None and again.shown == b"shown"
    await store.transact(CHAT, lambda s: (dataclasses.replace(game_session(), title="t"), None))
    following = await store.shown.end(
        Place(CHAT), again, b"two", spent=0, flood_until_ms=0, due_ms=0, now_ms=now
    )
    assert following is not None and following.version == again.version + 1
    assert following.session is not None and following.session.title == "t"
    final = await store.shown.end(
        Place(CHAT), following, b"three", spent=0, flood_until_ms=0, due_ms=0, now_ms=now
    )
    assert final is None and await redis.zscore(DUE, str(CHAT)) is None


async def test_a_lease_taken_over_after_it_ran_out_is_lost(redis: Redis) -> None:
    store = GameStore(redis)
    now = int(time.time() * 1000)
    store.sessions.clock = lambda: now
    committed = await store.transact(CHAT, lambda s: (game_session(), None), lease=True)
    mine = committed.lease
    assert mine is not None
    later = now + store.shown.lease_ms + 1
    theirs = await store.shown.begin(Place(CHAT), later)
    assert theirs is not None
    with pytest.raises(LeaseLost):
        await store.shown.end(
            Place(CHAT), mine, b"late", spent=0, flood_until_ms=0, due_ms=0, now_ms=later
        )
    assert await store.shown.read(Place(CHAT)) == b""
