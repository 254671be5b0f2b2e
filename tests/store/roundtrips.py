"""Counting the store's round trips to Redis: each write of commands to a connection's socket
(one command, an EVALSHA, or a whole pipeline), whichever path sends it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from redis.asyncio.connection import AbstractConnection


class RoundTrips:
    def __init__(self) -> None:
        self.count = 0

    def take(self) -> int:
        """The round trips since the last take."""
        count, self.count = self.count, 0
        return count


@contextmanager
def counting_round_trips(monkeypatch: pytest.MonkeyPatch) -> Iterator[RoundTrips]:
    trips = RoundTrips()
    send = AbstractConnection.send_packed_command

    async def counted(self: AbstractConnection, *args: Any, **kwargs: Any) -> None:
        trips.count += 1
        await send(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(AbstractConnection, "send_packed_command", counted)
        yield trips
