"""What one request, or one person, may cost the web process: a body's size and the time it
takes to arrive (over real HTTP, on a real port), the live streams held open, the request ids
kept in Redis; and what an outsider learns of a game (nothing), and that no answer carrying a
hand is stored by a browser or proxy."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator

import httpx
import orjson
import pytest
from redis.asyncio import Redis

from tests.bot.webhook import SECRET, Served, served
from tests.support.updates import User
from tests.webapp.support import act, auth, init_data
from tests.webapp.test_browser import live_server
from tgcheat.store.changes import AppRequests
from tgcheat.store.keys import Keys
from tgcheat.web import MAX_UPDATE_BYTES, SECRET_HEADER
from tgcheat.webapp.api import MAX_ACTION_BYTES

GROUP = -100778
OTHER_GROUP = -100779
ANN, BOB, CLEO = User(31, "Ann"), User(32, "Bob"), User(33, "Cleo")
PLAYERS = (ANN, BOB, CLEO)
EVE = User(99, "Eve")
#: How long a test waits for the server's answer at most (never how long it should take).
WAIT_S = 20


async def _exchange(port: int, head: str, body: bytes = b"") -> tuple[int, bytes]:
    """Send a request's head (and the start of its body) on a raw connection, then read the
    answer's status line: the body may be left unsent."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head.encode() + b"\r\n" + body)
        await writer.drain()
        async with asyncio.timeout(WAIT_S):
            status = await reader.readline()
            rest = await reader.read(4096)
    finally:
        writer.close()
    return int(status.split()[1]), rest


def _head(path: str, *extra: str) -> str:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    return "\r\n".join([*lines, *extra]) + "\r\n"


@pytest.fixture
async def server(redis: Redis) -> AsyncIterator[tuple[Served, int]]:
    await redis.flushdb()
    async with live_server(redis) as (bot, base):
        yield bot, int(base.rsplit(":", 1)[1])


async def test_a_body_declared_too_large_is_refused_before_it_is_sent(
    server: tuple[Served, int],
) -> None:
    _, port = server
    tma = f"Authorization: tma {init_data(ANN)}"
    status, _ = await _exchange(port, _head("/app/api/act", tma, "Content-Length: 100000000"))
    assert status == 413
    secret = f"{SECRET_HEADER}: {SECRET}"
    too_large = f"Content-Length: {MAX_UPDATE_BYTES + 1}"
    status, _ = await _exchange(port, _head("/telegram", secret, too_large))
    assert status == 413


async def test_a_streamed_body_is_cut_off_once_it_passes_the_limit(
    server: tuple[Served, int],
) -> None:
    _, port = server
    tma = f"Authorization: tma {init_data(ANN)}"
    chunk = b"x" * 4096
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(5))
    # 20 KB of a body that would go on for ever: the answer comes without its end.
    status, _ = await _exchange(
        port, _head("/app/api/act", tma, "Transfer-Encoding: chunked"), chunks
    )
    assert status == 413
    assert 5 * len(chunk) > MAX_ACTION_BYTES


async def test_a_body_that_does_not_arrive_is_dropped(server: tuple[Served, int]) -> None:
    bot, port = server
    bot.web.state.mini_app.body_timeout_s = 0.2
    bot.web.state.webhook = dataclasses.replace(bot.web.state.webhook, body_timeout_s=0.2)
    tma = f"Authorization: tma {init_data(ANN)}"
    status, _ = await _exchange(port, _head("/app/api/act", tma, "Content-Length: 1000"), b"{")
    assert status == 408
    secret = f"{SECRET_HEADER}: {SECRET}"
    status, _ = await _exchange(port, _head("/telegram", secret, "Content-Length: 1000"), b"{")
    assert status == 408


