"""Players' statistics in Redis (tgcheat.store.stats): a game counted once whoever counts it
and in whatever order their steps interleave."""

from __future__ import annotations

import dataclasses

import pytest
from redis.asyncio import Redis, RedisCluster

from tests.store.helpers import CHAT
from tests.store.roundtrips import counting_round_trips
from tgcheat.store.games import GameStore
from tgcheat.store.stats import game_mark
from tgcheat.table.stats import GameRecord, Line, Outcome, Row

ANN, BOB = 11, 12


def _record(game: str = "g1") -> GameRecord:
    """A group's game between people: Ann won it (with a bluff nobody caught), Bob came second."""
    return GameRecord(
        key=f"{CHAT}:{game}",
        chat_id=CHAT,
        in_group=True,
        with_computers=False,
        lines=(
            Line(ANN, "Ann", Row(games=1, wins=1, plays=3, bluffs=1, bluffs_unseen=1), Outcome.WON),
            Line(BOB, "Bob", Row(games=1, second=1, plays=2, wrong_calls=1), Outcome.LOST),
        ),
    )


ANN_ONCE = Row(games=1, wins=1, plays=3, bluffs=1, bluffs_unseen=1, streak=1, best_streak=1)
BOB_ONCE = Row(games=1, second=1, plays=2, wrong_calls=1)


async def test_two_processes_that_both_pass_the_chats_step_count_each_person_once(
    redis: Redis,
) -> None:
    """The race the chat's step cannot stop: the second process passes it before the first
    marks the game counted for everyone, then comes to the people after the first counted
    them. Each person's own script remembers the game and adds nothing the second time."""
    first, second = GameStore(redis), GameStore(redis)
    record = _record()
    mark, chat_key = game_mark(record.key), second.keys.chat_stats(CHAT)
    went_on, _ = (await second.stats._first_trip(record, mark, chat_key))[0]
    assert went_on == 1
    counted = await first.stats.count(record)
    assert counted is not None
    answers = await second.stats._second_trip(record, mark, str(CHAT), [None, None], [(), ()])
    assert await first.stats.person(ANN) == ANN_ONCE
    assert await first.stats.person(BOB) == BOB_ONCE
    assert [answer[0] for answer in answers] == [b"dup", b"dup"]
    assert await second.stats.group(CHAT) == {ANN: ("Ann", ANN_ONCE), BOB: ("Bob", BOB_ONCE)}
    # A later try stops at the chat's step, with the first's news (here none: not rated,
    # nothing earned).
    assert await second.stats.count(record) is None
    assert await second.stats.person(ANN) == ANN_ONCE


async def test_a_count_interrupted_between_its_steps_is_completed_once(redis: Redis) -> None:
    """A process dies after the chat's step: the group's rows are in, the people's not. The
    next try adds the people and not the group's rows again."""
    dying, next_try = GameStore(redis), GameStore(redis)
    record = _record()
    chat_key = dying.keys.chat_stats(CHAT)
    assert (await dying.stats._first_trip(record, game_mark(record.key), chat_key))[0][0] == 1
    assert await next_try.stats.person(ANN) is None
    assert await next_try.stats.count(record)
    assert await next_try.stats.person(ANN) == ANN_ONCE
    assert (await next_try.stats.group(CHAT))[ANN] == ("Ann", ANN_ONCE)
    # A second game adds up (the streak goes on).
    assert await next_try.stats.count(_record("g2"))
    twice = dataclasses.replace(Row.of(2 * n for n in ANN_ONCE.numbers()), streak=2, best_streak=2)
    assert await next_try.stats.person(ANN) == twice


async def test_a_game_counted_after_its_player_asked_to_be_forgotten_skips_them(
    redis: Redis,
) -> None:
    """/forgetme while a game that ended before it is still to be counted (a late try: a
    second process, the clock): neither Ann's statistics nor her row in the group's table come
    back. Bob's count as usual; a game that ended after her wish counts for her again."""
    store = GameStore(redis)
    ended = 1_000_000
    await store.stats.forget_person(ANN, ended + 5)
    assert 0 < await redis.ttl(store.keys.person_stats(ANN)) <= 3600
    assert await store.stats.count(dataclasses.replace(_record(), ended_ms=ended))
    assert await store.stats.person(ANN) is None
    assert await store.stats.person(BOB) == BOB_ONCE
    assert await store.stats.group(CHAT) == {BOB: ("Bob", BOB_ONCE)}
    assert await store.stats.count(dataclasses.replace(_record("g2"), ended_ms=ended + 10))
    assert await store.stats.person(ANN) == ANN_ONCE
    assert (await store.stats.group(CHAT))[ANN] == ("Ann", ANN_ONCE)
    # Her groups are listed again: a second /forgetme finds her row.
    await store.stats.forget_person(ANN, ended + 20)
    assert ANN not in await store.stats.group(CHAT)


async def test_a_rated_game_costs_three_round_trips_to_count_and_one_again(
    redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Statistics, ratings, boards and achievements together: three round trips (the chat's
    step with the ratings read, the people's steps, the chat's mark with the boards); a second
    try stops at the first, with the game's news."""
    store = GameStore(redis)
    await store.stats.count(_rated("warm-up"))  # the scripts loaded
    # On a cluster each step is one send to each master holding its keys, all at once.
    steps = 3 if not isinstance(redis, RedisCluster) else 3 * 3 + 1
    with counting_round_trips(monkeypatch) as trips:
        news = await store.stats.count(_rated("g1"))
        assert trips.take() <= steps
        again = await store.stats.count(_rated("g1"))
        assert trips.take() <= (1 if not isinstance(redis, RedisCluster) else 3 + 1)
    assert news is not None and again == news
    ann = news.of(ANN)
    assert ann is not None and ann.after > ann.before


async def test_a_new_process_counts_by_digest_and_loads_the_scripts_only_when_redis_forgot(
    redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis keeps the scripts of the processes before: a new process's first count costs no
    extra round trips. After Redis forgot them (a restart, here SCRIPT FLUSH) the count loads
    them and is still counted once."""
    if isinstance(redis, RedisCluster):
        pytest.skip("a cluster client loads scripts on each node by itself")
    await GameStore(redis).stats.count(_rated("warm-up"))
    fresh = GameStore(redis)
    with counting_round_trips(monkeypatch) as trips:
        assert await fresh.stats.count(_rated("g1")) is not None
        assert trips.take() <= 3
    await redis.script_flush()
    forgot = GameStore(redis)
    assert await forgot.stats.count(_rated("g2")) is not None
    ann = await forgot.stats.person(ANN)
    assert ann is not None and ann.games == 3


def _rated(game: str) -> GameRecord:
    """A group's game of three people, won by Ann, in December 2026."""
    people = ((ANN, "Ann"), (BOB, "Bob"), (13, "Cleo"))
    lines = tuple(
        Line(
            user,
            name,
            Row(games=1, wins=int(place == 1), plays=3),
            Outcome.WON if place == 1 else Outcome.LOST,
            place,
        )
        for place, (user, name) in enumerate(people, start=1)
    )
    return GameRecord(f"{CHAT}:{game}", CHAT, True, False, lines, 1_797_336_000_000)
