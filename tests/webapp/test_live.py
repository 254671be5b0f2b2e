"""The Mini App's live updates behind real web servers (uvicorn on a port): many streams on one
process, and a change made through one process delivered to a stream open on another, on one
Redis server and on a Redis Cluster."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest
import redis.asyncio as aioredis
from redis.asyncio import Redis

from tests.support.fake_telegram import FakeTelegram
from tests.support.updates import User
from tests.webapp.support import act, auth, init_data
from tests.webapp.test_browser import live_server
from tgcheat.redis_connection import CLIENT_OPTIONS
from tgcheat.webapp import api
from tgcheat.webapp.streams import OpenStreams

GROUP = -100321
ANN, BOB, CLEO = User(61, "Ann"), User(62, "Bob"), User(63, "Cleo")
PLAYERS = (ANN, BOB, CLEO)
#: The bound on a change's delivery to an open Mini App (the issue's "within a second").
DELIVERY_S = 1.0


class Stream:
    """An open Mini App's event stream: the states it received, in order."""

    def __init__(self) -> None:
        self.states: list[dict[str, Any]] = []
        self.changed = asyncio.Condition()
        #: Why the stream ended, once it has (an open stream never ends by itself).
        self.ended: str | None = None

    async def read(self, client: httpx.AsyncClient, user: User, place: int | str) -> None:
        try:
            async with client.stream(
                "GET", "/app/api/events", params={"place": str(place)},
                headers=auth(init_data(user)), timeout=None,
            ) as response:  # fmt: skip
                if response.status_code != 200:
                    await self._end(f"answered {response.status_code}")
                    return
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        async with self.changed:
                            self.states.append(orjson.loads(line[6:]))
                            self.changed.notify_all()
            await self._end("closed by the server")
        except httpx.HTTPError as error:
            await self._end(repr(error))

    async def _end(self, why: str) -> None:
        async with self.changed:
            self.ended = why
            self.changed.notify_all()

    async def reaches(self, version: int) -> dict[str, Any]:
        def seen() -> bool:
            return self.ended is not None or any(s["v"] >= version for s in self.states)

        async with self.changed:
            await self.changed.wait_for(seen)
        assert self.ended is None, f"the stream ended: {self.ended}"
        return next(s for s in self.states if s["v"] >= version)


@contextlib.asynccontextmanager
async def streams(base: str, users: list[User], place: int) -> AsyncIterator[list[Stream]]:
    """One open stream per user, each past its first state."""
    opened = [Stream() for _ in users]
    limits = httpx.Limits(max_connections=len(users) + 5)
    async with httpx.AsyncClient(base_url=base, limits=limits) as client:
        tasks = [
            asyncio.create_task(stream.read(client, user, place))
            for stream, user in zip(opened, users, strict=True)
        ]
        try:
            for stream in opened:
                await stream.reaches(0)
            yield opened
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


async def play_two(bot: Any, client: httpx.AsyncClient) -> int:
    """The player whose turn it is plays two cards through the Mini App's API of ``client``'s
    process; the version the change was stored at."""
    state = await bot.game(GROUP)
    seat = state.turn
    player = next(u for u in PLAYERS if u.id == state.players[seat].user_id)
    cards: dict[str, int] = {}
    for card in state.players[seat].hand[:2]:
        cards[card.rank.code] = cards.get(card.rank.code, 0) + 1
    session, _ = await bot.store.load(GROUP)
    response = await act(
        client,
        player,
        {"place": str(GROUP), "game": session.game_id, "op": "play", "plays": state.plays,
         "cards": cards, "rank": state.required.code if state.required else "7"},
    )  # fmt: skip
    assert response.status_code == 200, response.text
    _, version = await bot.store.read(GROUP)
    return int(version)


async def test_more_streams_than_the_pool_has_connections_all_receive_a_change(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """60 streams on a process whose Redis pool holds 40 connections: opening them and waking
    them all at once takes no more connections than the pool has. (Three players hold them
    all: the limit of streams per person is lifted for it.)"""
    monkeypatch.setattr(api, "OpenStreams", functools.partial(OpenStreams, per_person=60))
    small_pool = aioredis.from_url(redis_url, **CLIENT_OPTIONS, max_connections=40)
    await small_pool.flushdb()
    try:
        async with live_server(small_pool) as (bot, base):
            await bot.open_game(GROUP, PLAYERS)
            users = [PLAYERS[i % 3] for i in range(60)]
            async with streams(base, users, GROUP) as opened:
                version = await play_two(bot, bot.client)
                async with asyncio.timeout(DELIVERY_S * 5):
                    for stream in opened:
                        assert (await stream.reaches(version))["v"] == version
    finally:
        await small_pool.aclose()


@pytest.mark.on_cluster
async def test_a_change_through_one_process_reaches_a_stream_open_on_another(
    redis: Redis, redis_kind: str, request: pytest.FixtureRequest
) -> None:
    if redis_kind == "cluster":
        url = request.getfixturevalue("redis_cluster_url")
        second: Redis = aioredis.RedisCluster.from_url(url, **CLIENT_OPTIONS)  # type: ignore[assignment]
    else:
        second = aioredis.from_url(request.getfixturevalue("redis_url"), **CLIENT_OPTIONS)
    telegram = FakeTelegram()
    try:
        async with (
            live_server(redis, fake=telegram) as (process_a, _),
            live_server(second, fake=telegram) as (_, base_b),
        ):
            await process_a.open_game(GROUP, PLAYERS)
            async with streams(base_b, [ANN, BOB], GROUP) as opened:
                for _ in range(2):
                    version = await play_two(process_a, process_a.client)
                    async with asyncio.timeout(DELIVERY_S):
                        for stream in opened:
                            shown = await stream.reaches(version)
                            assert shown["v"] == version and shown["plays"] >= 1
    finally:
        await second.aclose()


async def test_a_stream_opened_without_a_game_named_follows_the_players_game(
    redis: Redis,
) -> None:
    """The menu button's page: its stream finds the player's game and shows its changes."""
    async with live_server(redis) as (bot, base):
        await bot.open_game(GROUP, PLAYERS)
        async with streams(base, [ANN, User(99, "Eve")], "") as (player, outsider):
            assert player.states[0]["place"] == str(GROUP) and player.states[0]["hand"]
            assert "seats" not in outsider.states[0] and outsider.states[0]["refused"]
            version = await play_two(bot, bot.client)
            async with asyncio.timeout(DELIVERY_S):
                assert (await player.reaches(version))["plays"] == 1
