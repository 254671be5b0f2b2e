"""What each place's chats show, as Telegram confirmed it, and the one process that syncs it.

A place (a group, or a forum topic) is synced by one process at a time (tgcheat.bot.delivery):
it takes the place's **lease** (in the session's hash, so the compare-and-set of a press takes
it in the same round trip: ``tgcheat.store.scripts.CAS_SCRIPT``), reads the **shown record**
(what Telegram confirmed: the ids, epochs and content digests of the place's messages, the last
line posted in each chat), brings Telegram toward what the session says should be shown, and
ends: the record kept, the group's tokens spent, the lease let go, and the place put in its
shard's **due** set for whatever is left (a budget or a flood wait held it back). A process
that changes the session while another holds the lease leaves the sync to that one, which
syncs again before it lets go. A process that dies holding the lease leaves the place due when
the lease ends, so the clock syncs it.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis

from tgcheat.store.budget import GroupBucket
from tgcheat.store.clock import due_in_shards
from tgcheat.store.direct import DirectCommands
from tgcheat.store.keys import LEASE_FIELD, LEGACY_MESSAGE_FIELD, SHOWN_FIELD, Keys
from tgcheat.store.scripts import (
    BEGIN_SCRIPT,
    CHECKPOINT_SCRIPT,
    END_SCRIPT,
    LEASE_MS,
    RECHECK_SCRIPT,
    begin_call,
    checkpoint_call,
    end_call,
    recheck_call,
)
from tgcheat.store.timeout import bounded
from tgcheat.table.place import Place
from tgcheat.table.session import Session


@dataclass(frozen=True, slots=True)
class Lease:
    """A place leased to this process for one sync: what it starts from."""

    token: str
    #: The session's version and the session (None: none stored).
    version: int
    session: Session | None
    #: The shown record as stored (empty: nothing shown yet).
    shown: bytes
    #: How many messages others posted below the table so far.
    buried: int
    #: The group's message budget.
    bucket: GroupBucket
    #: When the lease runs out by the place's clock (ms), the one every process judges it by,
    #: and by this process's monotonic clock (s), which no change of the time of day moves.
    ends_ms: int
    ends_monotonic: float
    #: The message ids an earlier version kept for the place (its fields without their
    #: prefix: "table", "hand:<user id>"), when nothing is recorded yet: a live game's first
    #: sync after the upgrade edits those messages rather than posting new ones.
    legacy: Mapping[str, int] = field(default_factory=dict)
    #: How often a sync that lost its lease asked for the messages to be checked again.
    recheck: int = 0
    #: The players who reported their Mini App visible, and when each report runs out (ms):
    #: tgcheat.store.watching, read with the lease.
    watching: Mapping[int, int] = field(default_factory=dict)

    def left_ms(self, now_ms: int) -> float:
        """How long the lease has left (ms; negative: run out), the lesser of its clocks."""
        return min(self.ends_ms - now_ms, (self.ends_monotonic - time.monotonic()) * 1000)


class LeaseLost(Exception):
    """The lease ran out and another process synced the place meanwhile."""


def new_token() -> str:
    return secrets.token_hex(8)


class ShownRecords:
    def __init__(
        self,
        redis: Redis,
        direct: DirectCommands,
        keys: Keys,
        decode: Callable[[Place, bytes], Session],
        *,
        per_minute: int,
        lease_ms: int = LEASE_MS,
    ) -> None:
        self._redis = redis
        self._direct = direct
        self._keys = keys
        self._decode = decode
        self.per_minute = per_minute
        self.lease_ms = lease_ms
        self._begin = redis.register_script(BEGIN_SCRIPT)
        self._end = redis.register_script(END_SCRIPT)
        self._checkpoint = redis.register_script(CHECKPOINT_SCRIPT)
        self._recheck = redis.register_script(RECHECK_SCRIPT)

    def leased(
        self, place: Place, token: str, shows: Sequence[Any], *, taken_ms: int, taken_at: float
    ) -> Lease:
        """The lease ``token`` took, from the scripts' what_shows() answer; ``taken_ms``: the
        time the script was given (the lease ends ``lease_ms`` after it), ``taken_at``: the
        monotonic time the script was called at."""
        version, document, shown, buried, tokens, at, until, legacy, recheck, watching = shows
        reports = [int(item) for item in watching or ()]
        fields = [_bytes(item).decode() for item in legacy or ()]
        prefix = len(LEGACY_MESSAGE_FIELD)
        kept = {
            name[prefix:]: int(value)
            for name, value in zip(fields[::2], fields[1::2], strict=True)
            if value.isdigit()
        }
        return Lease(
            token=token,
            version=int(version),
            session=self._decode(place, _bytes(document)) if document else None,
            shown=_bytes(shown),
            buried=int(buried),
            bucket=GroupBucket.of(tokens, at, until),
            legacy=kept,
            recheck=int(recheck),
            watching=dict(zip(reports[::2], reports[1::2], strict=True)),
            ends_ms=taken_ms + self.lease_ms,
            ends_monotonic=taken_at + self.lease_ms / 1000,
        )

    async def begin(self, place: Place, now_ms: int) -> Lease | None:
        """The place leased to this process; None when another process holds it (it syncs
        again before it lets go) or the place has no session."""
        token, taken_at = new_token(), time.monotonic()
        call = begin_call(
            session_key=self._keys.session(place),
            bucket_key=self._keys.bucket(place.chat_id),
            due_key=self._keys.due(place.chat_id),
            watching_key=self._keys.watching(place),
            token=token,
            now_ms=now_ms,
            lease_ms=self.lease_ms,
            place=place.key,
        )
        answer = await bounded(self._direct.run_script(self._begin, call.keys, call.args))
        if int(answer[0]) != 1:
            return None
        return self.leased(place, token, answer[1:], taken_ms=now_ms, taken_at=taken_at)

    async def end(
        self,
        place: Place,
        lease: Lease,
        shown: bytes,
        *,
        spent: int,
        flood_until_ms: int,
        due_ms: int,
        now_ms: int,
        partial: bool = False,
    ) -> Lease | None:
        """The sync of ``lease`` done: ``shown`` kept, ``spent`` group messages counted, the
        place due at ``due_ms`` (0: nothing left; ``partial``: the sync saw only part of the
        place, so what was due stays due). Another lease (the same token) when the
        session changed meanwhile: sync again from it. LeaseLost when another process took
        the place over."""
        taken_at = time.monotonic()
        call = end_call(
            session_key=self._keys.session(place),
            bucket_key=self._keys.bucket(place.chat_id),
            due_key=self._keys.due(place.chat_id),
            watching_key=self._keys.watching(place),
            token=lease.token,
            version=lease.version,
            buried=lease.buried,
            shown=shown,
            spent=spent,
            per_minute=self.per_minute,
            now_ms=now_ms,
            flood_until_ms=flood_until_ms,
            due_ms=due_ms,
            lease_ms=self.lease_ms,
            place=place.key,
            recheck=lease.recheck,
            partial=partial,
        )
        answer = await bounded(self._direct.run_script(self._end, call.keys, call.args))
        outcome = int(answer[0])
        if outcome == -1:
            raise LeaseLost(place)
        if outcome == 0:
            return None
        return self.leased(place, lease.token, answer[1:], taken_ms=now_ms, taken_at=taken_at)

    async def checkpoint(self, place: Place, lease: Lease, shown: bytes) -> bool:
        """What the sync has shown so far, kept while its lease lasts; False when the lease
        is another's now."""
        call = checkpoint_call(
            session_key=self._keys.session(place), token=lease.token, shown=shown
        )
        return bool(await bounded(self._direct.run_script(self._checkpoint, call.keys, call.args)))

    async def recheck(self, place: Place, now_ms: int) -> None:
        """Ask for the place's messages to be checked again by its next sync (due now)."""
        call = recheck_call(
            session_key=self._keys.session(place),
            due_key=self._keys.due(place.chat_id),
            now_ms=now_ms,
            place=place.key,
        )
        await bounded(self._direct.run_script(self._recheck, call.keys, call.args))

    async def due(self, now_ms: int, limit: int = 64) -> list[Place]:
        """Places with something left to sync by ``now_ms``, at most ``limit``."""
        return await due_in_shards(self._redis, self._keys.due_of_shard, now_ms, limit)

    async def held(self, place: Place) -> bool:
        """Whether a sync holds the place's lease now (ended or not, until it lets go)."""
        return bool(await bounded(self._redis.hexists(self._keys.session(place), LEASE_FIELD)))

    async def read(self, place: Place) -> bytes:
        """The place's shown record as stored (empty: nothing shown)."""
        raw = await bounded(self._redis.hget(self._keys.session(place), SHOWN_FIELD))
        return _bytes(raw) if raw else b""

    async def read_and_held(self, place: Place) -> tuple[bytes, bool]:
        """The place's shown record as stored, and whether a sync holds the place's lease (run
        out or not, until it lets go): that sync keeps what Telegram confirmed only at its
        checkpoints and at its end, so the record may lack a message it has sent."""
        key = self._keys.session(place)
        raw, lease = await bounded(self._redis.hmget(key, [SHOWN_FIELD, LEASE_FIELD]))
        return (_bytes(raw) if raw else b""), lease is not None


def _bytes(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode()
