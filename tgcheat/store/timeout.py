"""Every Redis operation of the store has a deadline.

The bot's client has no per-call socket timeout (tgcheat.redis_connection.CLIENT_OPTIONS): a
Redis that hangs fails the update within OPERATION_TIMEOUT_S instead, and Telegram then
delivers it again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import TypeVar

from tgcheat.metrics import REDIS_ROUND_TRIP

T = TypeVar("T")

OPERATION_TIMEOUT_S = 5.0


async def bounded(operation: Awaitable[T]) -> T:
    """A Redis operation, done within OPERATION_TIMEOUT_S or failed with TimeoutError; its
    time is a round trip of the metrics (tgcheat.metrics.REDIS_ROUND_TRIP)."""
    started = time.perf_counter()
    try:
        async with asyncio.timeout(OPERATION_TIMEOUT_S):
            return await operation
    finally:
        REDIS_ROUND_TRIP.observe(time.perf_counter() - started)
