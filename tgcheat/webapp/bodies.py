"""Reading a request's body within bounds: its size, and the time it takes to arrive.

Every route that reads a body (the webhook, the Mini App's actions) reads it here: a body
declared larger than the route's limit is refused with 413 before a byte of it is read; one
that turns out larger while it streams is refused as soon as it passes the limit, without
keeping more of it; one that does not arrive within ``BODY_TIMEOUT_S`` is dropped (408), so a
client that declares a body and sends it slowly holds no connection for long.
"""

from __future__ import annotations

import asyncio

from starlette.requests import Request

#: How long a body may take to arrive, from the moment the route starts reading it (s).
BODY_TIMEOUT_S = 10.0


class BodyRefused(Exception):
    """The body is not read: ``status`` (413 too large, 408 too slow, 400 malformed)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


async def read_body(request: Request, limit: int, timeout_s: float = BODY_TIMEOUT_S) -> bytes:
    """The body of ``request``, at most ``limit`` bytes (``BodyRefused`` otherwise)."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isascii() or not declared.isdecimal() or len(declared) > 12:
            raise BodyRefused(400, "malformed Content-Length")
        if int(declared) > limit:
            raise BodyRefused(413, f"declared {declared} bytes, over {limit}")
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout_s):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise BodyRefused(413, f"over {limit} bytes")
                chunks.append(chunk)
    except TimeoutError:
        raise BodyRefused(408, f"not received within {timeout_s:g} s") from None
    return b"".join(chunks)
