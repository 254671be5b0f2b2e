"""Announcing each committed change of a session, for the Mini App's live updates.

After a compare-and-set changed a session (a press, a Mini App's action, the clock, a computer
player), the store PUBLISHes a small notice on one channel (``Keys.changes``): the place, the
session's new version, and the reveals the change made (a reveal is an event, not kept in the
session, and an open Mini App shows it as it happens). Every web process holds one
subscription and hands each notice to the Mini Apps open on that place (tgcheat.webapp.live).
Pub/sub keeps nothing: a Mini App that was not listening reads the current state when it
connects again. The PUBLISH is the compare-and-set's own (no round trip of its own); with no
subscriber it costs Redis next to nothing.

``AppRequests`` remembers the Mini App's requests already carried out, so that one sent again
(replayed) is refused. ``PlayedPlaces`` remembers where each person was dealt a hand lately, so
that the Mini App opened without a game named (the menu button) finds theirs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from redis.asyncio import Redis

from tgcheat.engine.cards import Rank
from tgcheat.engine.events import ChallengeResolved
from tgcheat.store.keys import Keys
from tgcheat.store.timeout import bounded
from tgcheat.table.place import Place


@dataclass(frozen=True, slots=True)
class Reveal:
    """A Cheat! call resolved, as everyone at the table sees it."""

    challenger: int
    claimant: int
    rank: Rank
    #: The challenged cards, turned over (card numbers).
    cards: tuple[int, ...]
    lie: bool
    taker: int
    taken: int


@dataclass(frozen=True, slots=True)
class ChangeNotice:
    place: Place
    version: int
    reveals: tuple[Reveal, ...] = ()


def reveals_of(result: object) -> tuple[Reveal, ...]:
    """The reveals among a change's events (a change whose result is no events has none)."""
    if not isinstance(result, tuple):
        return ()
    return tuple(
        Reveal(
            challenger=event.challenger,
            claimant=event.claim.seat,
            rank=event.claim.rank,
            cards=tuple(int(card) for card in event.revealed),
            lie=event.lie,
            taker=event.taker,
            taken=event.taken,
        )
        for event in result
        if isinstance(event, ChallengeResolved)
    )


def encode_notice(notice: ChangeNotice) -> bytes:
    reveals = [
        [r.challenger, r.claimant, r.rank.code, list(r.cards), r.lie, r.taker, r.taken]
        for r in notice.reveals
    ]
    return orjson.dumps({"p": notice.place.key, "v": notice.version, "r": reveals})


def decode_notice(data: bytes | str) -> ChangeNotice:
    """A notice from the channel; ValueError when it is not one."""
    try:
        raw: Any = orjson.loads(data)
        reveals = tuple(
            Reveal(
                int(c),
                int(s),
                Rank.from_code(k),
                tuple(int(x) for x in cards),
                bool(lie),
                int(t),
                int(n),
            )
            for c, s, k, cards, lie, t, n in raw["r"]
        )
        return ChangeNotice(Place.from_key(raw["p"]), int(raw["v"]), reveals)
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise ValueError(f"not a change notice: {data!r}") from error


class Changes:
    """Where the changes are announced, and what an announcement says."""

    def __init__(self, keys: Keys) -> None:
        self.channel = keys.changes

    @staticmethod
    def notice(place: Place, version: int, result: object) -> bytes:
        """The announcement that ``place`` changed to ``version`` with ``result`` (its events):
        published by the compare-and-set that writes the change (tgcheat.store.sessions), so
        that announcing costs no round trip of its own."""
        return encode_notice(ChangeNotice(place, version, reveals_of(result)))


class AppRequests:
    """The Mini App's requests carried out, so that one sent again (replayed) is refused: per
    person one sorted set of their requests (the initData's signature and the page's id for
    the request), each scored with the time it is forgotten (when its initData expires). Only
    requests that were valid and carried out are kept, and at most ``KEPT`` per person: what
    a stranger sends leaves nothing, and what one person leaves is bounded. A request older
    than those is no danger either: a replayed action is refused by the game as out of date."""

    KEPT = 64

    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys

    async def carried_out(
        self, user_id: int, signature: str, request_id: str, now_s: float
    ) -> bool:
        """Whether this request was carried out already (and is not yet forgotten)."""
        key = self._keys.app_requests(user_id)
        until = await bounded(self._redis.zscore(key, _request_member(signature, request_id)))
        return until is not None and until > now_s

    async def remember(
        self, user_id: int, signature: str, request_id: str, now_s: float, ttl_s: int
    ) -> None:
        """A request was carried out: kept until ``ttl_s`` from now."""
        key = self._keys.app_requests(user_id)
        until = now_s + max(ttl_s, 1)
        pipe = self._redis.pipeline(transaction=True)
        pipe.zadd(key, {_request_member(signature, request_id): until})
        pipe.zremrangebyscore(key, "-inf", now_s)
        pipe.zremrangebyrank(key, 0, -self.KEPT - 1)
        pipe.expire(key, max(ttl_s, 1))
        await bounded(pipe.execute())


def _request_member(signature: str, request_id: str) -> str:
    return f"{signature}:{request_id}"


class PlayedPlaces:
    """Where each person was dealt a hand lately, newest first: a hint, checked against the
    session when read (a game over or left is skipped)."""

    #: The places kept per person, and for how long after the last deal (s).
    KEPT = 8
    TTL_S = 30 * 24 * 3600

    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys

    async def record(self, user_ids: Sequence[int], place: Place) -> None:
        # Ordered by the wall clock in microseconds (the game clock may stand still in a
        # test, and two deals a millisecond apart are still told apart).
        when = time.time_ns() // 1000
        # One key per person (each its own slot on a cluster): a pipeline, not a transaction.
        pipe = self._redis.pipeline(transaction=False)
        for user_id in user_ids:
            key = self._keys.played_places(user_id)
            pipe.zadd(key, {place.key: when})
            pipe.zremrangebyrank(key, 0, -self.KEPT - 1)
            pipe.expire(key, self.TTL_S)
        await bounded(pipe.execute())

    async def recent(self, user_id: int) -> list[Place]:
        keys = await bounded(self._redis.zrevrange(self._keys.played_places(user_id), 0, -1))
        places = []
        for key in keys:
            try:
                places.append(Place.from_key(key.decode() if isinstance(key, bytes) else str(key)))
            except ValueError:
                continue
        return places


__all__: Sequence[str] = (
    "AppRequests",
    "ChangeNotice",
    "Changes",
    "PlayedPlaces",
    "Reveal",
    "decode_notice",
)
