"""The Lua scripts' builders (tgcheat.store.scripts) give each script its keys and arguments in
the order it reads them."""

from __future__ import annotations

import re

import pytest
from redis.asyncio import Redis

from tgcheat.store.scripts import (
    CAS_SCRIPT,
    HOLD_SCRIPT,
    READ_SCRIPT,
    RELEASE_SCRIPT,
    REMEMBERED_UPDATES,
    REPLY_SCRIPT,
    TAKE_SCRIPT,
    UPDATE_MEMORY_MS,
    CasAnswer,
    ScriptCall,
    cas_call,
    hold_call,
    read_call,
    release_call,
    reply_call,
    take_call,
)


def _cas(**changes: object) -> ScriptCall:
    named: dict[str, object] = {
        "session_key": "{t}:session",
        "deadlines_key": "{t}:deadlines",
        "bucket_key": "{t}:bucket",
        "deferred_key": "{t}:deferred",
        "waiting_key": "{t}:waiting",
        "expected_version": 0,
        "document": b"the document",
        "session_ttl_s": 5000,
        "update_id": 3000,
        "first_look": True,
        "place": "-77",
        "deadline_ms": 123_456,
        "group_messages": 3,
        "per_minute": 20,
        "now_ms": 1_000_000,
    }
    return cas_call(**{**named, **changes})  # type: ignore[arg-type]


def _take() -> ScriptCall:
    return take_call(
        bucket_key="{t}:bucket",
        deferred_key="{t}:deferred",
        waiting_key="{t}:waiting",
        place="-77",
        per_minute=60,
        now_ms=9,
    )


def _reply() -> ScriptCall:
    return reply_call(bucket_key="{t}:bucket", per_minute=60, now_ms=9)


def _hold() -> ScriptCall:
    return hold_call(
        bucket_key="{t}:bucket",
        deferred_key="{t}:deferred",
        waiting_key="{t}:waiting",
        place="-77",
        until_ms=5000,
        group_flooded=True,
        table=True,
        lines_json=b'["a reveal"]',
        hands_json=b'["5"]',
        gone_json=b'["5:6"]',
        now_ms=9,
    )


def _release() -> ScriptCall:
    return release_call(
        bucket_key="{t}:bucket",
        deferred_key="{t}:deferred",
        waiting_key="{t}:waiting",
        place="-77",
        per_minute=60,
        now_ms=9,
    )


def _read() -> ScriptCall:
    return read_call(session_key="{t}:session", update_id=3000, first_look=True, now_ms=2_000_000)


def _numbers_read(script: str, table: str) -> set[int]:
    return {int(n) for n in re.findall(rf"\b{table}\[(\d+)\]", script)}


@pytest.mark.parametrize(
    ("script", "call"),
    [
        (CAS_SCRIPT, _cas()),
        (TAKE_SCRIPT, _take()),
        (REPLY_SCRIPT, _reply()),
        (HOLD_SCRIPT, _hold()),
        (RELEASE_SCRIPT, _release()),
        (READ_SCRIPT, _read()),
    ],
    ids=["cas", "take", "reply", "hold", "release", "read"],
)
def test_a_builder_gives_every_key_and_argument_its_script_reads(
    script: str, call: ScriptCall
) -> None:
    assert _numbers_read(script, "KEYS") == set(range(1, len(call.keys) + 1))
    assert _numbers_read(script, "ARGV") == set(range(1, len(call.args) + 1))


async def test_the_compare_and_set_reads_each_argument_by_its_name(redis: Redis) -> None:
    # Every key and argument has a value of its own and an effect of its own: one in the wrong
    # place shows.
    cas = redis.register_script(CAS_SCRIPT)
    call = _cas()
    assert await cas(keys=call.keys, args=call.args) == CasAnswer.WRITTEN
    assert await redis.hgetall("{t}:session") == {
        b"v": b"1",
        b"d": b"the document",
        # At 1,000,000 ms, no id forgotten yet, update 3000.
        b"u": b"1000000 0 3000",
    }
    assert 4990 < await redis.ttl("{t}:session") <= 5000
    assert await redis.zrange("{t}:deadlines", 0, -1, withscores=True) == [(b"-77", 123_456)]
    # The burst (4) less the 3 messages, counted at now.
    assert await redis.hgetall("{t}:bucket") == {b"tokens": b"1", b"at": b"1000000"}
    # The same update again is refused; without an update to remember, it is written.
    again = _cas(expected_version=1, document=b"again")
    assert await cas(keys=again.keys, args=again.args) == CasAnswer.DUPLICATE
    unmarked = _cas(expected_version=1, update_id=None, deadline_ms=0, group_messages=0)
    assert await cas(keys=unmarked.keys, args=unmarked.args) == CasAnswer.WRITTEN
    assert await redis.zcard("{t}:deadlines") == 0
    assert await redis.hget("{t}:session", "u") == b"1000000 0 3000"
    stale = _cas(expected_version=1, update_id=None)
    assert await cas(keys=stale.keys, args=stale.args) == CasAnswer.CONFLICT
    # Two more messages overdraw the budget: the table waits in the deferred set, for when a
    # token is back (a token every 3 s at 20 a minute).
    spent = _cas(expected_version=2, update_id=None, group_messages=2)
    assert await cas(keys=spent.keys, args=spent.args) == CasAnswer.WRITTEN_TABLE_DEFERRED
    assert await redis.zrange("{t}:deferred", 0, -1, withscores=True) == [(b"-77", 1_003_000)]
    assert await redis.hget("{t}:waiting", "table") == b"1"


