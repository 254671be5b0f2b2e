"""Groups' sessions: one hash per group chat, every change one atomic compare-and-set.

A change is computed by a pure function from the stored session; the write succeeds only if
the version is still the one read, else the change is recomputed from the new state (bounded
retries). The same script remembers the update's id in the session's hash, so a re-delivered
update that already changed a game is ignored, whichever process sees it
(tgcheat.store.scripts.UPDATE_MARKS); it also sets the session's deadline for the clock and,
asked to, takes the place's lease for the sync that shows the change
(tgcheat.store.scripts.CAS_SCRIPT, tgcheat.store.shown).
"""

from __future__ import annotations

import asyncio
import enum
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, NamedTuple, TypeVar

from redis.asyncio import Redis

from tgcheat.store.changes import Changes
from tgcheat.store.codec import decode, encode
from tgcheat.store.direct import DirectCommands
from tgcheat.store.hints import ChatHints
from tgcheat.store.keys import DOCUMENT_FIELD, UPDATES_FIELD, VERSION_FIELD, Keys
from tgcheat.store.scripts import CAS_SCRIPT, READ_SCRIPT, CasAnswer, cas_call, read_call
from tgcheat.store.shown import Lease, ShownRecords, new_token
from tgcheat.store.timeout import bounded
from tgcheat.table.place import Place, Where
from tgcheat.table.session import Session

R = TypeVar("R")

#: An abandoned lobby or game disappears this long after its last change.
SESSION_TTL_S = 2 * 24 * 3600
MAX_ATTEMPTS = 30
BACKOFF_S = 0.002

_VERSION = VERSION_FIELD.encode()
_DOCUMENT = DOCUMENT_FIELD.encode()
_UPDATES = UPDATES_FIELD.encode()


class ConflictError(Exception):
    """The session kept changing under us for MAX_ATTEMPTS tries."""


class Outcome(enum.Enum):
    """What a transaction did."""

    #: A new session was written.
    CHANGED = "changed"
    #: The change function left the session as it was: nothing was written.
    UNCHANGED = "unchanged"
    #: The update was already applied by an earlier delivery: nothing was done.
    DUPLICATE = "duplicate"


@dataclass(frozen=True, slots=True, kw_only=True)
class Committed(Generic[R]):
    """The outcome of a transaction."""

    outcome: Outcome
    #: The session after the change (the stored one when nothing changed).
    session: Session | None
    #: What the change function returned besides the session (None for a duplicate).
    result: R | None
    #: The version now stored (0: none).
    version: int
    #: The place's lease, taken with the change for the sync that shows it (None: not asked
    #: for, or another process holds it and syncs again before it lets go).
    lease: Lease | None = None

    @property
    def changed(self) -> bool:
        return self.outcome is Outcome.CHANGED

    @property
    def duplicate(self) -> bool:
        return self.outcome is Outcome.DUPLICATE


class Loaded(NamedTuple):
    """A stored session as read."""

    session: Session | None
    #: Its version (0: none).
    version: int


#: A change: from the stored session (or None) to the new one and a result. Returning the
#: very same session object means "no change": nothing is written.
Change = Callable[[Session | None], tuple[Session | None, R]]


