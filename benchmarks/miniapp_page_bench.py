"""The Mini App's page: bytes transferred and time to first paint, from the local server, in a
real headless Chromium at a phone's size (Debian's chromium, Playwright).

    python benchmarks/miniapp_page_bench.py [--runs 5]

Each run opens the page in a fresh browser context (nothing cached) on a game in progress and
prints what the browser counted: the bytes transferred for the page, its script and its style
and the first state of the live stream (encoded sizes as sent), the first paint and the first
contentful paint, and the moment the player's hand is drawn. The baseline, in the same run, is
a page of one line of text from the same server: what the browser and the server take anyway."""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from typing import Any

import _paths  # noqa: F401  (the repository root on sys.path)
from redis.asyncio import Redis
from starlette.responses import HTMLResponse
from starlette.routing import Route

from tests.support.redis_server import throwaway_redis_server
from tests.support.updates import User
from tests.webapp.support import init_data
from tests.webapp.test_browser import CHROMIUM, CHROMIUM_FLAGS, PHONE, app_url, live_server
from tgcheat.redis_connection import CLIENT_OPTIONS

GROUP = -100555
PLAYERS = (User(31, "Ann"), User(32, "Bob"), User(33, "Cleo"))
#: What the page may weigh in all, and how soon it must paint.
BUDGET_BYTES = 100 * 1024
BUDGET_PAINT_MS = 1000.0


async def one_run(browser: Any, url: str, ready: str) -> dict[str, float]:
    context = await browser.new_context(viewport=PHONE, device_scale_factor=2)
    page = await context.new_page()
    session = await context.new_cdp_session(page)
    await session.send("Network.enable")
    transferred: dict[str, float] = {}

    def finished(event: dict[str, Any]) -> None:
        transferred[event["requestId"]] = event["encodedDataLength"]

    def received(event: dict[str, Any]) -> None:
        # The live stream never finishes loading: its bytes so far are counted as they come.
        transferred[event["requestId"]] = transferred.get(event["requestId"], 0) + event.get(
            "encodedDataLength", 0
        )

    session.on("Network.loadingFinished", finished)
    session.on("Network.dataReceived", received)
    await page.goto(url)
    await page.wait_for_selector(ready)
    drawn = await page.evaluate("performance.now()")
    paints = await page.evaluate(
        "Object.fromEntries(performance.getEntriesByType('paint')"
        ".map((e) => [e.name, e.startTime]))"
    )
    await context.close()
    return {
        "bytes": sum(transferred.values()),
        "first-paint": paints.get("first-paint", float("nan")),
        "first-contentful-paint": paints.get("first-contentful-paint", float("nan")),
        "drawn": drawn,
    }


def summary(name: str, runs: list[dict[str, float]]) -> str:
    def median(key: str) -> float:
        return statistics.median(run[key] for run in runs)

    return (
        f"{name}: {median('bytes') / 1024:.1f} KB transferred, first paint "
        f"{median('first-paint'):.0f} ms, first contentful paint "
        f"{median('first-contentful-paint'):.0f} ms, content drawn {median('drawn'):.0f} ms "
        f"(median of {len(runs)} runs)"
    )


async def main(runs: int) -> int:
    from playwright.async_api import async_playwright

    with throwaway_redis_server() as url:
        redis = Redis.from_url(url, **CLIENT_OPTIONS)
        async with live_server(redis) as (bot, base), async_playwright() as pw:
            bot.web.router.routes.append(
                Route("/baseline", lambda _: HTMLResponse("<!doctype html><p>Cheat</p>"))
            )
            await bot.open_game(GROUP, PLAYERS)
            state = await bot.game(GROUP)
            user = next(u for u in PLAYERS if u.id == state.players[state.turn].user_id)
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            try:
                baseline = [await one_run(browser, f"{base}/baseline", "p") for _ in range(runs)]
                page = [
                    await one_run(browser, app_url(base, init_data(user)), "#cards .stack")
                    for _ in range(runs)
                ]
            finally:
                await browser.close()
        await redis.aclose()
    print(summary("baseline (one line of text)", baseline))
    print(summary("Mini App (page, script, style, first state)", page))
    heaviest = max(run["bytes"] for run in page)
    slowest = max(run["first-contentful-paint"] for run in page)
    print(
        f"budget: {BUDGET_BYTES // 1024} KB and {BUDGET_PAINT_MS:.0f} ms; heaviest run "
        f"{heaviest / 1024:.1f} KB, slowest first contentful paint {slowest:.0f} ms"
    )
    return 0 if heaviest < BUDGET_BYTES and slowest < BUDGET_PAINT_MS else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    sys.exit(asyncio.run(main(parser.parse_args().runs)))