async def test_the_take_reads_each_argument_by_its_name(redis: Redis) -> None:
    await redis.hset("{t}:bucket", mapping={"tokens": "-1", "at": "0"})
    take = redis.register_script(TAKE_SCRIPT)
    call = _take()
    # At 60 a minute (a token a second), 9 ms after a count of -1: one more token is owed,
    # so the table waits until 1.991 tokens are back (9 + 1991 ms).
    assert await take(keys=call.keys, args=call.args) == 0
    assert await redis.zrange("{t}:deferred", 0, -1, withscores=True) == [(b"-77", 2000)]
    assert await redis.hget("{t}:bucket", "at") == b"9"
    assert await redis.hget("{t}:waiting", "table") == b"1"


async def test_the_hold_reads_each_argument_by_its_name(redis: Redis) -> None:
    hold = redis.register_script(HOLD_SCRIPT)
    call = _hold()
    assert await hold(keys=call.keys, args=call.args) == 1
    # The flood wait is the group's (its bucket's), what waits the place's.
    assert await redis.hgetall("{t}:bucket") == {b"until": b"5000"}
    assert await redis.hgetall("{t}:waiting") == {
        b"table": b"1",
        b"lines": b'["a reveal"]',
        b"hands": b'["5"]',
        b"gone": b'["5:6"]',
    }
    assert await redis.zrange("{t}:deferred", 0, -1, withscores=True) == [(b"-77", 5000)]
    assert 600_000 < await redis.pttl("{t}:bucket") <= 600_000 + 5000
    assert 600_000 < await redis.pttl("{t}:waiting") <= 600_000 + 5000
    # Released before the wait is over: the hand and the deletion alone (an entry of their
    # own, numbered -9 and leased), the table and the line still deferred to its end.
    release = redis.register_script(RELEASE_SCRIPT)
    early = _release()
    assert await release(keys=early.keys, args=early.args) == [1, 0, b"", b'["5"]', b'["5:6"]', -9]
    assert await redis.hmget("{t}:waiting", "table", "lines", "hands", "gone") == [
        b"1",
        b'["a reveal"]',
        None,
        None,
    ]
    assert await redis.zrange("{t}:deferred", 0, -1, withscores=True) == [(b"-77", 5000)]
    # Nothing else to go alone: nothing, still deferred.
    assert await release(keys=early.keys, args=early.args) == [0]


async def test_the_read_reads_the_session_and_the_update(redis: Redis) -> None:
    await redis.hset("{t}:session", mapping={"v": "3", "u": "1999999 0 2999 3000"})
    read = redis.register_script(READ_SCRIPT)
    call = _read()
    assert await read(keys=call.keys, args=call.args) == [
        [b"v", b"3", b"u", b"1999999 0 2999 3000"],
        1,
    ]
    other = read_call(session_key="{t}:session", update_id=3001, first_look=True, now_ms=2_000_000)
    assert (await read(keys=other.keys, args=other.args))[1] == 0


async def test_the_marks_keep_the_last_updates_and_the_highest_forgotten(redis: Redis) -> None:
    cas = redis.register_script(CAS_SCRIPT)
    read = redis.register_script(READ_SCRIPT)

    async def write(version: int, update_id: int, *, first_look: bool = True, now: int = 5) -> int:
        call = _cas(
            expected_version=version,
            update_id=update_id,
            first_look=first_look,
            group_messages=0,
            now_ms=now,
        )
        return int(await cas(keys=call.keys, args=call.args))

    async def seen(update_id: int, *, first_look: bool = True, now: int = 5) -> bool:
        call = read_call(
            session_key="{t}:session", update_id=update_id, first_look=first_look, now_ms=now
        )
        return bool((await read(keys=call.keys, args=call.args))[1])

    # Ids 100, 102, ... then 101: one past what is remembered, so the lowest (100) is forgotten.
    ids = [100 + 2 * i for i in range(REMEMBERED_UPDATES)] + [101]
    for version, update_id in enumerate(ids):
        assert await write(version, update_id) == CasAnswer.WRITTEN
    marks = (await redis.hget("{t}:session", "u") or b"").split()
    assert marks[:2] == [b"5", b"100"] and sorted(map(int, marks[2:])) == sorted(ids[1:])
    assert all([await seen(i) for i in ids]) and not await seen(103)
    # At or below the floor, an update counts as handled on its first look only: a change
    # computed again after a lost race was judged new before.
    assert await seen(99) and not await seen(99, first_look=False)
    assert await write(len(ids), 99) == CasAnswer.DUPLICATE
    assert await write(len(ids), 99, first_look=False) == CasAnswer.WRITTEN
    # 99 was the lowest, forgotten at once: the floor stays the highest id forgotten.
    assert (await redis.hget("{t}:session", "u") or b"").split()[1] == b"100"
    # A day later Telegram may number updates from anywhere: the old marks are not held
    # against them, and start again.
    a_day = UPDATE_MEMORY_MS + 1
    assert not await seen(7, now=5 + a_day)
    assert await write(len(ids) + 1, 7, now=5 + a_day) == CasAnswer.WRITTEN
    assert await redis.hget("{t}:session", "u") == f"{5 + a_day} 0 7".encode()
