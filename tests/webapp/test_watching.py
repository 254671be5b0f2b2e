"""The Mini App as the table: a page that is visible spares its player's private chat (no hand
edits, no turn message), a page hidden mid-turn gives the chat back with the turn announced,
and a group member who does not play watches the table without ever receiving a hand or a card
not turned over, over HTTP or the stream."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import orjson
from redis.asyncio import Redis

from tests.bot.webhook import served
from tests.support.updates import User
from tests.webapp.support import act, auth, get_state, init_data
from tests.webapp.test_browser import live_server

GROUP = -100778
ANN, BOB, CLEO = User(51, "Ann"), User(52, "Bob"), User(53, "Cleo")
PLAYERS = (ANN, BOB, CLEO)
DORA, EVE = User(54, "Dora"), User(55, "Eve")


def by_id(user_id: int) -> User:
    return next(u for u in PLAYERS if u.id == user_id)


async def seen(bot: Any, user: User, visible: bool, *, in_body: bool = False) -> int:
    body: dict[str, Any] = {"place": str(GROUP), "visible": visible}
    headers = auth(init_data(user))
    if in_body:
        # A closing page's beacon: no header, the initData in the body.
        body["init"], headers = init_data(user), {}
    response = await bot.client.post("/app/api/seen", json=body, headers=headers)
    return response.status_code


async def play_two(bot: Any) -> User:
    """The player on turn plays two cards from the Mini App; who played."""
    state = await bot.game(GROUP)
    user = by_id(state.players[state.turn].user_id)
    cards = state.players[state.turn].hand[:2]
    counts: dict[str, int] = {}
    for card in cards:
        counts[card.rank.code] = counts.get(card.rank.code, 0) + 1
    session, _ = await bot.store.load(GROUP)
    body = {
        "place": str(GROUP), "game": session.game_id, "op": "play", "plays": state.plays,
        "cards": counts, "rank": state.required.code if state.required else "7",
    }  # fmt: skip
    response = await act(bot.client, user, body)
    assert response.status_code == 200, response.text
    return user


def private_calls(bot: Any, since: int, user: User) -> list[Any]:
    return [c for c in bot.fake.calls[since:] if c.params.get("chat_id") == user.id]


async def test_visible_pages_spare_the_chats_and_a_hidden_page_gets_its_turn_message(
    redis: Redis,
) -> None:
    async with served(redis) as bot:
        await bot.open_game(GROUP, PLAYERS)
        for user in PLAYERS:
            assert await seen(bot, user, True) == 204
        before = len(bot.fake.calls)
        await play_two(bot)
        await play_two(bot)
        calls = bot.fake.calls[before:]
        assert [c.method for c in calls] == ["editMessageText", "editMessageText"], [
            (c.method, c.params.get("chat_id")) for c in calls
        ]
        assert all(c.params["chat_id"] == GROUP for c in calls)

        # The player on turn closes the page mid-turn: the turn's message arrives at once.
        state = await bot.game(GROUP)
        on_turn = by_id(state.players[state.turn].user_id)
        before = len(bot.fake.calls)
        assert await seen(bot, on_turn, False, in_body=True) == 204
        sent = [c for c in private_calls(bot, before, on_turn) if c.method == "sendMessage"]
        assert sent, "the turn was left unannounced after the page closed"
        assert not sent[-1].params.get("disable_notification")


async def test_a_report_that_runs_out_gives_the_chat_back_through_the_clock(
    redis: Redis,
) -> None:
    async with served(redis) as bot:
        await bot.open_game(GROUP, PLAYERS)
        for user in PLAYERS:
            assert await seen(bot, user, True) == 204
        await play_two(bot)
        state = await bot.game(GROUP)
        on_turn = by_id(state.players[state.turn].user_id)
        shown = bot.app.routes.shell.store.shown
        due = await shown.due(bot.app.routes.shell.clock() + 60_000)
        assert any(place.chat_id == GROUP for place in due), "no sync waits for the report"
        # The page is gone without a word: the report runs out and the clock syncs the place.
        await redis.delete(bot.store.keys.watching(GROUP))
        before = len(bot.fake.calls)
        await bot.app.timers.sync_due(bot.app.routes.shell.clock() + 60_000)
        assert any(c.method == "sendMessage" for c in private_calls(bot, before, on_turn))


async def test_only_seated_players_leave_a_report(redis: Redis) -> None:
    async with served(redis) as bot:
        await bot.open_game(GROUP, PLAYERS)
        assert await seen(bot, EVE, True) == 204
        assert not await redis.exists(bot.store.keys.watching(GROUP))
        bad = await bot.client.post(
            "/app/api/seen", json={"place": str(GROUP), "visible": True, "init": "x"}
        )
        assert bad.status_code == 401


def _card_ids(payload: Any) -> set[int]:
    """Every card id a payload carries anywhere (a hand's, a reveal's)."""
    found: set[int] = set()
    if isinstance(payload, dict):
        if {"id", "rank", "suit"} <= payload.keys():
            found.add(payload["id"])
        for value in payload.values():
            found |= _card_ids(value)
    elif isinstance(payload, list):
        for value in payload:
            found |= _card_ids(value)
    return found


async def stream_states(bot: Any, user: User, count: int) -> list[Any]:
    states: list[Any] = []
    async with bot.client.stream(
        "GET", "/app/api/events", params={"place": str(GROUP)}, headers=auth(init_data(user))
    ) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                states.append(orjson.loads(line[6:]))
                if len(states) >= count:
                    break
    return states


async def test_a_spectator_sees_the_table_and_never_a_hand_or_a_hidden_card(
    redis: Redis,
) -> None:
    async with live_server(redis) as (bot, _):
        await bot.open_game(GROUP, PLAYERS)
        bot.fake.set_members(GROUP, [DORA.id])
        watched = await get_state(bot.client, DORA, GROUP)
        assert watched["seats"] and watched["watching"] and "hand" not in watched
        outsider = await get_state(bot.client, EVE, GROUP)
        assert "seats" not in outsider and outsider["refused"]

        stream = asyncio.ensure_future(stream_states(bot, DORA, 4))
        await asyncio.sleep(0.3)
        await play_two(bot)
        state = await bot.game(GROUP)
        caller = by_id(state.players[state.turn].user_id)
        claim = state.open_claims[-1].number
        turned_over = {int(card) for card in state.open_claims[-1].cards}
        response = await act(bot.client, caller, {
            "place": str(GROUP), "game": watched["game"], "op": "cheat", "claim": claim,
        })  # fmt: skip
        assert response.status_code == 200, response.text
        await play_two(bot)
        states = await asyncio.wait_for(stream, 10)
        revealed: set[int] = set()
        for payload in states:
            assert "hand" not in payload and "answers" not in payload and "play" not in payload
            for reveal in payload.get("reveals", ()):
                revealed |= _card_ids(reveal)
        # The reveal shows the challenged cards, and no response any other card.
        assert revealed == turned_over
        for payload in [watched, *states]:
            assert _card_ids(payload) <= turned_over
            assert not re.search(r'"hand', orjson.dumps(payload).decode())


async def test_the_lobby_and_the_table_open_the_game_in_the_mini_app(redis: Redis) -> None:
    async with served(redis) as bot:
        await bot.open_game(GROUP, PLAYERS)
        link = f"?startapp={GROUP}"
        lobby_and_table = [
            orjson.dumps(c.params.get("reply_markup")).decode()
            for c in bot.fake.calls
            if c.params.get("chat_id") == GROUP and c.method in ("sendMessage", "editMessageText")
        ]
        with_link = [markup for markup in lobby_and_table if link in markup]
        assert len(with_link) >= 2, lobby_and_table
        # A hand in private is not the table: it keeps its own web_app button.
        hands = [c for c in bot.fake.calls if c.params.get("chat_id") == ANN.id]
        assert hands and all(link not in orjson.dumps(c.params).decode() for c in hands)
