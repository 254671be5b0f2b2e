"""What players must see of a change (tgcheat.store.outbox): recorded by the compare-and-set
that commits it, leased to the committing process, settled by it, or released to the clock
once, in order."""

from __future__ import annotations

import dataclasses
import time

from redis.asyncio import Redis

from tests.store.helpers import BUCKET, CHAT, DEFERRED, KEYS, SESSION, game_session
from tgcheat.store.budget import Held
from tgcheat.store.games import GameStore, MustShow
from tgcheat.store.messages import TABLE_ROLE, Recorded, hand_role
from tgcheat.store.scripts import HISTORY_KEPT, OUTBOX_ENTRIES, OUTBOX_LEASE_MS
from tgcheat.table.place import Place
from tgcheat.table.session import MessageIds

NOTHING = Recorded((), None)


async def _commit(store: GameStore, owed: MustShow | None, title: str = "t") -> int:
    new = dataclasses.replace(game_session(), title=title)
    committed = await store.transact(CHAT, lambda s: (new, None), must_show=lambda s, r: owed)
    assert committed.owed is (owed is not None and not owed.empty)
    return committed.version


async def test_an_entry_is_leased_to_its_process_then_the_clocks(redis: Redis) -> None:
    store = GameStore(redis)
    now = int(time.time() * 1000)
    await _commit(store, MustShow(("reveal",), table=True, hands=(7,)))
    due = await redis.zscore(DEFERRED, CHAT)
    assert due is not None and now + OUTBOX_LEASE_MS <= due < now + OUTBOX_LEASE_MS + 5_000
    assert await store.budget.release(CHAT, now + 1_000) is None
    held = await store.budget.release(CHAT, int(due))
    assert held == Held(table=True, lines=("reveal",), hands=(7,))
    # Once: leased to the process that took it, nothing is left for another meanwhile.
    assert await store.budget.release(CHAT, int(due) + 1) is None
    assert await store.budget.settle(CHAT, held.token, int(due) + 2)
    assert await redis.zscore(DEFERRED, CHAT) is None


async def test_what_the_clock_took_and_never_settled_is_released_again(redis: Redis) -> None:
    """The clock's process died, or Redis restarted before its answer came back."""
    store = GameStore(redis)
    await _commit(store, MustShow(("reveal",), table=True))
    later = int(time.time() * 1000) + OUTBOX_LEASE_MS + 1_000
    assert await store.budget.release(CHAT, later) == Held(table=True, lines=("reveal",))
    assert await store.budget.release(CHAT, later + 1_000) is None
    again = await store.budget.release(CHAT, later + OUTBOX_LEASE_MS)
    assert again == Held(table=True, lines=("reveal",))


async def test_a_settled_entry_is_never_shown_again(redis: Redis) -> None:
    store = GameStore(redis)
    version = await _commit(store, MustShow(("reveal",), table=True))
    now = int(time.time() * 1000)
    assert await store.budget.settle(CHAT, version, now)
    assert await redis.zscore(DEFERRED, CHAT) is None
    assert not await store.budget.settle(CHAT, version, now)


async def test_what_a_publisher_could_not_show_is_due_at_once(redis: Redis) -> None:
    store = GameStore(redis)
    version = await _commit(store, MustShow(("one", "two"), table=True))
    now = int(time.time() * 1000)
    assert await store.budget.settle(CHAT, version, now, MustShow(("two",), table=True))
    assert await redis.zscore(DEFERRED, CHAT) == now
    assert await store.budget.release(CHAT, now) == Held(table=True, lines=("two",))


async def test_entries_of_several_changes_keep_their_order_and_their_own_leases(
    redis: Redis,
) -> None:
    store = GameStore(redis)
    first = await _commit(store, MustShow(("first",), table=True), "a")
    second = await _commit(store, MustShow(("second",), table=True), "b")
    now = int(time.time() * 1000)
    # The second's publisher gave up at once; the first's still has its lease.
    await store.budget.settle(CHAT, second, now, MustShow(("second",), table=True))
    held = await store.budget.release(CHAT, now)
    assert held == Held(table=True, lines=("second",))
    assert await store.budget.settle(CHAT, first, now)
    assert await store.budget.settle(CHAT, held.token, now)
    assert await redis.zscore(DEFERRED, CHAT) is None


async def test_a_change_that_owes_nothing_records_nothing(redis: Redis) -> None:
    store = GameStore(redis)
    await _commit(store, None)
    await _commit(store, MustShow())
    assert await redis.hget(BUCKET, "out") is None


