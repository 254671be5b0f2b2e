"""Sessions against a real Redis (tgcheat.store.sessions): compare-and-set, de-duplication of
updates, and the round trips the process's hint saves."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from redis.asyncio import Redis, RedisCluster

from tests.store.helpers import CHAT, SESSION, game_session, replace_with, stored_keys
from tests.store.roundtrips import counting_round_trips
from tgcheat.engine.lobby import Lobby
from tgcheat.engine.rules import Rules
from tgcheat.store.games import REMEMBERED_UPDATES, SESSION_TTL_S, GameStore, Outcome
from tgcheat.table.place import Place
from tgcheat.table.session import Session


async def test_transact_writes_once_and_ignores_a_repeated_update(redis: Redis) -> None:
    store = GameStore(redis)
    session = game_session()
    calls = 0

    def create(current: Session | None) -> tuple[Session | None, str]:
        nonlocal calls
        calls += 1
        return session, "created"

    first = await store.transact(CHAT, create, update_id=42)
    assert first.changed and first.result == "created" and first.version == 1
    again = await store.transact(CHAT, create, update_id=42)
    assert again.duplicate and not again.changed and again.version == 1
    # Another process (no cached hint) sees the repeat before computing anything.
    calls = 0
    other = await GameStore(redis).transact(CHAT, create, update_id=42)
    assert other.duplicate and calls == 0
    loaded, _ = await store.load(CHAT)
    assert loaded == session
    ttl = await redis.ttl(SESSION)
    assert 0 < ttl <= SESSION_TTL_S
    # The update is remembered in the session's hash, and expires with it: no key of its own.
    assert await stored_keys(redis) == [SESSION.encode()]


async def test_returning_the_same_session_writes_nothing(redis: Redis) -> None:
    store = GameStore(redis)
    outcome = await store.transact(CHAT, lambda s: (s, "nothing"), update_id=7)
    assert outcome.outcome is Outcome.UNCHANGED and outcome.version == 0
    # A refused change does not mark the update as handled: a re-delivery is tried again.
    assert await stored_keys(redis) == []


async def test_concurrent_changes_are_serialised_by_compare_and_set(redis: Redis) -> None:
    store = GameStore(redis)
    await store.transact(CHAT, lambda s: (Session(CHAT, "g1", 1, lobby=Lobby(1, Rules())), None))
    # Fifty clients add one player each at the same moment; every addition must survive.
    # (A cluster client has a pool per node already: it stands for the five.)
    clients = (
        [redis] * 5
        if isinstance(redis, RedisCluster)
        else [Redis.from_pool(redis.connection_pool) for _ in range(5)]
    )

    async def add(i: int) -> None:
        own = GameStore(clients[i % len(clients)])

        def change(current: Session | None) -> tuple[Session | None, None]:
            assert current is not None and current.lobby is not None
            players = (*current.lobby.players, (i, f"p{i}"))
            lobby = dataclasses.replace(current.lobby, players=players)
            return dataclasses.replace(current, lobby=lobby), None

        await own.transact(CHAT, change, update_id=10_000 + i)

    await asyncio.gather(*(add(i) for i in range(50)))
    loaded, _ = await store.load(CHAT)
    assert loaded is not None and loaded.lobby is not None
    assert sorted(uid for uid, _ in loaded.lobby.players) == list(range(50))
    assert int(await redis.hget(SESSION, "v") or 0) == 51


async def test_the_same_update_delivered_twice_at_once_applies_once(redis: Redis) -> None:
    store = GameStore(redis)
    applied = []

    def create(current: Session | None) -> tuple[Session | None, None]:
        applied.append(1)
        version = 0 if current is None or current.lobby is None else len(current.lobby.players)
        lobby = Lobby(1, Rules(), tuple((i, "x") for i in range(version + 1)))
        return Session(CHAT, "g1", 1, lobby=lobby), None

    outcomes = await asyncio.gather(*(store.transact(CHAT, create, update_id=99) for _ in range(8)))
    assert sum(o.changed for o in outcomes) == 1
    assert sum(o.duplicate for o in outcomes) == 7
    loaded, _ = await store.load(CHAT)
    assert loaded is not None and loaded.lobby is not None and len(loaded.lobby.players) == 1


async def test_a_change_from_a_stale_hint_is_computed_again_from_the_stored_session(
    redis: Redis,
) -> None:
    store = GameStore(redis)
    first = game_session()
    await store.transact(CHAT, replace_with(first))
    # Another process changes the game: this one's hint is now a version behind.
    other = dataclasses.replace(first, title="changed elsewhere")
    await GameStore(redis).transact(CHAT, replace_with(other))
    seen: list[str] = []

    def retitle(current: Session | None) -> tuple[Session | None, None]:
        assert current is not None
        seen.append(current.title)
        return dataclasses.replace(current, title=current.title + "!"), None

    committed = await store.transact(CHAT, retitle)
    assert seen == ["Friday cards", "changed elsewhere"]
    assert committed.changed and committed.version == 3
    assert committed.session is not None and committed.session.title == "changed elsewhere!"


async def test_a_play_press_is_two_round_trips(
    redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compare-and-set, which takes the place's lease and reads what is shown, then the
    sync's end: this process made the last change, so its hint saves the read."""
    store = GameStore(redis)
    session = game_session()
    first = await store.transact(CHAT, replace_with(session), update_id=1, lease=True)
    assert first.lease is not None
    await store.shown.end(
        Place(CHAT), first.lease, b"{}", spent=0, flood_until_ms=0, due_ms=0, now_ms=1
    )
    with counting_round_trips(monkeypatch) as trips:
        played = dataclasses.replace(session, title="played")
        committed = await store.transact(CHAT, replace_with(played), update_id=2, lease=True)
        assert committed.changed and committed.lease is not None
        assert committed.lease.session == played
        assert trips.take() == 1
        await store.shown.end(
            Place(CHAT), committed.lease, b"{}", spent=0, flood_until_ms=0, due_ms=0, now_ms=1
        )
        assert trips.take() == 1
        # The next change still reads nothing.
        again = await store.transact(CHAT, replace_with(session), update_id=3)
        assert again.changed
        assert trips.take() == 1
        # Without the hint (another process), the read comes first.
        await GameStore(redis).transact(CHAT, replace_with(played), update_id=4)
        assert trips.take() == 2


