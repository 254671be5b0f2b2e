"""`GET /metrics`: the figures an operator watches, read as Prometheus reads them.

The bot runs behind its webhook (``served``) with METRICS_TOKEN set, and is fed real update
JSON: a lobby, a deal, plays, a call of Cheat!, a stale press, a group in a flood wait, a game
stopped. Each scrape is parsed with prometheus-client's own parser; the figures must have
Prometheus's names and types, move as the game is played, and name no chat or person.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

import httpx
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample
from redis.asyncio import Redis

from tests.bot.play import has_op
from tests.bot.webhook import CONFIG, Served, served
from tests.support.updates import User, group
from tgcheat.bot.callbacks import Op
from tgcheat.metrics_http import MetricsEndpoint, metrics_app
from tgcheat.store.keys import Keys

GROUP = -1001000000777
PLAYERS = (User(7001, "Ann"), User(7002, "Bob"), User(7003, "Cy"))
TOKEN = "metrics-token_for_the_tests"
METRICS_CONFIG = dataclasses.replace(CONFIG, metrics_token=TOKEN)

#: Every figure /metrics serves, and its Prometheus type.
EXPECTED_TYPES = {
    "tgcheat_updates": "counter",
    "tgcheat_refusals": "counter",
    "tgcheat_bot_api_requests": "counter",
    "tgcheat_bot_api_floods": "counter",
    "tgcheat_send_budget_refusals": "counter",
    "tgcheat_delivery_lag_seconds": "histogram",
    "tgcheat_redis_round_trip_seconds": "histogram",
    "tgcheat_miniapp_streams_open": "gauge",
    "tgcheat_places_in_progress": "gauge",
}
#: The values each label may take: bounded sets (a Bot API method: a word).
LABEL_VALUES = {
    "kind": re.compile(r"press|command|message|membership|other"),
    "outcome": re.compile(r"ok|refused|failed"),
    "reason": re.compile(r"[a-z_]+"),
    "method": re.compile(r"[A-Za-z]+"),
    "result": re.compile(r"ok|flood|refused|error|network|webhook_reply"),
    "chat_kind": re.compile(r"group|private"),
    "priority": re.compile(r"must|table|later"),
    "stage": re.compile(r"lobby|game"),
    "le": re.compile(r"[0-9.e+-]+|\+Inf"),
}


class Scrape:
    def __init__(self, text: str) -> None:
        self.text = text
        self.families = {f.name: f for f in text_string_to_metric_families(text)}

    def samples(self) -> Iterable[Sample]:
        for family in self.families.values():
            yield from family.samples

    def value(self, name: str, **labels: str) -> float:
        """A sample's value (0 when it is not there yet: a counter never incremented)."""
        for sample in self.samples():
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
        return 0.0

    def total(self, name: str, **labels: str) -> float:
        """The sum of the samples of ``name`` whose labels include ``labels``."""
        return sum(
            s.value
            for s in self.samples()
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
        )


async def scrape(bot: Served, token: str | None = TOKEN) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return await bot.client.get("/metrics", headers=headers)


async def figures(bot: Served) -> Scrape:
    # Every scrape counts the places anew (in production, at most every 10 s).
    bot.web.state.metrics.census_every_s = 0
    response = await scrape(bot)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return Scrape(response.text)


async def test_metrics_need_the_token(redis: Redis) -> None:
    async with served(redis, config=METRICS_CONFIG) as bot:
        assert (await scrape(bot, token=None)).status_code == 401
        assert (await scrape(bot, token="metrics-token_for_the_testz")).status_code == 401
        refused = await bot.client.get("/metrics", headers={"Authorization": TOKEN})
        assert refused.status_code == 401
        assert (await scrape(bot)).status_code == 200


async def test_without_a_token_there_is_no_metrics_route(redis: Redis) -> None:
    async with served(redis) as bot:
        assert (await bot.client.get("/metrics")).status_code == 404


async def test_the_metrics_port_serves_them_with_or_without_a_token(redis: Redis) -> None:
    """METRICS_PORT's app: open on a private network without a token, behind it with one."""
    for token, status in ((None, 200), (TOKEN, 401)):
        endpoint = MetricsEndpoint(redis, Keys(), token, census_every_s=0)
        transport = httpx.ASGITransport(app=metrics_app(endpoint))
        async with httpx.AsyncClient(transport=transport, base_url="http://m") as client:
            assert (await client.get("/metrics")).status_code == status
            assert (await client.get("/healthz")).status_code == 404


