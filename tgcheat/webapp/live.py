"""Live updates: one Redis subscription per web process, fanned out to the open Mini Apps.

Every committed change of a session is announced on one channel (tgcheat.store.changes),
whichever process made it. ``ChangeListener`` holds this process's one subscription and wakes
each ``Watcher`` (an open Mini App's event stream) of the place that changed; the watcher then
sends its player the state as it is now. A watcher is a set entry and an asyncio.Event: a
closed connection removes it and costs nothing more, and a notice for a place nobody watches
here is dropped at a dict lookup.

The subscription is opened with the first watcher and kept. When Redis goes away the listener
connects again and wakes every watcher (a notice may have been missed meanwhile): each reads
the current state. A reconnecting page reads it too, so nothing missed stays missed.

The streams woken by one change all ask for the place's state at the same instant: ``SharedReads``
makes that one Redis read for all of them (200 open Mini Apps on a game cost one read per change,
not 200, and no more connections than one).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from redis.asyncio import Redis

from tgcheat.store.changes import Reveal, decode_notice
from tgcheat.table.place import Place

log = logging.getLogger(__name__)

T = TypeVar("T")

#: The wait before subscribing again after Redis failed (s).
RESUBSCRIBE_WAIT_S = 0.5


@dataclass(eq=False)
class Watcher:
    """One open Mini App's stream: woken by each change of its place."""

    place: Place
    woken: asyncio.Event = field(default_factory=asyncio.Event)
    #: The reveals announced since the stream last sent (bounded: a slow reader keeps the last).
    reveals: list[Reveal] = field(default_factory=list)
    #: The newest version announced (0: none yet).
    version: int = 0

    def wake(self, version: int, reveals: tuple[Reveal, ...]) -> None:
        self.version = max(self.version, version)
        self.reveals = [*self.reveals, *reveals][-8:]
        self.woken.set()

    def take_reveals(self) -> list[Reveal]:
        taken, self.reveals = self.reveals, []
        return taken


class ChangeListener:
    def __init__(self, redis: Redis, channel: str) -> None:
        self._redis = redis
        self._channel = channel
        self._watchers: dict[Place, set[Watcher]] = defaultdict(set)
        self._task: asyncio.Task[None] | None = None
        #: Set once the subscription is confirmed (a watcher waits for it before its first
        #: read, so that no change between its read and the subscription is missed).
        self.subscribed = asyncio.Event()

    @property
    def watching(self) -> int:
        return sum(len(watchers) for watchers in self._watchers.values())

    async def watch(self, place: Place) -> Watcher:
        watcher = Watcher(place)
        self._watchers[place].add(watcher)
        if self._task is None:
            self._task = asyncio.create_task(self._listen(), name="tgcheat-miniapp-changes")
        await self.subscribed.wait()
        return watcher

    def forget(self, watcher: Watcher) -> None:
        watchers = self._watchers.get(watcher.place)
        if watchers is not None:
            watchers.discard(watcher)
            if not watchers:
                del self._watchers[watcher.place]

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _listen(self) -> None:
        while True:
            try:
                await self._subscribed_loop()
            except asyncio.CancelledError:
                raise
            except Exception as error:
                log.warning("Mini App change feed lost (%s); subscribing again", error)
                self.subscribed.clear()
                await asyncio.sleep(RESUBSCRIBE_WAIT_S)

    async def _subscribed_loop(self) -> None:
        pubsub = self._redis.pubsub()
        try:
            await pubsub.subscribe(self._channel)
            reconnected = self.subscribed.is_set() is False and self._ever_subscribed
            self._ever_subscribed = True
            self.subscribed.set()
            if reconnected:
                # Changes may have been announced while no subscription was open.
                for watchers in self._watchers.values():
                    for watcher in watchers:
                        watcher.wake(0, ())
            async for message in pubsub.listen():
                if message.get("type") != "message":
                    continue
                try:
                    notice = decode_notice(message["data"])
                except ValueError as error:
                    log.warning("%s", error)
                    continue
                for watcher in self._watchers.get(notice.place, ()):
                    watcher.wake(notice.version, notice.reveals)
        finally:
            with contextlib.suppress(Exception):
                await pubsub.aclose()  # type: ignore[no-untyped-call,unused-ignore]  # untyped in older redis-py

    _ever_subscribed = False


class SharedReads(Generic[T]):
    """One read of a place at a time, whose answer goes to every stream that asks meanwhile.

    A stream that needs a newer version than the answer it got (its notice came after the
    shared read had started) asks again, and gets a read started after it asked."""

    def __init__(self, read: Callable[[Place], Awaitable[T]]) -> None:
        self._read = read
        self._pending: dict[Place, asyncio.Future[T]] = {}

    @property
    def pending(self) -> int:
        return len(self._pending)

    async def get(self, place: Place) -> T:
        pending = self._pending.get(place)
        if pending is None:
            pending = asyncio.ensure_future(self._read(place))
            self._pending[place] = pending
            pending.add_done_callback(lambda done: self._done(place, done))
        # Shielded: a stream that closes while waiting must not cancel the others' read.
        return await asyncio.shield(pending)

    def _done(self, place: Place, done: asyncio.Future[T]) -> None:
        if self._pending.get(place) is done:
            del self._pending[place]
        if not done.cancelled() and done.exception() is not None:
            # Retrieved here, so that a read whose askers all left is not reported as
            # "never retrieved"; each asker still gets the error.
            log.debug("Mini App read of %s failed: %s", place.key, done.exception())
