"""Sessions to store, for the store's tests."""

from __future__ import annotations

import random

from redis.asyncio import Redis

from tgcheat.engine.game import new_game, random_seating
from tgcheat.engine.rules import PRESETS
from tgcheat.store.keys import Keys
from tgcheat.table.place import Place
from tgcheat.table.session import Session

CHAT = -100123


def game_session(players: int = 6, seed: int = 1, chat_id: int = CHAT) -> Session:
    """A dealt game of the cheat preset."""
    rng = random.Random(seed)
    names = [(1000 + i, f"Player number {i}") for i in range(players)]
    state, _ = new_game(PRESETS["cheat"], random_seating(names, rng), rng)
    return Session(
        chat_id=chat_id, game_id="abc123", creator=1000, game=state, title="Friday cards"
    )


def replace_with(new: Session):  # type: ignore[no-untyped-def]
    """A change that stores ``new`` whatever was there."""

    def change(current: Session | None) -> tuple[Session | None, None]:
        return new, None

    return change


#: The key names of the default prefix, for tests that look at Redis itself.
KEYS = Keys()
#: The places due to be synced of CHAT's shard.
DUE = KEYS.due(CHAT)
#: CHAT's session hash.
SESSION = KEYS.session(Place(CHAT))
#: CHAT's message budget (its bucket, and what waits in the chat's own place).
BUCKET = KEYS.bucket(CHAT)


async def stored_keys(redis: Redis) -> list[bytes]:
    """Every key stored, sorted (on a cluster, those of every master: a SCAN of each)."""
    return sorted([key async for key in redis.scan_iter()])


async def existing(redis: Redis, *keys: str) -> int:
    """How many of ``keys`` exist, asked one key at a time (on a cluster they may be of
    several slots)."""
    return sum([int(await redis.exists(key)) for key in keys])
