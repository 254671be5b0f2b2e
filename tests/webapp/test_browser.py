"""The Mini App in a real headless Chromium at a phone's size (360×740): two players in two
browser contexts, each with their own signed initData; one selects two cards and plays, the
other sees the claim within a second and calls Cheat!, both see the reveal; a forged initData
is refused. Screenshots of the hand and the table go to ``artifacts/miniapp/``.

Needs Playwright for Python (the test extra) and a Chromium (Debian's ``chromium``; CI installs
it, see .ci/run): without either the test is skipped, saying which is missing."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import orjson
import pytest
import uvicorn
from redis.asyncio import Redis

from tests.bot.webhook import CONFIG, Served
from tests.support.fake_telegram import FakeTelegram
from tests.support.updates import UpdateFactory, User
from tests.webapp.support import init_data
from tgcheat.bot.app import CheatApplication, build_application
from tgcheat.store.games import GROUP_MESSAGES_PER_MINUTE, GameStore
from tgcheat.table.stats import GameRecord, Line, Outcome, Row
from tgcheat.web import create_web_app

CHROMIUM = os.environ.get("TGCHEAT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "miniapp"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PHONE = {"width": 360, "height": 740}
THEME = {
    "bg_color": "#ffffff",
    "text_color": "#222222",
    "hint_color": "#8e8e93",
    "button_color": "#2ea6ff",
    "button_text_color": "#ffffff",
    "secondary_bg_color": "#eff1f4",
}
GROUP = -100555
ANN, BOB, CLEO = User(31, "Ann"), User(32, "Bob"), User(33, "Cleo")

try:
    from playwright.async_api import Page, async_playwright
except ImportError:  # pragma: no cover - depends on the machine
    async_playwright = None  # type: ignore[assignment]

pytestmark = [
    pytest.mark.skipif(
        async_playwright is None,
        reason="Playwright for Python is not installed (pip install -e '.[test]')",
    ),
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(),
        reason=f"no Chromium at {CHROMIUM} (apt-get install chromium, or set TGCHEAT_CHROMIUM)",
    ),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def live_server(
    redis: Redis,
    per_minute: int = GROUP_MESSAGES_PER_MINUTE,
    fake: FakeTelegram | None = None,
) -> AsyncIterator[tuple[Served, str]]:
    """The web process (`tgcheat serve`'s app) on a real port; Telegram is FakeTelegram (one
    given is shared, as the processes of one bot share Telegram)."""
    fake = fake or FakeTelegram()
    application = build_application(
        CONFIG, redis, request=fake, group_messages_per_minute=per_minute, send_rate=0
    )
    assert isinstance(application, CheatApplication)
    web = create_web_app(application, redis, CONFIG)
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(web, host="127.0.0.1", port=port, lifespan="on", log_level="warning")
    )
    task = asyncio.create_task(server.serve())
    while not server.started:
        assert not task.done(), "the server did not start"
        await asyncio.sleep(0.01)
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=base) as client:
            served = Served(client, application, fake, UpdateFactory(fake), GameStore(redis), web)
            yield served, base
    finally:
        server.should_exit = True
        await task


def app_url(base: str, data: str) -> str:
    fragment = f"tgWebAppData={quote(data)}&tgWebAppThemeParams={quote(orjson.dumps(THEME))}"
    return f"{base}/app?p={GROUP}#{fragment}"


async def open_app(browser: Any, url: str) -> Page:
    context = await browser.new_context(viewport=PHONE, device_scale_factor=2)
    page: Page = await context.new_page()
    await page.goto(url)
    return page


async def test_two_players_play_and_call_cheat_in_the_mini_app(redis: Redis) -> None:
    assert async_playwright is not None
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    async with live_server(redis) as (bot, base), async_playwright() as pw:
        await bot.open_game(GROUP, (ANN, BOB, CLEO))
        state = await bot.game(GROUP)
        users = {u.id: u for u in (ANN, BOB, CLEO)}
        player = users[state.players[state.turn].user_id]
        other = users[state.players[state.next_active(state.turn)].user_id]
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            mine = await open_app(browser, app_url(base, init_data(player)))
            theirs = await open_app(browser, app_url(base, init_data(other)))
            for page in (mine, theirs):
                await page.wait_for_selector("#cards .card")
            await mine.screenshot(path=str(ARTIFACTS / "hand.png"))

            cards = mine.locator("#cards .card")
            await cards.nth(0).click()
            await cards.nth(1).click()
            assert await mine.locator("#cards .card.sel").count() == 2
            if state.required is None:
                play = mine.locator("#claims button").first
            else:
                play = mine.locator("#controls button").first
            await mine.screenshot(path=str(ARTIFACTS / "hand-selected.png"))
            # The other player's Mini App shows the claim within a second of the play.
            claimed = theirs.wait_for_selector("#answers button.danger", timeout=10_000)
            watch = asyncio.ensure_future(claimed)
            await play.click()
            started = time.monotonic()
            await watch
            delay = time.monotonic() - started
            assert delay < 1.0, f"the claim reached the other Mini App in {delay:.2f} s"
            after = await bot.game(GROUP)
            assert after.plays == 1 and len(after.players[state.turn].hand) == (
                len(state.players[state.turn].hand) - 2
            )
            await theirs.screenshot(path=str(ARTIFACTS / "table.png"))

            await theirs.locator("#answers button.danger").click()
            for page in (mine, theirs):
                reveal = page.locator("#reveal")
                await reveal.wait_for(state="visible", timeout=10_000)
                assert "Cheat" in await reveal.inner_text()
            await theirs.screenshot(path=str(ARTIFACTS / "reveal.png"))
            resolved = await bot.game(GROUP)
            assert resolved.pile == () and resolved.open_claims == ()

            # Someone who forges the initData (another user's id, the signature kept) gets
            # nothing: the API answers 401 and the page shows the lock.
            forged = init_data(other).replace(f"%22id%22%3A{other.id}", "%22id%22%3A99")
            assert forged != init_data(other)
            eve = await open_app(browser, app_url(base, forged))
            await eve.wait_for_function("document.body.dataset.locked === '1'")
            assert await eve.locator("#cards .card").count() == 0
        finally:
            await browser.close()


async def test_the_profile_page_shares_a_prepared_card(redis: Redis) -> None:
    """The Mini App's profile page (/profile's 👤 Open profile) shows the person's figures; its
    📣 Share has the server prepare a card (savePreparedInlineMessage) and hands its id to
    Telegram as shareMessage does (the web_app_send_prepared_message event)."""
    assert async_playwright is not None
    async with live_server(redis) as (bot, base), async_playwright() as pw:
        lines = tuple(
            Line(
                user.id,
                user.first_name,
                Row(games=1, wins=int(place == 1), plays=3),
                Outcome.WON if place == 1 else Outcome.LOST,
                place,
                ("g1",),
            )
            for place, user in enumerate((ANN, BOB, CLEO), start=1)
        )
        ended = int(time.time() * 1000)
        await bot.store.stats.count(GameRecord(f"{GROUP}:p1", GROUP, True, False, lines, ended))
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            context = await browser.new_context(viewport=PHONE, device_scale_factor=2)
            # Telegram's side of the events the page posts (as the app's WebView offers it).
            await context.add_init_script(
                "window.sent = []; window.TelegramWebviewProxy = "
                "{ postEvent(type, data) { window.sent.push([type, data]); } };"
            )
            page = await context.new_page()
            fragment = f"tgWebAppData={quote(init_data(ANN))}"
            await page.goto(f"{base}/app?v=profile#{fragment}")
            await page.wait_for_selector("#seats.profile li")
            assert await page.locator("#head").inner_text() == "👤 Ann"
            figures = await page.locator("#seats").inner_text()
            assert "📈 Rating: " in figures and "Achievements: 1 of 27" in figures
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            await page.screenshot(path=str(ARTIFACTS / "profile.png"))
            await page.locator("#status button").click()
            await page.wait_for_function(
                "window.sent.some(([type]) => type === 'web_app_send_prepared_message')"
            )
            sent = await page.evaluate("window.sent")
            (shared,) = [orjson.loads(data) for kind, data in sent if kind.endswith("message")]
            assert shared["id"] in bot.fake.prepared_messages
        finally:
            await browser.close()
