"""The lobbies and games in progress, counted in Redis for the metrics (tgcheat.store.census),
on a single server and on a Redis Cluster (the places are spread over every shard)."""

from __future__ import annotations

import dataclasses

from redis.asyncio import Redis

from tests.store.helpers import CHAT, game_session, replace_with
from tgcheat.engine.lobby import Lobby
from tgcheat.engine.rules import PRESETS
from tgcheat.engine.state import Phase
from tgcheat.store.census import Census, census
from tgcheat.store.games import GameStore
from tgcheat.store.keys import Keys


async def test_lobbies_and_games_on_the_clock_are_counted(redis: Redis) -> None:
    store = GameStore(redis)
    assert await census(redis, Keys()) == Census(0, 0)
    game = dataclasses.replace(game_session(), deadline_ms=5_000)
    lobby = dataclasses.replace(
        game_session(), game=None, lobby=Lobby(1000, PRESETS["cheat"]), deadline_ms=6_000
    )
    # Chats of several shards (a chat's shard is its id modulo 64).
    for n in range(5):
        await store.transact(CHAT - n, replace_with(dataclasses.replace(game, chat_id=CHAT - n)))
    for n in range(3):
        chat = CHAT - 100 - n
        await store.transact(chat, replace_with(dataclasses.replace(lobby, chat_id=chat)))
    # A finished game, and a game without a deadline (turn timer off): not counted.
    assert game.game is not None
    finished = dataclasses.replace(
        game, chat_id=CHAT - 200, game=dataclasses.replace(game.game, phase=Phase.FINISHED)
    )
    await store.transact(CHAT - 200, replace_with(finished))
    untimed = dataclasses.replace(game, chat_id=CHAT - 201, deadline_ms=0)
    await store.transact(CHAT - 201, replace_with(untimed))
    assert await census(redis, Keys()) == Census(lobbies=3, games=5)
    # At most ``limit`` places are read: past it the figures are a floor.
    limited = await census(redis, Keys(), limit=2)
    assert limited.lobbies + limited.games <= 2