async def test_names_types_and_values_that_move_as_a_game_is_played(redis: Redis) -> None:
    async with served(redis, config=METRICS_CONFIG) as bot:
        before = await figures(bot)
        assert {name: f.type for name, f in before.families.items()} == EXPECTED_TYPES

        # A lobby: counted in Redis, the same figure for every process.
        table = group(GROUP, "Metrics table")
        assert await bot.post(bot.updates.command(table, PLAYERS[0], "/new")) == 200
        in_lobby = await figures(bot)
        assert in_lobby.value("tgcheat_places_in_progress", stage="lobby") == (
            before.value("tgcheat_places_in_progress", stage="lobby") + 1
        )

        for user in PLAYERS:
            bot.fake.note_member(GROUP, user.id)
            assert await bot.post(bot.updates.start_private(user, f"j{GROUP}")) == 200
        start = bot.updates.press(bot.fake, PLAYERS[0], GROUP, has_op(Op.START))
        assert await bot.post(start) == 200
        for _ in range(3):
            assert await bot.play_one(GROUP, PLAYERS) == [200, 200]
        # Cheat! on the last claim, then the same button pressed again: stale, refused.
        state = await bot.game(GROUP)
        caller = next(u for u in PLAYERS if u.id == state.players[state.turn].user_id)
        cheat = bot.updates.press(bot.fake, caller, GROUP, has_op(Op.CHALLENGE))
        assert await bot.post(cheat) == 200
        again = dict(cheat, update_id=cheat["update_id"] + 10_000)
        assert await bot.post(again) == 200
        # The group in a flood wait: a play's requests there meet Telegram's 429.
        bot.fake.flood(GROUP, 3600)
        assert await bot.play_one(GROUP, PLAYERS) == [200, 200]

        playing = await figures(bot)
        assert playing.value("tgcheat_places_in_progress", stage="game") == (
            before.value("tgcheat_places_in_progress", stage="game") + 1
        )
        assert playing.value("tgcheat_places_in_progress", stage="lobby") == before.value(
            "tgcheat_places_in_progress", stage="lobby"
        )

        def moved(name: str, by: float = 1, **labels: str) -> None:
            grown = playing.total(name, **labels) - before.total(name, **labels)
            assert grown >= by, f"{name} {labels}: {grown}"

        moved("tgcheat_updates_total", kind="command", outcome="ok")
        moved("tgcheat_updates_total", 3 * 2 + 2, kind="press", outcome="ok")
        moved("tgcheat_updates_total", kind="press", outcome="refused")
        moved("tgcheat_refusals_total", reason="no_such_claim")
        moved("tgcheat_bot_api_requests_total", 3, method="sendMessage", result="ok")
        moved("tgcheat_bot_api_requests_total", method="editMessageText", result="ok")
        moved("tgcheat_bot_api_requests_total", result="flood")
        moved("tgcheat_bot_api_requests_total", result="webhook_reply")
        moved("tgcheat_bot_api_floods_total", chat_kind="group")
        moved("tgcheat_redis_round_trip_seconds_count", 20)
        moved("tgcheat_delivery_lag_seconds_count", 3)
        assert playing.total("tgcheat_delivery_lag_seconds_sum") >= before.total(
            "tgcheat_delivery_lag_seconds_sum"
        )

        # The game stopped: no longer in progress.
        stop = bot.updates.command(table, PLAYERS[0], "/stop")
        assert await bot.post(stop) == 200
        stopped = await figures(bot)
        assert stopped.value("tgcheat_places_in_progress", stage="game") == before.value(
            "tgcheat_places_in_progress", stage="game"
        )

        # No chat, person or message id anywhere: every label takes a value of its bounded set.
        for sample in stopped.samples():
            for label, value in sample.labels.items():
                assert label in LABEL_VALUES, f"{sample.name}: unexpected label {label}"
                assert LABEL_VALUES[label].fullmatch(value), f"{sample.name}: {label}={value!r}"
        ids = [str(GROUP), str(-GROUP), *(str(u.id) for u in PLAYERS)]
        assert not [i for i in ids if i in stopped.text]


async def test_a_budget_refusal_is_counted_by_priority(redis: Redis) -> None:
    """With a send budget of 1 message a second, lobbies opened in five groups at once
    outrun it: what it holds back is counted by its priority."""
    async with served(redis, config=METRICS_CONFIG, send_rate=1) as bot:
        before = await figures(bot)
        for n in range(5):
            table = group(GROUP - n, f"Table {n}")
            assert await bot.post(bot.updates.command(table, PLAYERS[0], "/new")) == 200
        after = await figures(bot)
        refused = {
            priority: after.total("tgcheat_send_budget_refusals_total", priority=priority)
            - before.total("tgcheat_send_budget_refusals_total", priority=priority)
            for priority in ("must", "table", "later")
        }
        assert sum(refused.values()) >= 1, refused
