"""Sessions against a real Redis (tgcheat.store.sessions): compare-and-set, de-duplication of
updates, and the round trips the process's hint saves."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from redis.asyncio import Redis

from tests.store.helpers import CHAT, game_session, replace_with
from tests.store.roundtrips import counting_round_trips
from tgcheat.engine.lobby import Lobby
from tgcheat.engine.rules import Rules
from tgcheat.store.games import SESSION_TTL_S, UPDATE_TTL_S, GameStore, Outcome
from tgcheat.table.session import MessageIds, Session


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
    ttl = await redis.ttl(f"tgc:chat:{CHAT}")
    assert 0 < ttl <= SESSION_TTL_S
    assert 0 < await redis.ttl("tgc:upd:42") <= UPDATE_TTL_S


async def test_returning_the_same_session_writes_nothing(redis: Redis) -> None:
    store = GameStore(redis)
    outcome = await store.transact(CHAT, lambda s: (s, "nothing"), update_id=7)
    assert outcome.outcome is Outcome.UNCHANGED and outcome.version == 0
    # A refused change does not mark the update as handled: a re-delivery is tried again.
    assert await redis.exists("tgc:upd:7") == 0


async def test_concurrent_changes_are_serialised_by_compare_and_set(redis: Redis) -> None:
    store = GameStore(redis)
    await store.transact(CHAT, lambda s: (Session(CHAT, "g1", 1, lobby=Lobby(1, Rules())), None))
    # Fifty clients add one player each at the same moment; every addition must survive.
    clients = [Redis.from_pool(redis.connection_pool) for _ in range(5)]

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
    assert int(await redis.hget(f"tgc:chat:{CHAT}", "v") or 0) == 51


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
    """The compare-and-set, then the new hand's message id: this process made the last change,
    so its hint saves the read."""
    store = GameStore(redis)
    session = game_session()
    await store.transact(CHAT, replace_with(session), update_id=1)
    await store.messages.add(CHAT, MessageIds(table=5, hands={1000: 6}))
    with counting_round_trips(monkeypatch) as trips:
        played = dataclasses.replace(session, title="played")
        committed = await store.transact(CHAT, replace_with(played), update_id=2)
        assert committed.changed and committed.messages == MessageIds(5, {1000: 6})
        assert trips.take() == 1
        await store.messages.add(CHAT, MessageIds(hands={1001: 7}))
        assert trips.take() == 1
        # The hint follows the id just kept: the next change still reads nothing.
        again = await store.transact(CHAT, replace_with(session), update_id=3)
        assert again.messages == MessageIds(5, {1000: 6, 1001: 7})
        assert trips.take() == 1
        # Without the hint (another process), the read comes first.
        await GameStore(redis).transact(CHAT, replace_with(played), update_id=4)
        assert trips.take() == 2
