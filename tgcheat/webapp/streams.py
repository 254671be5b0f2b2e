"""The live streams one web process holds open, bounded: a few per person (opening one more
closes that person's oldest), and a number in all (beyond it a new one is answered 503)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tgcheat.metrics import MINIAPP_STREAMS

#: Streams one person may hold open on one process: a page, and one or two being reopened.
STREAMS_PER_PERSON = 3
#: Streams one process holds open in all.
STREAMS_PER_PROCESS = 2_000
#: What a stream refused for the process's limit is told to wait before trying again (s).
RETRY_AFTER_S = 10


@dataclass(eq=False, slots=True)
class Ticket:
    """One open stream's place among them."""

    user_id: int
    #: Set when the stream must end (a newer one of the same person took its place).
    closed: bool = False
    #: Wakes the stream, so that it sees it is closed.
    wake: Callable[[], None] = lambda: None
    released: bool = field(default=False, repr=False)

    def close(self) -> None:
        self.closed = True
        self.wake()


class OpenStreams:
    def __init__(
        self, per_person: int = STREAMS_PER_PERSON, per_process: int = STREAMS_PER_PROCESS
    ) -> None:
        self.per_person = per_person
        self.per_process = per_process
        self._by_person: dict[int, list[Ticket]] = {}
        self.count = 0

    @property
    def full(self) -> bool:
        """The process holds as many streams as it may."""
        return self.count >= self.per_process

    def open(self, user_id: int) -> Ticket | None:
        """A ticket for a new stream of ``user_id`` (their oldest beyond the limit closed), or
        None when the process holds as many as it may."""
        if self.full:
            return None
        mine = self._by_person.setdefault(user_id, [])
        while len(mine) >= self.per_person:
            mine.pop(0).close()
        ticket = Ticket(user_id)
        mine.append(ticket)
        self.count += 1
        MINIAPP_STREAMS.inc()
        return ticket

    def release(self, ticket: Ticket) -> None:
        """The stream ended (closed, or its client went away)."""
        if ticket.released:
            return
        ticket.released = True
        self.count -= 1
        MINIAPP_STREAMS.dec()
        mine = self._by_person.get(ticket.user_id, [])
        if ticket in mine:
            mine.remove(ticket)
        if not mine:
            self._by_person.pop(ticket.user_id, None)

    def of(self, user_id: int) -> int:
        """How many streams of ``user_id`` are open and not closed."""
        return len(self._by_person.get(user_id, ()))