async def test_a_group_keeps_a_bounded_number_of_entries(redis: Redis) -> None:
    store = GameStore(redis)
    for i in range(OUTBOX_ENTRIES + 5):
        await _commit(store, MustShow((f"line {i}",)), f"t{i}")
    far = int(time.time() * 1000) + 2 * OUTBOX_LEASE_MS
    held = await store.budget.release(CHAT, far)
    assert held is not None and len(held.lines) == OUTBOX_ENTRIES
    assert held.lines[-1] == f"line {OUTBOX_ENTRIES + 4}"


async def test_an_older_version_shown_after_a_newer_one_is_shown_again(redis: Redis) -> None:
    store = GameStore(redis)
    await _commit(store, None)
    now = int(time.time() * 1000)
    hand = hand_role(5)
    assert await store.messages.record(CHAT, 3, now, shown=[TABLE_ROLE, hand]) == NOTHING
    # The same version again, or a newer one: nothing overtaken.
    assert await store.messages.record(CHAT, 3, now, shown=[TABLE_ROLE]) == NOTHING
    assert await store.messages.record(CHAT, 4, now, shown=[hand]) == NOTHING
    # An older one landing last: both are queued for the clock, which shows them again.
    recorded = await store.messages.record(
        CHAT, 2, now, ids=MessageIds(table=9), shown=[TABLE_ROLE, hand]
    )
    assert set(recorded.overtaken) == {TABLE_ROLE, hand}
    assert (await store.load(CHAT))[1].table == 9
    assert await store.budget.release(CHAT, now) == Held(table=True, hands=(5,))


async def test_nothing_is_recorded_for_a_session_that_is_gone(redis: Redis) -> None:
    store = GameStore(redis)
    recorded = await store.messages.record(1, 1, 0, ids=MessageIds(table=3), shown=[TABLE_ROLE])
    assert recorded == NOTHING
    assert await redis.exists(KEYS.session(Place(1))) == 0


async def test_a_publisher_still_showing_hands_keeps_its_lease_for_them(redis: Redis) -> None:
    store = GameStore(redis)
    version = await _commit(store, MustShow(("reveal",), table=True, hands=(5, 6)))
    now = int(time.time() * 1000)
    rest = MustShow(hands=(6,))
    assert await store.budget.settle(CHAT, version, now, rest, still_showing=True)
    assert await store.budget.release(CHAT, now + 1_000) is None
    later = now + OUTBOX_LEASE_MS + 5_000
    assert await store.budget.release(CHAT, later) == Held(table=False, hands=(6,))


async def test_a_table_message_that_became_history_is_told_with_its_line(redis: Redis) -> None:
    store = GameStore(redis)
    await _commit(store, None)
    now = int(time.time() * 1000)
    await store.messages.add(CHAT, MessageIds(table=12), history=(11, "Bob calls Cheat on Ann"))
    recorded = await store.messages.record(CHAT, 5, now, shown=[TABLE_ROLE], table_message=11)
    assert recorded == Recorded((), "Bob calls Cheat on Ann")
    assert await store.messages.record(CHAT, 5, now, shown=[TABLE_ROLE], table_message=12) == (
        NOTHING
    )


async def test_a_session_keeps_the_lines_of_its_last_former_tables_only(redis: Redis) -> None:
    store = GameStore(redis)
    await _commit(store, None)
    for message_id in range(1, HISTORY_KEPT + 4):
        await store.messages.add(
            CHAT, MessageIds(table=message_id + 1), history=(message_id, f"line {message_id}")
        )
    kept = [f for f in await redis.hkeys(SESSION) if f.startswith(b"m:h:")]
    assert sorted(int(f[4:]) for f in kept) == list(range(4, HISTORY_KEPT + 4))


async def test_a_lease_renewed_by_its_publisher_keeps_the_clock_away(redis: Redis) -> None:
    store = GameStore(redis)
    version = await _commit(store, MustShow(("reveal",), table=True))
    now = int(time.time() * 1000)
    later = now + OUTBOX_LEASE_MS + 1_000
    assert await store.budget.extend(CHAT, version, later - 500)
    # The first lease is over, the renewed one is not: nothing for the clock yet.
    assert await store.budget.release(CHAT, later) is None
    assert await store.budget.release(CHAT, later + OUTBOX_LEASE_MS) == Held(
        table=True, lines=("reveal",)
    )
    # Taken by the clock: its first publisher's renewal finds nothing any more.
    assert not await store.budget.extend(CHAT, version, later + OUTBOX_LEASE_MS)
