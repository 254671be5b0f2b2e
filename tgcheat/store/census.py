"""How many lobbies and games are in progress in the whole bot, for the metrics.

Read from the clock's sorted sets (one pipeline over the shards) and the sessions they name
(one pipeline of reads): the places on the clock are every open lobby (it expires) and every
game with a turn timer or computer players. A game with the turn timer off and people only has
no deadline and is not counted. At most ``LIMIT`` places are read: past it the figures are a
floor. Every process answers the same figures (the bot's, not the process's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from redis.asyncio import Redis

from tgcheat.engine.state import Phase
from tgcheat.store.codec import decode
from tgcheat.store.keys import DOCUMENT_FIELD, SHARDS, Keys
from tgcheat.store.timeout import bounded
from tgcheat.table.place import Place

#: Places read at most by one census.
LIMIT = 20_000


@dataclass(frozen=True, slots=True)
class Census:
    lobbies: int = 0
    games: int = 0


async def census(redis: Redis, keys: Keys, limit: int = LIMIT) -> Census:
    """The lobbies open and the games being played among the places on the clock."""
    per_shard = max(1, limit // SHARDS + 1)
    async with redis.pipeline(transaction=False) as pipe:
        for shard in range(SHARDS):
            pipe.zrange(keys.deadlines_of_shard(shard), 0, per_shard - 1)
        answers = await bounded(pipe.execute())
    places = [
        Place.from_key(cast(bytes, member).decode()) for answer in answers for member in answer
    ][:limit]
    if not places:
        return Census()
    async with redis.pipeline(transaction=False) as pipe:
        for place in places:
            pipe.hget(keys.session(place), DOCUMENT_FIELD)
        documents = await bounded(pipe.execute())
    lobbies = games = 0
    for raw in documents:
        if not raw:
            continue
        session = decode(cast(bytes, raw))
        if session.game is not None and session.game.phase is not Phase.FINISHED:
            games += 1
        elif session.lobby is not None:
            lobbies += 1
    return Census(lobbies, games)