class Sessions:
    def __init__(
        self,
        redis: Redis,
        direct: DirectCommands,
        keys: Keys,
        hints: ChatHints,
        shown: ShownRecords,
        *,
        changes: Changes | None = None,
    ) -> None:
        #: A press's own reads and writes (see tgcheat.store.direct).
        self._direct = direct
        self._keys = keys
        self._hints = hints
        #: The places' leases and shown records, which the compare-and-set takes and reads.
        self._shown = shown
        #: Where and how the compare-and-set itself announces each change it writes (the Mini
        #: App's live updates); None: nowhere.
        self._changes = changes
        #: The time a change is committed at (Unix ms): what the group's budget counts with.
        #: Tools that play at a human pace on a clock of their own set it.
        self.clock: Callable[[], int] = wall_clock_ms
        self._cas = redis.register_script(CAS_SCRIPT)
        self._read_with_update = redis.register_script(READ_SCRIPT)

    async def load(self, where: Where) -> tuple[Session | None, int]:
        """A group's session (None: none) and its version."""
        loaded = await self.read(where)
        return loaded.session, loaded.version

    async def read(self, where: Where) -> Loaded:
        """A group's session and its version."""
        place = Place.of(where)
        session, version, _seen = await self._read(place, None, first_look=False)
        self._hints.remember(place, version, session)
        return Loaded(session, version)

    async def _read(
        self, place: Place, update_id: int | None, *, first_look: bool
    ) -> tuple[Session | None, int, bool]:
        """One round trip: the session and whether the update changed it already."""
        key = self._keys.session(place)
        if update_id is None:
            answer = await bounded(self._direct.execute("HGETALL", key))
            seen = False
        else:
            call = read_call(
                session_key=key, update_id=update_id, first_look=first_look, now_ms=self.clock()
            )
            answer, seen_flag = await bounded(
                self._direct.run_script(self._read_with_update, call.keys, call.args)
            )
            seen = bool(seen_flag)
        # A script answers a hash as a flat list; HGETALL as a map under RESP3.
        fields: dict[bytes, bytes] = (
            answer
            if isinstance(answer, dict)
            else dict(zip(answer[::2], answer[1::2], strict=True))
        )
        document = fields.get(_DOCUMENT)
        version = int(fields.get(_VERSION, 0))
        session = self._decode(place, document) if document is not None else None
        return session, version, seen

    def decode(self, place: Place, document: bytes) -> Session:
        """A stored document, decoded once per version in this process."""
        return self._decode(place, document)

    def _decode(self, place: Place, document: bytes) -> Session:
        session = self._hints.decoded(place, document)
        if session is None:
            session = decode(document)
            self._hints.keep_decoded(place, document, session)
        return session

    async def transact(
        self,
        where: Where,
        change: Change[R],
        *,
        update_id: int | None = None,
        lease: bool = False,
    ) -> Committed[R]:
        """Apply ``change`` atomically. Exceptions from ``change`` propagate; nothing is
        written then. ``lease``: a change written takes the place's lease too, for the sync
        that shows it (``Committed.lease``), unless another process holds it."""
        # The first try may start from what this process last wrote or read for the chat,
        # saving the read: the compare-and-set proves it is still current. A refusal or a
        # no-op computed from it is confirmed against a fresh read before it is believed.
        place = Place.of(where)
        hint = self._hints.take(place)
        # Until something has judged the update new, an old id counts as handled (see
        # tgcheat.store.scripts.UPDATE_MARKS).
        first_look = True
        for attempt in range(MAX_ATTEMPTS):
            if hint is not None:
                version, session = hint
            else:
                session, version, seen = await self._read(place, update_id, first_look=first_look)
                if seen:
                    return _duplicate(session, version)
                first_look = False
            try:
                new_session, result = change(session)
            except Exception:
                if hint is None:
                    # What was read stays the hint: the person's next press (a refusal is
                    # often followed by another tap) need not read it again.
                    self._hints.remember(place, version, session)
                    raise
                hint = None
                continue
            if new_session is session:
                if hint is not None:
                    hint = None
                    continue
                self._hints.remember(place, version, session)
                return Committed(
                    outcome=Outcome.UNCHANGED, session=session, result=result, version=version
                )
            hint = None
            assert new_session is not None, "sessions are replaced, never deleted"
            document = encode(new_session)
            token = new_token() if lease else ""
            now, taken_at = self.clock(), time.monotonic()
            call = cas_call(
                session_key=self._keys.session(place),
                deadlines_key=self._keys.deadlines(place.chat_id),
                bucket_key=self._keys.bucket(place.chat_id),
                due_key=self._keys.due(place.chat_id),
                watching_key=self._keys.watching(place),
                expected_version=version,
                document=document,
                session_ttl_s=SESSION_TTL_S,
                update_id=update_id,
                first_look=first_look,
                place=place.key,
                deadline_ms=new_session.next_deadline_ms,
                now_ms=now,
                channel=self._changes.channel if self._changes else "",
                notice=(self._changes.notice(place, version + 1, result) if self._changes else b""),
                lease_token=token,
                lease_ms=self._shown.lease_ms,
            )
            answer = await bounded(self._direct.run_script(self._cas, call.keys, call.args))
            outcome = int(answer[0])
            if outcome == CasAnswer.WRITTEN:
                self._hints.remember(place, version + 1, new_session)
                self._hints.keep_decoded(place, document, new_session)
                leased = (
                    self._shown.leased(place, token, answer[2:], taken_ms=now, taken_at=taken_at)
                    if int(answer[1])
                    else None
                )
                return Committed(
                    outcome=Outcome.CHANGED,
                    session=new_session,
                    result=result,
                    version=version + 1,
                    lease=leased,
                )
            if outcome == CasAnswer.DUPLICATE:
                return _duplicate(session, version)
            # Lost a race: back off a random little while so that racing writers spread out.
            await asyncio.sleep(random.uniform(0, BACKOFF_S * 2 ** min(attempt, 5)))
        raise ConflictError(f"chat {place}: too many concurrent changes")


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


def _duplicate(session: Session | None, version: int) -> Committed[R]:
    return Committed(outcome=Outcome.DUPLICATE, session=session, result=None, version=version)
