"""The Mini App in a real headless Chromium at phone sizes (360×740 and 390×844), light and
dark, in English and Arabic: pick and play, Cheat! and the reveal, last cards and the result, a
group member watching, Telegram's own buttons and haptics, a page closed mid-turn giving the
chat back, joining from the group's link without having started the bot, a hand of 50+ cards.
Each player is a browser context of their own with their own signed initData. Screenshots go
to ``artifacts/miniapp/`` (those in docs/ are copied from there).

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

from tests.bot.play import seated
from tests.bot.webhook import CONFIG, Served
from tests.engine.helpers import cards, state_with
from tests.support.fake_telegram import FakeTelegram
from tests.support.updates import UpdateFactory, User, group
from tests.webapp.support import init_data
from tgcheat.bot.app import CheatApplication, build_application
from tgcheat.engine.rules import Rules
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
LARGE_PHONE = {"width": 390, "height": 844}
THEME = {
    "bg_color": "#ffffff",
    "text_color": "#222222",
    "hint_color": "#8e8e93",
    "button_color": "#2ea6ff",
    "button_text_color": "#ffffff",
    "secondary_bg_color": "#eff1f4",
}
DARK = {
    "bg_color": "#17212b",
    "text_color": "#f5f5f5",
    "hint_color": "#708499",
    "button_color": "#5288c1",
    "button_text_color": "#ffffff",
    "secondary_bg_color": "#232e3c",
}
GROUP = -100555
ANN, BOB, CLEO = User(31, "Ann"), User(32, "Bob"), User(33, "Cleo")
DORA, FAY = User(34, "Dora"), User(35, "Fay")
#: Telegram's side of the page, as a client has it: every event the page posts is recorded in
#: ``window.__events``; the test answers with ``Telegram.WebView.receiveEvent``.
TELEGRAM_CLIENT = """
window.__events = [];
window.TelegramWebviewProxy = { postEvent(type, data) {
  window.__events.push([type, data ? JSON.parse(data) : null]);
  if (window.__answer) window.__answer(type, data || "");
} };
"""

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


def app_url(
    base: str,
    data: str,
    *,
    theme: dict[str, str] = THEME,
    place: int | None = GROUP,
    client: str = "",
) -> str:
    """The page as Telegram opens it; ``client``: the fragment's platform and version (a
    Telegram client with its own buttons), none for a plain browser."""
    fragment = f"tgWebAppData={quote(data)}&tgWebAppThemeParams={quote(orjson.dumps(theme))}"
    if client:
        fragment += f"&{client}"
    query = f"?p={place}" if place is not None else ""
    return f"{base}/app{query}#{fragment}"


async def open_app(
    browser: Any,
    url: str,
    viewport: dict[str, int] = PHONE,
    *,
    dark: bool = False,
    telegram: bool = False,
) -> Page:
    context = await browser.new_context(
        viewport=viewport, device_scale_factor=2, color_scheme="dark" if dark else "light"
    )
    if telegram:
        await context.add_init_script(TELEGRAM_CLIENT)
    page: Page = await context.new_page()
    await page.goto(url)
    return page


@asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    assert async_playwright is not None
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            await browser.close()


async def shot(page: Page, name: str) -> None:
    await page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def seated_users(state: Any) -> tuple[User, User]:
    users = {u.id: u for u in (ANN, BOB, CLEO)}
    return (
        users[state.players[state.turn].user_id],
        users[state.players[state.next_active(state.turn)].user_id],
    )


async def events(page: Page, kind: str) -> list[Any]:
    """What the page posted to Telegram of one kind, in order."""
    found: list[Any] = await page.evaluate(
        "(kind) => window.__events.filter((e) => e[0] === kind).map((e) => e[1])", kind
    )
    return found


async def test_pick_play_cheat_and_the_reveal_as_players_and_a_spectator_see_them(
    redis: Redis,
) -> None:
    async with live_server(redis) as (bot, base), chromium() as browser:
        await bot.open_game(GROUP, (ANN, BOB, CLEO))
        bot.fake.set_members(GROUP, [DORA.id])
        state = await bot.game(GROUP)
        player, other = seated_users(state)
        mine = await open_app(browser, app_url(base, init_data(player)))
        theirs = await open_app(browser, app_url(base, init_data(other)))
        dora = await open_app(browser, app_url(base, init_data(DORA)), telegram=True)
        for page in (mine, theirs):
            await page.wait_for_selector("#cards .stack")
        await dora.wait_for_selector("#seats li")

        # The hand stacked by rank: one stack a rank, its count on it, none wider than the
        # screen and each large enough for a thumb.
        hand = state.players[state.turn].hand
        stacks = mine.locator("#cards .stack")
        assert await stacks.count() == len({card.rank for card in hand})
        box = await stacks.first.bounding_box()
        assert box is not None and box["width"] >= 40 and box["height"] >= 56
        assert await mine.evaluate("document.documentElement.scrollWidth <= innerWidth")
        # A tap takes one more of a rank, a long press takes them all (up to what may be played).
        ranks = [card.rank for card in hand]
        many = max(set(ranks), key=ranks.count)
        stack = mine.locator(f'#cards .stack[data-rank="{many.code}"]')
        await stack.click()
        assert await stack.locator(".p").inner_text() == "1"
        await stack.click(delay=700)
        expected = min(ranks.count(many), 4)
        assert await stack.locator(".p").inner_text() == str(expected)
        assert await stack.evaluate("(b) => b.classList.contains('sel')")
        await shot(mine, "hand")
        if state.required is None:
            play = mine.locator("#claims button").first
        else:
            play = mine.locator("#controls button").first
        # The other player's page shows the claim within a second of the play.
        claimed = asyncio.ensure_future(
            theirs.wait_for_selector("#answers button.danger", timeout=10_000)
        )
        await play.click()
        started = time.monotonic()
        await claimed
        delay = time.monotonic() - started
        assert delay < 1.0, f"the claim reached the other Mini App in {delay:.2f} s"
        after = await bot.game(GROUP)
        assert after.plays == 1 and len(after.players[state.turn].hand) == len(hand) - expected
        claim = await theirs.locator("#claim").inner_text()
        assert player.first_name in claim
        assert await theirs.locator("#pile-count").inner_text() == str(len(after.pile))
        await shot(theirs, "table")
        await dora.wait_for_function("document.querySelector('#claim').textContent.length > 0")
        assert await dora.locator("#cards .stack").count() == 0
        assert await dora.locator("#answers button").count() == 0
        assert await dora.locator("#badge").is_visible()
        await shot(dora, "spectator")

        await theirs.locator("#answers button.danger").click()
        for page in (mine, theirs, dora):
            await page.locator("#reveal").wait_for(state="visible", timeout=10_000)
            await page.locator("#flip .mini").first.wait_for(state="visible")
            assert "Cheat" in await page.locator("#reveal").inner_text()
            assert await page.locator("#flip .mini").count() == expected
        # The reveal is felt as well as seen, by a spectator too (who has no turn): a haptic
        # notification, "error" for a lie caught and "success" for a true claim.
        felt = await events(dora, "web_app_trigger_haptic_feedback")
        assert [e["type"] for e in felt] == ["notification"], felt
        await theirs.wait_for_timeout(500)
        await shot(theirs, "reveal")
        resolved = await bot.game(GROUP)
        assert resolved.pile == () and resolved.open_claims == ()

        # Someone who forges the initData (another user's id, the signature kept) gets
        # nothing: the API answers 401 and the page shows the lock.
        forged = init_data(other).replace(f"%22id%22%3A{other.id}", "%22id%22%3A99")
        assert forged != init_data(other)
        eve = await open_app(browser, app_url(base, forged))
        await eve.wait_for_function("document.body.dataset.locked === '1'")
        assert await eve.locator("#cards .stack").count() == 0


async def test_telegram_buttons_haptics_and_a_page_closed_mid_turn(redis: Redis) -> None:
    client = "tgWebAppPlatform=android&tgWebAppVersion=8.0"
    async with live_server(redis) as (bot, base), chromium() as browser:
        await bot.open_game(GROUP, (ANN, BOB, CLEO))
        state = await bot.game(GROUP)
        player, other = seated_users(state)
        mine = await open_app(
            browser, app_url(base, init_data(player), client=client), LARGE_PHONE, telegram=True
        )
        theirs = await open_app(
            browser, app_url(base, init_data(other), client=client), LARGE_PHONE, telegram=True
        )
        for page in (mine, theirs):
            await page.wait_for_selector("#cards .stack")
        assert await events(mine, "web_app_request_fullscreen")
        # The chat's theme changes while the page is open (to dark): the page follows.
        await mine.evaluate(
            "(theme) => Telegram.WebView.receiveEvent('theme_changed', {theme_params: theme})",
            DARK,
        )
        background = await mine.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(23, 33, 43)"
        # Fullscreen on a phone: the page keeps clear of the status bar and of Telegram's own
        # controls over it (the safe area and the content safe area, added).
        assert await events(mine, "web_app_request_safe_area")
        await mine.evaluate(
            "Telegram.WebView.receiveEvent('safe_area_changed', {top: 40, bottom: 20})"
        )
        await mine.evaluate(
            "Telegram.WebView.receiveEvent('content_safe_area_changed', {top: 46, bottom: 0})"
        )
        padding = await mine.evaluate(
            "[getComputedStyle(document.querySelector('main')).paddingTop,"
            " getComputedStyle(document.querySelector('main')).paddingBottom]"
        )
        assert padding == ["94px", "36px"], padding
        # The player on turn: a haptic notification, and a confirmation before closing.
        assert {"type": "notification", "notification_type": "success"} in await events(
            mine, "web_app_trigger_haptic_feedback"
        )
        closing = await events(mine, "web_app_setup_closing_behavior")
        assert closing[-1] == {"need_confirmation": True}
        assert (await events(theirs, "web_app_setup_closing_behavior"))[-1] == {
            "need_confirmation": False
        }
        # Pick: no vertical swipe closes the page meanwhile.
        await mine.locator("#cards .stack").first.click()
        assert (await events(mine, "web_app_setup_swipe_behavior"))[-1] == {
            "allow_vertical_swipe": False
        }
        if state.required is not None:
            main = (await events(mine, "web_app_setup_main_button"))[-1]
            assert main["is_visible"] and "▶️" in main["text"]
            assert not await mine.locator("#controls button.native").is_visible()
            await mine.evaluate("Telegram.WebView.receiveEvent('main_button_pressed')")
        else:
            await mine.locator("#claims button").first.click()
        await theirs.wait_for_function(
            "window.__events.some((e) => e[0] === 'web_app_setup_secondary_button'"
            " && e[1].is_visible)"
        )
        secondary = (await events(theirs, "web_app_setup_secondary_button"))[-1]
        assert "Cheat" in secondary["text"]
        after = await bot.game(GROUP)
        assert after.plays == 1

        # Both pages visible: the player now on turn got no turn message in the chat.
        await theirs.wait_for_timeout(300)
        on_turn = after.players[after.turn].user_id
        assert on_turn == other.id
        before = len(bot.fake.calls)
        # Their page closes mid-turn: the chat takes over and announces the turn.
        await theirs.close(run_before_unload=False)
        for _ in range(50):
            sent = [
                c
                for c in bot.fake.calls[before:]
                if c.method == "sendMessage" and c.params.get("chat_id") == other.id
            ]
            if sent:
                break
            await asyncio.sleep(0.1)
        assert sent, "the turn was left unannounced after the page closed"


async def test_dark_theme_with_two_decks_and_fifty_cards(redis: Redis) -> None:
    rules = Rules(max_cards=0, decks=2, move_cap=0)
    state = state_with([(), cards("2♣", deck=1), cards("3♣", deck=1)], rules=rules, rest_to=0)
    state = seated(state, [ANN, BOB, CLEO])
    assert len(state.players[0].hand) >= 50
    async with live_server(redis) as (bot, base), chromium() as browser:
        await bot.install(state, GROUP, "big1")
        page = await open_app(
            browser, app_url(base, init_data(ANN), theme=DARK), LARGE_PHONE, dark=True
        )
        await page.wait_for_selector("#cards .stack")
        assert await page.locator("#cards .stack").count() == 13
        assert await page.evaluate("document.documentElement.scrollWidth <= innerWidth")
        for index in (0, 12):
            box = await page.locator("#cards .stack").nth(index).bounding_box()
            assert box is not None and box["width"] >= 44
        background = await page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(23, 33, 43)"
        await page.locator("#cards .stack").nth(3).click(delay=700)
        await shot(page, "dark")


async def test_arabic_reads_right_to_left_and_plays(redis: Redis) -> None:
    async with live_server(redis) as (bot, base), chromium() as browser:
        await bot.open_game(GROUP, (ANN, BOB, CLEO))
        state = await bot.game(GROUP)
        player, _ = seated_users(state)
        page = await open_app(browser, app_url(base, init_data(player, language="ar")))
        await page.wait_for_selector("#cards .stack")
        assert await page.evaluate("document.documentElement.dir") == "rtl"
        assert not any("a" <= ch <= "z" for ch in await page.locator("#prompt").inner_text())
        await page.locator("#cards .stack").first.click()
        await shot(page, "arabic")
        if state.required is None:
            await page.locator("#claims button").first.click()
        else:
            await page.locator("#controls button").first.click()
        await page.wait_for_function("document.querySelector('#cards .stack.sel') === null")
        assert (await bot.game(GROUP)).plays == 1


async def test_last_cards_and_the_result(redis: Redis) -> None:
    state = state_with([cards("A♠"), cards("2♣", "5♦"), cards("3♣", "9♥")], rest_to=2)
    state = seated(state, [ANN, BOB, CLEO])
    async with live_server(redis) as (bot, base), chromium() as browser:
        await bot.install(state, GROUP, "last1")
        ann = await open_app(browser, app_url(base, init_data(ANN)))
        bob = await open_app(browser, app_url(base, init_data(BOB)))
        for page in (ann, bob):
            await page.wait_for_selector("#cards .stack")
        await ann.locator("#cards .stack").first.click()
        await ann.locator("#controls button").first.click()
        await bob.wait_for_function("document.querySelector('#claim.final') !== null")
        await shot(bob, "last-cards")
        for page, user in ((bob, BOB), (ann, ANN)):
            if user is ANN:
                continue
            believe = page.locator("#answers button.alt").first
            await believe.click()
        cleo = await open_app(browser, app_url(base, init_data(CLEO)))
        await cleo.wait_for_selector("#answers button")
        await cleo.locator("#answers button.alt").first.click()
        await ann.wait_for_function("document.querySelector('#seats li.won') !== null")
        assert "🏆" in await ann.locator("#seats li.won").inner_text()
        assert (await bot.game(GROUP)).phase.value == "finished"
        await shot(ann, "result")


async def test_joining_from_the_group_link_without_having_started_the_bot(redis: Redis) -> None:
    client = "tgWebAppPlatform=ios&tgWebAppVersion=8.0"
    async with live_server(redis) as (bot, base), chromium() as browser:
        table = group(GROUP, "Table")
        assert await bot.post(bot.updates.command(table, ANN, "/new")) == 200
        bot.fake.set_members(GROUP, [FAY.id])
        assert FAY.id not in bot.fake.started_users
        # Opened from the group's button: the place rides in the start parameter.
        data = init_data(FAY, start_param=str(GROUP))
        page = await open_app(
            browser, app_url(base, data, place=None, client=client), telegram=True
        )
        join = page.locator("#answers button")
        await join.wait_for()

        async def allow(source: Any, kind: str, _: str) -> None:
            if kind == "web_app_request_write_access":
                # The person allows it: the bot may write to them from now on.
                bot.fake.started_users.add(FAY.id)
                await page.evaluate(
                    "Telegram.WebView.receiveEvent('write_access_requested', {status: 'allowed'})"
                )

        await page.expose_binding("__answer", allow)
        await join.click()
        await page.wait_for_function("document.querySelectorAll('#lobby-names li').length === 1")
        session, _ = await bot.store.load(GROUP)
        assert session is not None and session.lobby is not None and session.lobby.has(FAY.id)
        assert any(
            c.method == "sendMessage" and c.params.get("chat_id") == FAY.id for c in bot.fake.calls
        ), "the joined player was not told in private"


async def test_the_profile_page_shares_a_prepared_card(redis: Redis) -> None:
    """The Mini App's profile page (/profile's 👤 Open profile) shows the person's figures; its
    📣 Share has the server prepare a card (savePreparedInlineMessage) and hands its id to
    Telegram as shareMessage does (the web_app_send_prepared_message event)."""
    async with live_server(redis) as (bot, base), chromium() as browser:
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
        url = app_url(base, init_data(ANN), place=None).replace("/app#", "/app?v=profile#")
        page = await open_app(browser, url, telegram=True)
        await page.wait_for_selector("#seats.profile li")
        assert await page.locator("#head").inner_text() == "👤 Ann"
        figures = await page.locator("#seats").inner_text()
        assert "📈 Rating: " in figures and "Achievements: 1 of 27" in figures
        await shot(page, "profile")
        await page.locator("#status button").click()
        await page.wait_for_function(
            "window.__events.some((e) => e[0] === 'web_app_send_prepared_message')"
        )
        (shared,) = await events(page, "web_app_send_prepared_message")
        assert shared["id"] in bot.fake.prepared_messages


async def test_a_quick_game_from_the_home_opens_once_dealt(redis: Redis) -> None:
    """The page of someone in no game offers ⚡ Quick game; tapped, it shows the wait with 🚪
    Stop waiting, and opens the game by itself once the queue fills a table."""
    others = tuple(User(61 + i, f"Q{i}") for i in range(3))
    async with live_server(redis) as (bot, base), chromium() as browser:
        for person in (ANN, *others):
            bot.fake.started_users.add(person.id)
        page = await open_app(browser, app_url(base, init_data(ANN), place=None))
        join = page.locator("#home-actions button")
        await join.wait_for()
        assert await join.inner_text() == "⚡ Quick game"
        await join.click()
        await page.wait_for_function(
            "document.getElementById('home-text').textContent.includes('Looking for players')"
        )
        assert await page.locator("#home-actions button").inner_text() == "🚪 Stop waiting"
        await shot(page, "quick-waiting")
        for person in others:
            response = await bot.client.post(
                "/app/api/quick",
                json={"join": True},
                headers={"Authorization": f"tma {init_data(person)}"},
            )
            assert response.status_code == 200
        await page.wait_for_selector("#seats li:nth-child(4)")
        await page.wait_for_selector("#hand .stack")
        assert await page.locator("#home").is_hidden()
        await shot(page, "quick-game")
