"""The game store against a real Redis: round trips, compare-and-set, de-duplication."""

from __future__ import annotations

import asyncio
import dataclasses
import random

import pytest
from redis.asyncio import Redis

from tests.engine.helpers import random_action
from tgcheat.engine.game import new_game, random_seating
from tgcheat.engine.lobby import Lobby
from tgcheat.engine.rules import PRESETS, Rules
from tgcheat.engine.state import Phase
from tgcheat.store.codec import decode, encode
from tgcheat.store.games import SESSION_TTL_S, GameStore
from tgcheat.table.session import Session

CHAT = -100123


def _game_session(players: int = 6, seed: int = 1) -> Session:
    rng = random.Random(seed)
    names = [(1000 + i, f"Player number {i}") for i in range(players)]
    state, _ = new_game(PRESETS["cheat"], random_seating(names, rng), rng)
    return Session(chat_id=CHAT, game_id="abc123", creator=1000, game=state, title="Friday cards")


def test_a_session_survives_encoding_at_every_step_of_a_game() -> None:
    rng = random.Random(5)
    session = _game_session()
    assert session.game is not None
    state = session.game
    from tgcheat.engine.game import apply

    while state.phase is not Phase.FINISHED:
        state, _ = apply(state, random_action(state, rng))
        again = decode(encode(dataclasses.replace(session, game=state)))
        assert again.game == state
    lobby = Session(CHAT, "zz9", 5, lobby=Lobby(5, Rules(max_cards=0), ((5, "Ann <&>"),)))
    assert decode(encode(lobby)) == lobby


def test_a_six_player_game_is_small() -> None:
    assert len(encode(_game_session(6))) <= 4096


async def test_transact_writes_once_and_ignores_a_repeated_update(redis: Redis) -> None:
    store = GameStore(redis)
    session = _game_session()
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


async def test_returning_the_same_session_writes_nothing(redis: Redis) -> None:
    store = GameStore(redis)
    outcome = await store.transact(CHAT, lambda s: (s, "nothing"), update_id=7)
    assert not outcome.changed and outcome.version == 0
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


async def test_message_ids_are_kept_per_chat_with_its_session(redis: Redis) -> None:
    store = GameStore(redis)
    # No session, nothing to show: an id sent as a session went away is not kept.
    await store.set_messages(CHAT, {"table": 4})
    assert await redis.exists(f"tgc:chat:{CHAT}") == 0
    session = _game_session()
    await store.transact(CHAT, lambda current: (session, None))
    await store.set_messages(CHAT, {"table": 5, "hand:1": 9})
    await store.set_message(CHAT, "hand:2", 11)
    loaded, messages = await GameStore(redis).load(CHAT)
    assert loaded == session
    assert messages == {"table": 5, "hand:1": 9, "hand:2": 11}
    # A change of the game keeps them, and they expire with it.
    await store.transact(CHAT, lambda current: (dataclasses.replace(session, title="New"), None))
    _, messages = await GameStore(redis).load(CHAT)
    assert messages == {"table": 5, "hand:1": 9, "hand:2": 11}
    assert 0 < await redis.ttl(f"tgc:chat:{CHAT}") <= SESSION_TTL_S
    await store.clear_messages(CHAT, keep=("table",))
    loaded, messages = await GameStore(redis).load(CHAT)
    assert messages == {"table": 5}
    assert loaded is not None and loaded.title == "New"


@pytest.mark.parametrize("players", [3, 6])
def test_rules_keep_only_what_differs_from_the_defaults(players: int) -> None:
    session = _game_session(players)
    assert b'"r":{}' in encode(session)


async def test_a_busy_groups_table_waits_seconds_not_minutes(redis: Redis) -> None:
    """The budget (20 a minute, bursts of 4) defers table edits of a fast group, but its debt
    has a floor: however fast the group played, the table is shown again within seconds."""
    import time

    store = GameStore(redis, group_messages_per_minute=20)
    session = _game_session()
    outcomes = []
    for i in range(40):
        replaced = dataclasses.replace(session, title=f"t{i}")
        committed = await store.transact(
            CHAT, lambda s, new=replaced: (new, 2), group_messages=lambda cost: cost
        )
        outcomes.append(committed.table_deferred)
    assert outcomes[:2] == [False, False] and all(outcomes[4:])
    due = await redis.zscore("tgc:deferred-tables", CHAT)
    assert due is not None
    assert due - time.time() * 1000 < 20_000
    # When it is due, one token is there for the one edit that shows the latest state.
    assert await store.take_group_budget(CHAT, int(due) + 1)
    assert await redis.zscore("tgc:deferred-tables", CHAT) is None
