"""The Lua scripts' builders (tgcheat.store.scripts) give each script its keys and arguments in
the order it reads them."""

from __future__ import annotations

import re

import pytest
from redis.asyncio import Redis

from tgcheat.store.scripts import (
    BEGIN_SCRIPT,
    CAS_SCRIPT,
    CHECKPOINT_SCRIPT,
    END_SCRIPT,
    READ_SCRIPT,
    RECHECK_SCRIPT,
    REMEMBERED_UPDATES,
    REPLY_SCRIPT,
    UPDATE_MEMORY_MS,
    CasAnswer,
    ScriptCall,
    begin_call,
    cas_call,
    checkpoint_call,
    end_call,
    read_call,
    recheck_call,
    reply_call,
)


def _cas(**changes: object) -> ScriptCall:
    named: dict[str, object] = {
        "session_key": "{t}:session",
        "deadlines_key": "{t}:deadlines",
        "bucket_key": "{t}:bucket",
        "due_key": "{t}:due",
        "watching_key": "{t}:watching",
        "expected_version": 0,
        "document": b"the document",
        "session_ttl_s": 5000,
        "update_id": 3000,
        "first_look": True,
        "place": "-77",
        "deadline_ms": 123_456,
        "now_ms": 1_000_000,
        "channel": "",
        "notice": b"",
        "lease_token": "",
        "lease_ms": 30_000,
    }
    return cas_call(**{**named, **changes})  # type: ignore[arg-type]


def _reply() -> ScriptCall:
    return reply_call(bucket_key="{t}:bucket", session_key="{t}:session", per_minute=60, now_ms=9)


def _begin(token: str = "me", now_ms: int = 1_000_100) -> ScriptCall:
    return begin_call(
        session_key="{t}:session",
        bucket_key="{t}:bucket",
        due_key="{t}:due",
        watching_key="{t}:watching",
        token=token,
        now_ms=now_ms,
        lease_ms=30_000,
        place="-77",
    )


def _end(**changes: object) -> ScriptCall:
    named: dict[str, object] = {
        "session_key": "{t}:session",
        "bucket_key": "{t}:bucket",
        "due_key": "{t}:due",
        "watching_key": "{t}:watching",
        "token": "me",
        "version": 1,
        "buried": 0,
        "shown": b"the record",
        "spent": 2,
        "per_minute": 60,
        "now_ms": 1_000_200,
        "flood_until_ms": 0,
        "due_ms": 0,
        "lease_ms": 30_000,
        "place": "-77",
        "recheck": 0,
        "partial": False,
    }
    return end_call(**{**named, **changes})  # type: ignore[arg-type]


def _checkpoint(token: str = "me") -> ScriptCall:
    return checkpoint_call(session_key="{t}:session", token=token, shown=b"so far")


def _recheck() -> ScriptCall:
    return recheck_call(session_key="{t}:session", due_key="{t}:due", now_ms=7, place="-77")


def _read() -> ScriptCall:
    return read_call(session_key="{t}:session", update_id=3000, first_look=True, now_ms=2_000_000)


def _numbers_read(script: str, table: str) -> set[int]:
    return {int(n) for n in re.findall(rf"\b{table}\[(\d+)\]", script)}