async def test_a_refused_change_leaves_what_it_read_as_the_hint(
    redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A press refused after a fresh read (a stale button) keeps what it read: the person's
    next tap writes without reading again."""
    store = GameStore(redis)
    session = game_session()
    await GameStore(redis).transact(CHAT, replace_with(session), update_id=1)

    def refused(current: Session | None) -> tuple[Session | None, None]:
        raise ValueError("a stale button")

    with counting_round_trips(monkeypatch) as trips:
        with pytest.raises(ValueError):
            await store.transact(CHAT, refused, update_id=2)
        assert trips.take() == 1  # the read
        played = dataclasses.replace(session, title="played")
        committed = await store.transact(CHAT, replace_with(played), update_id=3)
        assert committed.changed and committed.version == 2
        assert trips.take() == 1  # the compare-and-set alone


def _adding(user_id: int):  # type: ignore[no-untyped-def]
    """A change that seats one more player in the lobby."""

    def change(current: Session | None) -> tuple[Session | None, None]:
        if current is None:
            return Session(CHAT, "g1", 1, lobby=Lobby(1, Rules(), ((user_id, "p"),))), None
        assert current.lobby is not None
        players = (*current.lobby.players, (user_id, "p"))
        return dataclasses.replace(
            current, lobby=dataclasses.replace(current.lobby, players=players)
        ), None

    return change


async def _players(store: GameStore) -> list[int]:
    loaded, _ = await store.load(CHAT)
    assert loaded is not None and loaded.lobby is not None
    return [uid for uid, _ in loaded.lobby.players]


async def test_a_game_keeps_a_bounded_memory_of_its_updates(redis: Redis) -> None:
    store = GameStore(redis)
    for update_id in range(1000, 1100):
        assert (await store.transact(CHAT, _adding(update_id), update_id=update_id)).changed
    # One key whatever the number of updates, and the marks stay small.
    assert await stored_keys(redis) == [SESSION.encode()]
    marks = await redis.hget(SESSION, "u")
    assert marks is not None and len(marks.split()) == 2 + REMEMBERED_UPDATES
    # Every one of them, re-delivered to any process, is ignored: the recent ones by name, the
    # older ones as below the floor.
    for update_id in (1000, 1050, 1083, 1084, 1099):
        again = await GameStore(redis).transact(CHAT, _adding(-update_id), update_id=update_id)
        assert again.duplicate, update_id
        assert (await store.transact(CHAT, _adding(-update_id), update_id=update_id)).duplicate
    assert await _players(store) == list(range(1000, 1100))


async def test_an_update_that_arrives_after_later_ones_is_applied(redis: Redis) -> None:
    """Telegram numbers the updates in order, but two processes (or two tasks) may finish them
    in another: an update that was overtaken is still new."""
    store = GameStore(redis)
    for update_id in (10, 12, 15):
        await store.transact(CHAT, _adding(update_id), update_id=update_id)
    for update_id in (14, 11):
        assert (
            await GameStore(redis).transact(CHAT, _adding(update_id), update_id=update_id)
        ).changed
    assert (await GameStore(redis).transact(CHAT, _adding(0), update_id=11)).duplicate
    assert await _players(store) == [10, 12, 15, 14, 11]


async def test_each_group_remembers_its_own_updates(redis: Redis) -> None:
    """One update may change two groups' sessions (a group that moves to a supergroup)."""
    store = GameStore(redis)
    assert (await store.transact(CHAT, replace_with(game_session()), update_id=5)).changed
    other = game_session(chat_id=CHAT - 1)
    assert (await store.transact(CHAT - 1, replace_with(other), update_id=5)).changed
