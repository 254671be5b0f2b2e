"""The Mini App's benchmarks: Bot API requests per play when every player plays in the Mini
App (their pages reported visible, as an open page does) against the same plays with the pages
not visible (the chat shows every hand and turn, the baseline); and 200 open Mini Apps on one
web process receiving every change (delivery delay, memory).

    python benchmarks/miniapp_bench.py [--plays 30] [--clients 200] [--pace 1.0]

It starts a throwaway Redis, runs the web app (`tgcheat serve`'s) on a local port with the
Bot API stand-in of the tests, and prints the figures docs/benchmarks.md quotes."""

from __future__ import annotations

import argparse
import asyncio
import collections
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import _paths  # noqa: F401  (the repository root on sys.path)
import httpx
import orjson
from redis.asyncio import Redis

from tests.bot.play import has_op
from tests.support.redis_server import throwaway_redis_server
from tests.support.updates import User
from tests.webapp.support import auth, init_data
from tests.webapp.test_browser import live_server
from tgcheat.bot.callbacks import Op
from tgcheat.redis_connection import CLIENT_OPTIONS
from tgcheat.store.watching import REPORT_EVERY_MS

#: The web process's memory budget: a small PaaS instance (Heroku's Basic/Standard-1X dyno, a
#: 512 MB Render or Fly machine).
BUDGET_MB = 512
PLAYERS = (User(41, "Ann"), User(42, "Bob"), User(43, "Cleo"))
#: Members of the group who watch the game in the Mini App: one stream each (a person may
#: hold only a few at once, see tgcheat.webapp.streams).
WATCHERS = tuple(User(500 + i, f"Watcher {i}") for i in range(200))


def by_id(user_id: int) -> User:
    return next(u for u in PLAYERS if u.id == user_id)


async def keyboard_plays(bot: Any, chat: int, plays: int) -> collections.Counter[str]:
    """Each play: pick two cards (one press each) and press Play, through the webhook."""
    await bot.open_game(chat, PLAYERS)
    before = len(bot.fake.calls)
    for _ in range(plays):
        state = await bot.game(chat)
        seat = state.turn
        user = by_id(state.players[seat].user_id)
        for card in state.players[seat].hand[:2]:
            await bot.post(bot.updates.press(bot.fake, user, user.id, has_op(Op.PICK, card.rank)))
        if state.required is None:
            press = bot.updates.press(bot.fake, user, user.id, has_op(Op.PLAY))
        else:
            press = bot.updates.press(bot.fake, user, user.id, has_op(Op.PLAY, state.required))
        await bot.post(press)
    return collections.Counter(c.method for c in bot.fake.calls[before:])


async def app_play(bot: Any, chat: int, request: str) -> None:
    state = await bot.game(chat)
    seat = state.turn
    user = by_id(state.players[seat].user_id)
    counts = collections.Counter(card.rank.code for card in state.players[seat].hand[:2])
    session, _ = await bot.store.load(chat)
    body = {
        "place": str(chat), "game": session.game_id, "op": "play", "plays": state.plays,
        "cards": dict(counts), "rank": (state.required.code if state.required else "7"),
        "request": request,
    }  # fmt: skip
    response = await bot.client.post("/app/api/act", json=body, headers=auth(init_data(user)))
    assert response.status_code == 200, response.text


async def report_seen(bot: Any, chat: int, user: User, visible: bool) -> None:
    """What an open page says of itself (tgcheat.store.watching)."""
    response = await bot.client.post(
        "/app/api/seen", json={"place": str(chat), "visible": visible},
        headers=auth(init_data(user)),
    )  # fmt: skip
    assert response.status_code == 204, response.text


async def app_cheat(bot: Any, chat: int, request: str) -> None:
    """The player on turn calls Cheat! on the last claim."""
    state = await bot.game(chat)
    user = by_id(state.players[state.turn].user_id)
    session, _ = await bot.store.load(chat)
    body = {
        "place": str(chat), "game": session.game_id, "op": "cheat",
        "claim": state.open_claims[-1].number, "request": request,
    }  # fmt: skip
    response = await bot.client.post("/app/api/act", json=body, headers=auth(init_data(user)))
    assert response.status_code == 200, response.text


async def mini_app_plays(
    bot: Any,
    chat: int,
    plays: int,
    *,
    visible: bool,
    pace_s: float = 0.0,
    cheat_every: int = 0,
) -> collections.Counter[str]:
    """``plays`` plays through the Mini App's API, one every ``pace_s``; ``visible``: every
    player's page reports itself visible, as often as a page does; ``cheat_every``: after
    every so many plays, the next player calls Cheat! (0: never)."""
    await bot.open_game(chat, PLAYERS)
    reported = -1e9
    before = len(bot.fake.calls)
    for number in range(plays):
        if visible and time.monotonic() - reported > REPORT_EVERY_MS / 1000:
            reported = time.monotonic()
            for user in PLAYERS:
                await report_seen(bot, chat, user, True)
        await app_play(bot, chat, f"bench-{chat}-{number:06d}")
        if cheat_every and (number + 1) % cheat_every == 0:
            await app_cheat(bot, chat, f"cheat-{chat}-{number:06d}")
        await asyncio.sleep(pace_s)
    counted = collections.Counter(c.method for c in bot.fake.calls[before:])
    if visible:
        # The pages close (the chats take over now, not in a later run's count).
        for user in PLAYERS:
            await report_seen(bot, chat, user, False)
    return counted


