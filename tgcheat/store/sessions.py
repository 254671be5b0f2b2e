"""Groups' sessions: one hash per group chat, every change one atomic compare-and-set.

A change is computed by a pure function from the stored session; the write succeeds only if
the version is still the one read, else the change is recomputed from the new state (bounded
retries). The same script remembers the update's id in the session's hash, so a re-delivered
update that already changed a game is ignored, whichever process sees it
(tgcheat.store.scripts.UPDATE_MARKS); it also sets the session's deadline for the clock and
spends the group's message budget (tgcheat.store.scripts.CAS_SCRIPT).
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

from tgcheat.store.budget import GroupBudget
from tgcheat.store.changes import Changes
from tgcheat.store.codec import decode, encode
from tgcheat.store.direct import DirectCommands
from tgcheat.store.hints import ChatHints
from tgcheat.store.keys import DOCUMENT_FIELD, UPDATES_FIELD, VERSION_FIELD, Keys
from tgcheat.store.messages import message_ids
from tgcheat.store.outbox import MustShow
from tgcheat.store.scripts import (
    CAS_SCRIPT,
    OUTBOX_LEASE_MS,
    READ_SCRIPT,
    CasAnswer,
    cas_call,
    read_call,
)
from tgcheat.store.timeout import bounded
from tgcheat.table.place import Place, Where
from tgcheat.table.session import MessageIds, Session

R = TypeVar("R")

#: An abandoned lobby or game disappears this long after its last change.
SESSION_TTL_S = 2 * 24 * 3600
MAX_ATTEMPTS = 30
BACKOFF_S = 0.002

_VERSION = VERSION_FIELD.encode()
_DOCUMENT = DOCUMENT_FIELD.encode()
_UPDATES = UPDATES_FIELD.encode()
_WRITTEN = (CasAnswer.WRITTEN, CasAnswer.WRITTEN_TABLE_DEFERRED)


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
    #: The messages that show the session (the table, each player's hand).
    messages: MessageIds
    #: The group's message budget is spent: the table edit is left to the clock.
    table_deferred: bool = False
    #: The change recorded what players must see of it, to be settled once it was shown
    #: (``GroupBudget.settle`` with ``version``).
    owed: bool = False

    @property
    def changed(self) -> bool:
        return self.outcome is Outcome.CHANGED

    @property
    def duplicate(self) -> bool:
        return self.outcome is Outcome.DUPLICATE


class Loaded(NamedTuple):
    """A stored session as read."""

    session: Session | None
    messages: MessageIds
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
        budget: GroupBudget,
        *,
        outbox_lease_ms: int = OUTBOX_LEASE_MS,
        changes: Changes | None = None,
    ) -> None:
        #: A press's own reads and writes (see tgcheat.store.direct).
        self._direct = direct
        self._keys = keys
        self._hints = hints
        #: Whose rate the compare-and-set spends from.
        self._budget = budget
        #: How long a change's must-see messages are this process's to show (OUTBOX).
        self._lease_ms = outbox_lease_ms
        #: Where and how the compare-and-set itself announces each change it writes (the Mini
        #: App's live updates); None: nowhere.
        self._changes = changes
        #: The time a change is committed at (Unix ms): what the group's budget counts with.
        #: Tools that play at a human pace on a clock of their own set it.
        self.clock: Callable[[], int] = wall_clock_ms
        self._cas = redis.register_script(CAS_SCRIPT)
        self._read_with_update = redis.register_script(READ_SCRIPT)

    async def load(self, where: Where) -> tuple[Session | None, MessageIds]:
        """A group's session (None: none) and the messages that show it."""
        loaded = await self.read(where)
        return loaded.session, loaded.messages

    async def read(self, where: Where) -> Loaded:
        """A group's session, the messages that show it and its version."""
        place = Place.of(where)
        session, version, messages, _seen = await self._read(place, None, first_look=False)
        self._hints.remember(place, version, session, messages)
        return Loaded(session, messages, version)

    async def _read(
        self, place: Place, update_id: int | None, *, first_look: bool
    ) -> tuple[Session | None, int, MessageIds, bool]:
        """One round trip: the session, its message ids and whether the update changed it
        already."""
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
        document = fields.pop(_DOCUMENT, None)
        version = int(fields.pop(_VERSION, 0))
        fields.pop(_UPDATES, None)
        session = self._decode(place, document) if document is not None else None
        return session, version, message_ids(fields), seen

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
        group_messages: Callable[[R], int] | None = None,
        must_show: Callable[[Session, R], MustShow | None] | None = None,
    ) -> Committed[R]:
        """Apply ``change`` atomically. Exceptions from ``change`` propagate; nothing is
        written then. ``group_messages`` says how many group messages the change's result will
        send; they are counted against the group's budget in the same round trip.
        ``must_show`` says what players must see of the new session (tgcheat.store.outbox):
        recorded with it, leased to this process."""
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
                version, session, messages = hint
            else:
                session, version, messages, seen = await self._read(
                    place, update_id, first_look=first_look
                )
                if seen:
                    return _duplicate(session, version, messages)
                first_look = False
            try:
                new_session, result = change(session)
            except Exception:
                if hint is None:
                    raise
                hint = None
                continue
            if new_session is session:
                if hint is not None:
                    hint = None
                    continue
                self._hints.remember(place, version, session, messages)
                return Committed(
                    outcome=Outcome.UNCHANGED,
                    session=session,
                    result=result,
                    version=version,
                    messages=messages,
                )
            hint = None
            assert new_session is not None, "sessions are replaced, never deleted"
            document = encode(new_session)
            owed = must_show(new_session, result) if must_show is not None else None
            call = cas_call(
                session_key=self._keys.session(place),
                deadlines_key=self._keys.deadlines(place.chat_id),
                bucket_key=self._keys.bucket(place.chat_id),
                deferred_key=self._keys.deferred_tables(place.chat_id),
                waiting_key=self._keys.waiting(place),
                expected_version=version,
                document=document,
                session_ttl_s=SESSION_TTL_S,
                update_id=update_id,
                first_look=first_look,
                place=place.key,
                deadline_ms=new_session.next_deadline_ms,
                group_messages=group_messages(result) if group_messages is not None else 0,
                per_minute=self._budget.per_minute,
                now_ms=self.clock(),
                outbox_entry=owed.entry() if owed is not None and not owed.empty else b"",
                lease_ms=self._lease_ms,
                channel=self._changes.channel if self._changes else "",
                notice=(self._changes.notice(place, version + 1, result) if self._changes else b""),
            )
            answer = await bounded(self._direct.run_script(self._cas, call.keys, call.args))
            if answer in _WRITTEN:
                self._hints.remember(place, version + 1, new_session, messages)
                self._hints.keep_decoded(place, document, new_session)
                return Committed(
                    outcome=Outcome.CHANGED,
                    session=new_session,
                    result=result,
                    version=version + 1,
                    messages=messages,
                    table_deferred=answer == CasAnswer.WRITTEN_TABLE_DEFERRED,
                    owed=owed is not None and not owed.empty,
                )
            if answer == CasAnswer.DUPLICATE:
                return _duplicate(session, version, messages)
            # Lost a race: back off a random little while so that racing writers spread out.
            await asyncio.sleep(random.uniform(0, BACKOFF_S * 2 ** min(attempt, 5)))
        raise ConflictError(f"chat {place}: too many concurrent changes")


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


def _duplicate(session: Session | None, version: int, messages: MessageIds) -> Committed[R]:
    return Committed(
        outcome=Outcome.DUPLICATE,
        session=session,
        result=None,
        version=version,
        messages=messages,
    )
