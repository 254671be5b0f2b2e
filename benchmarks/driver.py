"""Computer players that play Cheat through the webhook, the way people's taps would.

Each tap is one HTTP POST of real update JSON (built with ``tests.support.updates``) to a
benchmark server (``serve_bench.py``): /new in the group, /start with the Join deep link's
payload in each player's private chat, Start on the lobby, then per turn a pick press per card
and a Play press on the player's hand message, and Cheat! / I believe you presses on the group's
table. Who taps what is decided by ``tgcheat.engine.autoplay.next_action`` (each player's move
by ``tgcheat.engine.ai.choose_action``) on the game state read from Redis with
``GameStore.load`` after each tap (the driver's reads go through its own Redis client, so the
server's Redis counters do not see them). Callback queries carry the message their button is
on, with its text and keyboard, as Telegram sends them; the driver renders it with
``tgcheat.bot.views`` from the same state.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import _paths  # noqa: F401 - the repository root on sys.path, for tests.support
import httpx

from tests.support.fake_telegram import BOT_ID, DEFAULT_BOT_USERNAME
from tests.support.updates import UpdateFactory, User, group, private
from tgcheat.bot import views
from tgcheat.bot.callbacks import ClaimPress, HandPress, Op, TablePress
from tgcheat.bot.delivery.shown_codec import decode_shown
from tgcheat.bot.delivery.sync import message_ids
from tgcheat.engine.actions import Accept, Action, Challenge, Play
from tgcheat.engine.autoplay import next_action
from tgcheat.engine.state import GameState, Phase
from tgcheat.i18n import translator
from tgcheat.store.games import GameStore
from tgcheat.table.place import Place
from tgcheat.table.session import MessageIds, Session

SECRET = "bench-secret"
WEBHOOK_PATH = "/telegram"
KIND_HEADER = "x-bench-kind"
#: A game without a move cap could go on; the cheat preset ends by 300 moves at the latest.
MAX_STEPS = 3000
#: Taps in a row that changed nothing before a game is given up (it should not happen).
MAX_STALLS = 3
PLAYER_NAMES = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank")
FIRST_GROUP_ID = -1002000000000
FIRST_USER_ID = 100_000_000

BOT_SENDER = {
    "id": BOT_ID,
    "is_bot": True,
    "first_name": "tgcheat",
    "username": DEFAULT_BOT_USERNAME,
}
TR = translator("en")


class Stop(Exception):
    """The measuring window is over: no new request is sent."""


class Broken(Exception):
    """The game did not go as a game goes (the bot refused or lost it): given up."""


@dataclass
class Sample:
    kind: str
    start: float
    end: float
    status: int


@dataclass
class Outcome:
    """What the driver saw of one game."""

    finished: bool = False
    broken: str = ""
    taps: Counter[str] = field(default_factory=Counter)
    plays: int = 0
    challenges: int = 0


class RawConnection:
    """One keep-alive HTTP/1.1 connection that POSTs and reads the answer: the least a client
    can do, so that the driver's cost stays far below the server's."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, headers: dict[str, str], body: bytes) -> int:
        head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        request = (
            f"POST {path} HTTP/1.1\r\nhost: {self.host}\r\n{head}"
            f"content-length: {len(body)}\r\n\r\n"
        ).encode() + body
        for attempt in range(2):
            try:
                return await asyncio.wait_for(self._exchange(request), 60.0)
            except (OSError, asyncio.IncompleteReadError, ValueError, TimeoutError):
                await self.close()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    async def _exchange(self, request: bytes) -> int:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        self.writer.write(request)
        status = await self.reader.readline()
        if not status:
            raise ConnectionResetError("closed by the server")
        code = int(status.split()[1])
        length = 0
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if length:
            await self.reader.readexactly(length)
        return code

    async def close(self) -> None:
        writer, self.reader, self.writer = self.writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()