@pytest.mark.parametrize(
    ("script", "call"),
    [
        (CAS_SCRIPT, _cas()),
        (REPLY_SCRIPT, _reply()),
        (BEGIN_SCRIPT, _begin()),
        (END_SCRIPT, _end()),
        (CHECKPOINT_SCRIPT, _checkpoint()),
        (RECHECK_SCRIPT, _recheck()),
        (READ_SCRIPT, _read()),
    ],
    ids=["cas", "reply", "begin", "end", "checkpoint", "recheck", "read"],
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
    assert await cas(keys=call.keys, args=call.args) == [CasAnswer.WRITTEN, 0]
    assert await redis.hgetall("{t}:session") == {
        b"v": b"1",
        b"d": b"the document",
        # At 1,000,000 ms, no id forgotten yet, update 3000.
        b"u": b"1000000 0 3000",
    }
    assert 4990 < await redis.ttl("{t}:session") <= 5000
    assert await redis.zrange("{t}:deadlines", 0, -1, withscores=True) == [(b"-77", 123_456)]
    # The same update again is refused; without an update to remember, it is written.
    again = _cas(expected_version=1, document=b"again")
    assert await cas(keys=again.keys, args=again.args) == [CasAnswer.DUPLICATE, 0]
    unmarked = _cas(expected_version=1, update_id=None, deadline_ms=0)
    assert await cas(keys=unmarked.keys, args=unmarked.args) == [CasAnswer.WRITTEN, 0]
    assert await redis.zcard("{t}:deadlines") == 0
    assert await redis.hget("{t}:session", "u") == b"1000000 0 3000"
    stale = _cas(expected_version=1, update_id=None)
    assert await cas(keys=stale.keys, args=stale.args) == [CasAnswer.CONFLICT, 0]


async def test_the_compare_and_set_takes_the_lease_and_answers_what_is_shown(
    redis: Redis,
) -> None:
    cas = redis.register_script(CAS_SCRIPT)
    await redis.hset("{t}:bucket", mapping={"tokens": "2.5", "at": "999000", "until": "5"})
    # A player's Mini App reported visible: read with the lease, no round trip of its own.
    await redis.hset("{t}:watching", "11", "1030000")
    leased = _cas(lease_token="me")
    assert await cas(keys=leased.keys, args=leased.args) == [
        1,
        1,
        b"1",
        b"the document",
        b"",
        b"0",
        b"2.5",
        b"999000",
        b"5",
        [],
        b"0",
        [b"11", b"1030000"],
    ]
    assert await redis.hget("{t}:session", "l") == b"me 1030000"
    # Due when the lease ends: a process that dies holding it leaves the place to the clock.
    assert await redis.zrange("{t}:due", 0, -1, withscores=True) == [(b"-77", 1_030_000)]
    # Another process's change while the lease lasts is written, and leaves the sync to it.
    other = _cas(expected_version=1, update_id=None, lease_token="other", now_ms=1_000_050)
    assert await cas(keys=other.keys, args=other.args) == [1, 0]
    assert await redis.hget("{t}:session", "l") == b"me 1030000"
    # Once the lease is over, another process takes it.
    late = _cas(expected_version=2, update_id=None, lease_token="other", now_ms=1_030_001)
    assert (await cas(keys=late.keys, args=late.args))[:2] == [1, 1]
    assert await redis.hget("{t}:session", "l") == b"other 1060001"


async def test_a_sync_begins_and_ends_under_its_lease(redis: Redis) -> None:
    begin = redis.register_script(BEGIN_SCRIPT)
    end = redis.register_script(END_SCRIPT)
    # No session: nothing to sync, and the place leaves the due set.
    await redis.zadd("{t}:due", {"-77": 5})
    assert await begin(keys=_begin().keys, args=_begin().args) == [-1]
    assert await redis.zcard("{t}:due") == 0
    await redis.hset("{t}:session", mapping={"v": "1", "d": "doc", "s": "shown", "b": "2"})
    assert await begin(keys=_begin().keys, args=_begin().args) == [
        1,
        b"1",
        b"doc",
        b"shown",
        b"2",
        b"",
        b"",
        b"",
        [],
        b"0",
        [],
    ]
    # Held: another process's begin is refused.
    theirs = _begin("other", 1_000_150)
    assert await begin(keys=theirs.keys, args=theirs.args) == [0]
    # The end keeps the record, spends the group's tokens, keeps the flood wait, lets go and
    # leaves the place due when what is left can go.
    done = _end(buried=2, flood_until_ms=1_005_000, due_ms=1_005_000)
    assert await end(keys=done.keys, args=done.args) == [0]
    assert await redis.hget("{t}:session", "s") == b"the record"
    assert await redis.hget("{t}:session", "l") is None
    assert await redis.hmget("{t}:bucket", "tokens", "until") == [b"2", b"1005000"]
    assert await redis.zrange("{t}:due", 0, -1, withscores=True) == [(b"-77", 1_005_000)]
    # A session changed meanwhile (a message posted below the table): the lease is kept for
    # another round, which starts from what is stored.
    assert (await begin(keys=_begin().keys, args=_begin().args))[0] == 1
    await redis.hincrby("{t}:session", "b", 1)
    again = _end(buried=2, spent=1)
    assert await end(keys=again.keys, args=again.args) == [
        1,
        b"1",
        b"doc",
        b"the record",
        b"3",
        b"1",
        b"1000200",
        b"1005000",
        [],
        b"0",
        [],
    ]
    assert (await redis.hget("{t}:session", "l") or b"").startswith(b"me ")
    # A partial sync (it drew one hand) leaves what was due, at the earlier time.
    assert (await begin(keys=_begin().keys, args=_begin().args))[0] == 1
    await redis.zadd("{t}:due", {"-77": 1_004_000})
    partial = _end(buried=3, spent=0, due_ms=0, recheck=0, partial=True)
    assert await end(keys=partial.keys, args=partial.args) == [0]
    assert await redis.zscore("{t}:due", "-77") == 1_004_000
    # A lease lost (over, and taken by another process): nothing is written.
    taken = _begin("other", 1_000_200 + 30_001)
    assert (await begin(keys=taken.keys, args=taken.args))[0] == 1
    lost = _end(buried=3, shown=b"late")
    assert await end(keys=lost.keys, args=lost.args) == [-1]
    assert await redis.hget("{t}:session", "s") == b"the record"


async def test_a_long_sync_keeps_what_it_has_shown_while_its_lease_lasts(
    redis: Redis,
) -> None:
    begin = redis.register_script(BEGIN_SCRIPT)
    checkpoint = redis.register_script(CHECKPOINT_SCRIPT)
    recheck = redis.register_script(RECHECK_SCRIPT)
    # No session: nothing is written (no key made).
    assert await checkpoint(keys=_checkpoint().keys, args=_checkpoint().args) == 0
    assert await recheck(keys=_recheck().keys, args=_recheck().args) == 0
    assert not await redis.exists("{t}:session")
    await redis.hset("{t}:session", mapping={"v": "1", "d": "doc"})
    assert (await begin(keys=_begin().keys, args=_begin().args))[0] == 1
    assert await checkpoint(keys=_checkpoint().keys, args=_checkpoint().args) == 1
    # The record so far is kept; the lease is not made longer.
    assert await redis.hmget("{t}:session", "l", "s") == [b"me 1030100", b"so far"]
    # Another's lease is not written to by this sync.
    theirs = _checkpoint("other")
    await redis.hset("{t}:session", "s", "theirs")
    assert await checkpoint(keys=theirs.keys, args=theirs.args) == 0
    assert await redis.hget("{t}:session", "s") == b"theirs"
    # A check of the messages asked for: counted, and the place due.
    assert await recheck(keys=_recheck().keys, args=_recheck().args) == 1
    assert await redis.hget("{t}:session", "x") == b"1"
    assert await redis.zscore("{t}:due", "-77") == 7


async def test_a_reply_takes_a_token_and_buries_the_table(redis: Redis) -> None:
    reply = redis.register_script(REPLY_SCRIPT)
    call = _reply()
    # No session there: the reply takes its token and buries nothing (no key is made).
    assert await reply(keys=call.keys, args=call.args) == 1
    assert not await redis.exists("{t}:session")
    await redis.hset("{t}:session", "v", "1")
    assert await reply(keys=call.keys, args=call.args) == 1
    assert await redis.hget("{t}:session", "b") == b"1"


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
            now_ms=now,
        )
        return int((await cas(keys=call.keys, args=call.args))[0])

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