def rss_mb() -> float:
    """This process's resident memory now (MB)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def listen_all(base: str, chat: int, clients: int) -> None:
    """The open Mini Apps, in a process of their own (so that the server's memory is its own):
    prints "ready" once each has its first state, and at end of input what each received
    (version: time.monotonic(), the clock every process of the machine shares)."""
    received: list[dict[int, float]] = [{} for _ in range(clients)]
    ready = asyncio.Semaphore(0)
    limits = httpx.Limits(max_connections=clients + 10)

    async def listen(index: int, client: httpx.AsyncClient) -> None:
        user = (PLAYERS + WATCHERS)[index]
        first = True
        try:
            async with client.stream(
                "GET", "/app/api/events", params={"place": str(chat)},
                headers=auth(init_data(user)), timeout=None,
            ) as response:  # fmt: skip
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        received[index][orjson.loads(line[6:])["v"]] = time.monotonic()
                        if first:
                            first = False
                            ready.release()
        finally:
            if first:
                # A stream that ended before its first state is counted as missing all.
                ready.release()

    async with httpx.AsyncClient(base_url=base, limits=limits) as client:
        tasks = [asyncio.create_task(listen(i, client)) for i in range(clients)]
        for _ in range(clients):
            await ready.acquire()
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    print(orjson.dumps(received, option=orjson.OPT_NON_STR_KEYS).decode(), flush=True)


async def listeners(bot: Any, base: str, chat: int, clients: int, plays: int) -> dict[str, float]:
    await bot.open_game(chat, PLAYERS)
    bot.fake.set_members(chat, [user.id for user in WATCHERS])
    rss_before = rss_mb()
    child = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--listen", base, str(chat), str(clients),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert child.stdin is not None and child.stdout is not None
    assert (await child.stdout.readline()).strip() == b"ready"
    rss_open = rss_mb()
    sent: dict[int, float] = {}
    for number in range(plays):
        started = time.monotonic()
        await app_play(bot, chat, f"load-{chat}-{number:06d}")
        _, version = await bot.store.read(chat)
        sent[version] = started
        # One play at a time, as people play: the next once the streams had time to show it.
        await asyncio.sleep(0.2)
    rss_with = rss_mb()
    child.stdin.close()
    received = orjson.loads(await child.stdout.read())
    await child.wait()
    delays = sorted(
        (got[str(v)] - t) * 1000 for got in received for v, t in sent.items() if str(v) in got
    )
    return {
        "p50": statistics.median(delays),
        "p99": delays[max(int(len(delays) * 0.99) - 1, 0)],
        "missed": plays * clients - len(delays),
        "rss_before": rss_before,
        "rss_open": rss_open,
        "rss_with": rss_with,
    }


async def main(plays: int, clients: int, pace_s: float, cheat_every: int) -> None:
    with throwaway_redis_server() as url:
        redis = Redis.from_url(url, **CLIENT_OPTIONS)
        async with live_server(redis, per_minute=1_000_000) as (bot, base):
            hidden = await mini_app_plays(bot, -100901, plays, visible=False)
            shown = await mini_app_plays(bot, -100902, plays, visible=True, pace_s=pace_s)
            runs = [
                ("Mini App, pages not visible (the chat shows hands and turns)", hidden),
                (f"Mini App, every player's page visible, a play every {pace_s:g} s", shown),
            ]
            if cheat_every:
                calls = await mini_app_plays(
                    bot, -100904, plays, visible=True, pace_s=pace_s, cheat_every=cheat_every
                )
                runs.append(
                    (f"... the same with Cheat! called after every {cheat_every} plays", calls)
                )
            for name, calls in runs:
                total = sum(calls.values())
                detail = ", ".join(f"{m} {n / plays:.2f}" for m, n in sorted(calls.items()))
                print(f"{name}: {total / plays:.2f} Bot API requests per play ({detail})")
            for count in (20, clients):
                load = await listeners(bot, base, -100903 - count, count, 15)
                print(
                    f"{count} open Mini Apps, 15 plays: delivery delay p50 {load['p50']:.1f} ms, "
                    f"p99 {load['p99']:.1f} ms, missed {load['missed']:.0f}; web process RSS "
                    f"{load['rss_before']:.0f} MB before, {load['rss_open']:.0f} MB with them "
                    f"open, {load['rss_with']:.0f} MB after the plays (budget {BUDGET_MB} MB)"
                )
        await redis.aclose()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--listen"]:
        asyncio.run(listen_all(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
        sys.exit()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--plays", type=int, default=20)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--pace", type=float, default=1.0, help="seconds between plays")
    parser.add_argument(
        "--cheat-every", type=int, default=4, help="Cheat! called after every N plays (0: never)"
    )
    args = parser.parse_args()
    asyncio.run(main(args.plays, args.clients, args.pace, args.cheat_every))