class HttpxConnection:
    """An httpx.AsyncClient of one connection. One client per connection, because one client
    shared by many concurrent requests spends far more time in its connection pool than the
    request costs (encode/httpx#3215)."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        self.client = httpx.AsyncClient(limits=limits, timeout=60.0)

    async def post(self, path: str, headers: dict[str, str], body: bytes) -> int:
        answer = await self.client.post(self.base_url + path, content=body, headers=headers)
        return answer.status_code

    async def close(self) -> None:
        await self.client.aclose()


Connection = RawConnection | HttpxConnection


class Http:
    """Posts updates to the benchmark servers, at most ``concurrency`` at a time, timing each,
    over keep-alive connections (``client``: "raw" or "httpx")."""

    def __init__(self, base_urls: list[str], concurrency: int, client: str = "raw") -> None:
        self.base_urls = base_urls
        self.servers = len(base_urls)
        self.client = client
        self.semaphore = asyncio.Semaphore(concurrency)
        self.idle: list[list[Connection]] = [[] for _ in base_urls]
        self.all: list[Connection] = []
        self.samples: list[Sample] = []
        self.stop_at = float("inf")
        #: Cleared to pause the load (see pause()); set, updates flow.
        self.gate = asyncio.Event()
        self.gate.set()
        self.in_flight = 0
        self._drained = asyncio.Event()

    def _connect(self, server: int) -> Connection:
        url = self.base_urls[server]
        connection: Connection
        if self.client == "httpx":
            connection = HttpxConnection(url)
        else:
            parts = urlsplit(url)
            connection = RawConnection(parts.hostname or "127.0.0.1", parts.port or 80)
        self.all.append(connection)
        return connection

    async def close(self) -> None:
        for connection in self.all:
            await connection.close()

    def stopped(self) -> bool:
        return time.perf_counter() >= self.stop_at

    async def post(self, server: int, kind: str, update: dict[str, Any]) -> int:
        return await self.post_body(server, kind, json.dumps(update).encode())

    async def post_body(self, server: int, kind: str, body: bytes) -> int:
        if self.stopped():
            raise Stop
        headers = {
            "content-type": "application/json",
            "x-telegram-bot-api-secret-token": SECRET,
            KIND_HEADER: kind,
        }
        await self.gate.wait()
        async with self.semaphore:
            if self.stopped():
                raise Stop
            idle = self.idle[server]
            connection = idle.pop() if idle else self._connect(server)
            self.in_flight += 1
            try:
                start = time.perf_counter()
                status = await connection.post(WEBHOOK_PATH, headers, body)
                end = time.perf_counter()
            finally:
                idle.append(connection)
                self.in_flight -= 1
                if self.in_flight == 0:
                    self._drained.set()
        self.samples.append(Sample(kind, start, end, status))
        return status

    async def pause(self) -> None:
        """Hold back new updates and wait for those in flight (a post already past the gate
        may still start one more: wait until none is)."""
        self.gate.clear()
        await self._drain()
        await asyncio.sleep(0.05)
        await self._drain()

    async def _drain(self) -> None:
        while self.in_flight:
            self._drained.clear()
            await self._drained.wait()

    def resume(self) -> None:
        self.gate.set()


def bot_message(chat: dict[str, Any], message_id: int, view: views.View) -> dict[str, Any]:
    """A bot message as a callback query carries it: its text and its inline keyboard."""
    message: dict[str, Any] = {
        "message_id": message_id,
        "from": BOT_SENDER,
        "chat": chat,
        "date": int(time.time()),
        "text": view.text,
    }
    if view.markup is not None:
        # Views build keyboards as the Bot API's JSON already.
        message["reply_markup"] = view.markup
    return message


def _fingerprint(state: GameState) -> tuple[Any, ...]:
    return (
        state.plays,
        state.phase,
        state.turn,
        len(state.pile),
        len(state.open_claims),
        state.accepted,
        tuple(len(p.hand) for p in state.players),
    )


@dataclass
class Table:
    chat_id: int
    chat: dict[str, Any]
    users: dict[int, User]
    server: int


class Players:
    """Plays games through ``http``, reading states with ``store``."""

    def __init__(self, http: Http, store: GameStore, updates: UpdateFactory) -> None:
        self.http = http
        self.store = store
        self.updates = updates
        self.outcomes: list[Outcome] = []
        #: Games of ``new_game`` that got as far as the deal.
        self.dealt = 0

    async def _load(self, chat_id: int) -> tuple[Session, MessageIds]:
        session, _ = await self.store.load(chat_id)
        if session is None:
            raise Broken("no session")
        shown = decode_shown(await self.store.shown.read(Place(chat_id)))
        return session, message_ids(shown)

    async def new_game(self, number: int, server: int, rng: random.Random) -> Outcome:
        """/new, four joins by deep link, Start, and the game to its end."""
        outcome = Outcome()
        self.outcomes.append(outcome)
        chat_id = FIRST_GROUP_ID - number
        chat = group(chat_id, f"Bench table {number}")
        users = [
            User(FIRST_USER_ID + number * 10 + i, PLAYER_NAMES[i], language_code="en")
            for i in range(4)
        ]
        table = Table(chat_id, chat, {u.id: u for u in users}, server)
        try:
            await self._tap(table, outcome, "new", self.updates.command(chat, users[0], "/new"))
            for user in users:
                update = self.updates.start_private(user, f"j{chat_id}")
                await self._tap(table, outcome, "join", update)
            session, messages = await self._load(chat_id)
            if session.lobby is None or len(session.lobby.players) != len(users):
                raise Broken("the lobby did not fill")
            view = views.lobby_view(TR, session, session.lobby, DEFAULT_BOT_USERNAME)
            message = bot_message(chat, messages.table or 1, view)
            data = TablePress(Op.START, chat_id, session.game_id).encode()
            await self._tap(table, outcome, "start", self.updates.callback(users[0], message, data))
            self.dealt += 1
            await self._play_out(table, rng, outcome)
        except Broken as broken:
            outcome.broken = str(broken) or "broken"
        return outcome

    async def stored_game(self, chat_id: int, server: int, rng: random.Random) -> Outcome:
        """A game already dealt in Redis (created without Telegram), played to its end."""
        outcome = Outcome()
        self.outcomes.append(outcome)
        try:
            session, _ = await self._load(chat_id)
            if session.game is None:
                raise Broken("no game")
            users = {
                p.user_id: User(p.user_id, p.name, language_code="en") for p in session.game.players
            }
            table = Table(chat_id, group(chat_id, session.title or "Bench"), users, server)
            await self._play_out(table, rng, outcome)
        except Broken as broken:
            outcome.broken = str(broken) or "broken"
        return outcome

    async def _tap(self, table: Table, outcome: Outcome, kind: str, update: dict[str, Any]) -> None:
        status = await self.http.post(table.server, kind, update)
        outcome.taps[kind] += 1
        if status != 200:
            raise Broken(f"{kind}: HTTP {status}")

    async def _play_out(self, table: Table, rng: random.Random, outcome: Outcome) -> None:
        asked: set[tuple[int, int]] = set()
        last: tuple[Any, ...] | None = None
        stalls = 0
        for _ in range(MAX_STEPS):
            session, messages = await self._load(table.chat_id)
            state = session.game
            if state is None:
                raise Broken("no game")
            if state.phase is Phase.FINISHED:
                outcome.finished = True
                return
            fingerprint = _fingerprint(state)
            stalls = stalls + 1 if fingerprint == last else 0
            if stalls >= MAX_STALLS:
                raise Broken("taps changed nothing")
            last = fingerprint
            # The server runs the clock and stamps the presses: the players only tap.
            action = next_action(state, rng, 0, asked, clock=False)
            if action is None:
                raise Broken("nobody can act")
            await self._act(table, outcome, session, state, messages, action)
        raise Broken("too many steps")

    async def _act(
        self,
        table: Table,
        outcome: Outcome,
        session: Session,
        state: GameState,
        messages: MessageIds,
        action: Action,
    ) -> None:
        chat_id, game_id = table.chat_id, session.game_id
        if isinstance(action, Play):
            outcome.plays += 1
            await self._play(table, outcome, session, state, messages, action)
            return
        if isinstance(action, Challenge):
            outcome.challenges += 1
            op, kind, number = Op.CHALLENGE, "challenge", action.claim
        elif isinstance(action, Accept):
            op, kind, number = Op.ACCEPT, "accept", action.claim
        else:
            raise Broken(f"no button for {type(action).__name__}")
        user = table.users[state.players[action.seat].user_id]
        view = views.table_view(TR, session, state, DEFAULT_BOT_USERNAME)
        message = bot_message(table.chat, messages.table or 1, view)
        data = ClaimPress(op, chat_id, game_id, number).encode()
        await self._tap(table, outcome, kind, self.updates.callback(user, message, data))

    async def _play(
        self,
        table: Table,
        outcome: Outcome,
        session: Session,
        state: GameState,
        messages: MessageIds,
        play: Play,
    ) -> None:
        """A pick press per card on the hand message, then Play."""
        if state.required is None or play.rank is not state.required:
            raise Broken("the hand keyboard plays the required rank only")
        player = state.players[play.seat]
        user = table.users[player.user_id]
        chat = private(user)
        message_id = messages.hand(player.user_id) or 1
        picked: Counter[Any] = Counter()
        selection = ""
        for card in sorted(play.cards):
            view = views.hand_view(TR, session, state, play.seat, session.title, selection)
            data = HandPress(
                Op.PICK, table.chat_id, session.game_id, state.plays, selection, card.rank
            ).encode()
            update = self.updates.callback(user, bot_message(chat, message_id, view), data)
            await self._tap(table, outcome, "pick", update)
            picked[card.rank] += 1
            selection = "".join(rank.code for rank in sorted(picked.elements()))
        view = views.hand_view(TR, session, state, play.seat, session.title, selection)
        data = HandPress(
            Op.PLAY, table.chat_id, session.game_id, state.plays, selection, state.required
        ).encode()
        update = self.updates.callback(user, bot_message(chat, message_id, view), data)
        await self._tap(table, outcome, "play", update)


async def run_slots(
    slots: int, play_one: Callable[[int, int], Awaitable[Any]], numbers: Iterator[int]
) -> None:
    """``slots`` games at a time, each slot starting its next game when one ends, until the
    window is over (``Stop``) or ``numbers`` runs out."""

    async def slot(index: int) -> None:
        for number in numbers:
            try:
                await play_one(number, index)
            except Stop:
                return

    await asyncio.gather(*(slot(i) for i in range(slots)))


async def bare_load(http: Http, bodies: list[bytes], workers: int) -> None:
    """Each worker posts the next body until the window is over."""
    counter = itertools.count()

    async def worker(index: int) -> None:
        while True:
            body = bodies[next(counter) % len(bodies)]
            try:
                await http.post_body(index % http.servers, "bare", body)
            except Stop:
                return

    await asyncio.gather(*(worker(i) for i in range(workers)))


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]