async def test_a_person_holds_a_few_streams_and_the_process_a_bounded_number(
    server: tuple[Served, int],
) -> None:
    bot, port = server
    await bot.open_game(GROUP, PLAYERS)
    streams = bot.web.state.mini_app.streams
    base = f"http://127.0.0.1:{port}"
    limits = httpx.Limits(max_connections=20)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=WAIT_S) as client:

        async def open_stream(user: User) -> httpx.Response:
            request = client.build_request(
                "GET",
                "/app/api/events",
                params={"place": str(GROUP)},
                headers=auth(init_data(user)),
            )
            response = await client.send(request, stream=True)
            return response

        first = await open_stream(ANN)
        lines = first.aiter_lines()
        assert (await anext(lines)).startswith("data: ")
        others = [await open_stream(ANN) for _ in range(streams.per_person)]
        # The oldest of Ann's was closed by the server: its stream ends.
        async with asyncio.timeout(WAIT_S):
            async for _ in lines:
                pass
        assert streams.of(ANN.id) == streams.per_person
        streams.per_process = streams.count
        refused = await open_stream(BOB)
        assert refused.status_code == 503
        assert refused.headers["retry-after"].isdigit()
        for response in [first, refused, *others]:
            await response.aclose()
    # Every stream whose client went away is counted no more.
    async with asyncio.timeout(WAIT_S):
        while streams.count:
            await asyncio.sleep(0.01)


async def test_only_carried_out_requests_are_remembered_and_no_more_than_a_few(
    redis: Redis,
) -> None:
    await redis.flushdb()
    async with served(redis) as bot:
        await bot.open_game(GROUP, PLAYERS)
        session, _ = await bot.store.load(GROUP)
        assert session is not None
        refused = {"place": str(GROUP), "game": session.game_id, "op": "cheat", "claim": 7}
        for _ in range(50):
            response = await act(bot.client, EVE, refused)
            assert response.status_code == 409
        bad = await act(bot.client, EVE, {"place": str(GROUP), "op": "nonsense", "game": "x"})
        assert bad.status_code == 400
        keys = [key async for key in redis.scan_iter(match="*app*")]
        assert keys == [], "refused requests left keys"
    requests = AppRequests(redis, Keys())
    last = 3 * AppRequests.KEPT - 1
    for number in range(last + 1):
        await requests.remember(ANN.id, "signature", f"request-{number}", 1_000.0 + number, 3600)
    assert await redis.zcard(Keys().app_requests(ANN.id)) == AppRequests.KEPT
    now = 1_000.0 + last
    assert await requests.carried_out(ANN.id, "signature", f"request-{last}", now)
    assert not await requests.carried_out(ANN.id, "signature", "request-0", now)


async def test_an_outsider_learns_nothing_of_a_game(redis: Redis) -> None:
    await redis.flushdb()
    async with served(redis) as bot:
        await bot.open_game(GROUP, PLAYERS)

        async def state_of(place: int) -> httpx.Response:
            return await bot.client.get(
                "/app/api/state", params={"place": str(place)}, headers=auth(init_data(EVE))
            )

        with_game, without_game = await state_of(GROUP), await state_of(OTHER_GROUP)
        assert with_game.json() == without_game.json()
        assert with_game.json()["v"] == 0 and "seats" not in with_game.json()


async def test_no_answer_that_may_carry_a_hand_is_stored(server: tuple[Served, int]) -> None:
    bot, _ = server
    await bot.open_game(GROUP, PLAYERS)
    state = await bot.client.get(
        "/app/api/state", params={"place": str(GROUP)}, headers=auth(init_data(ANN))
    )
    assert state.status_code == 200 and state.headers["cache-control"] == "no-store"
    session, _ = await bot.store.load(GROUP)
    assert session is not None
    acted = await act(
        bot.client, ANN, {"place": str(GROUP), "game": session.game_id, "op": "cheat", "claim": 7}
    )
    assert acted.headers["cache-control"] == "no-store"
    async with bot.client.stream(
        "GET", "/app/api/events", params={"place": str(GROUP)}, headers=auth(init_data(ANN))
    ) as events:
        assert events.headers["cache-control"] == "no-store"
        first = await anext(events.aiter_lines())
        assert orjson.loads(first.removeprefix("data: "))["hand"]


async def test_the_page_its_script_and_style_weigh_well_under_100_kb(redis: Redis) -> None:
    """The whole page, as the browser fetches it (benchmarks/miniapp_page_bench.py measures it
    in Chromium with the live stream's first state, and its first paint)."""
    async with served(redis) as bot:
        sizes = {}
        for path in ("/app", "/app/static/app.js", "/app/static/app.css"):
            response = await bot.client.get(path)
            assert response.status_code == 200
            sizes[path] = len(response.content)
        assert sum(sizes.values()) < 60 * 1024, sizes
