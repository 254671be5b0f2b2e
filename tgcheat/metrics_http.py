"""`GET /metrics`: the figures of ``tgcheat.metrics`` in Prometheus's text format.

Two ways to reach it, neither open to the world:

- on the web server's PORT (``tgcheat serve``), when METRICS_TOKEN is set: a request must carry
  ``Authorization: Bearer <METRICS_TOKEN>`` (else 401, and nothing is read); without the token
  there is no such route (404). For a platform that exposes one port only.
- on a port of its own, METRICS_PORT (``serve`` and ``poll``; off by default), for a private
  network or a sidecar: the token is asked there too when it is set.

Every process serves its own counters; the lobbies and games in progress are counted in Redis
at most once every ``CENSUS_EVERY_S`` per process (``tgcheat.store.census``), the same figure
on every process.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import socket
import time
from collections.abc import AsyncIterator, Generator

import uvicorn
from redis.asyncio import Redis
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from tgcheat.config import METRICS_PATH
from tgcheat.metrics import CONTENT_TYPE, PLACES_IN_PROGRESS, exposition
from tgcheat.store.census import census
from tgcheat.store.keys import Keys

__all__ = ["CENSUS_EVERY_S", "MetricsEndpoint", "MetricsPortError", "metrics_app", "metrics_port"]

_LOGGER = logging.getLogger(__name__)

#: How often one process counts the lobbies and games in Redis at most (s).
CENSUS_EVERY_S = 10.0


class MetricsEndpoint:
    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        token: str | None,
        *,
        census_every_s: float = CENSUS_EVERY_S,
    ) -> None:
        self._redis = redis
        self._keys = keys
        #: How long a census is served again before Redis is read anew (s).
        self.census_every_s = census_every_s
        self._token = f"Bearer {token}".encode() if token else None
        self._counted_at: float | None = None
        self._counting = asyncio.Lock()

    async def respond(self, request: Request) -> Response:
        if self._token is not None:
            given = request.headers.get("authorization", "").encode("utf-8", "replace")
            if not hmac.compare_digest(given, self._token):
                return PlainTextResponse(
                    "unauthorized", status_code=401, headers={"WWW-Authenticate": "Bearer"}
                )
        await self._count_places()
        return Response(exposition(), media_type=CONTENT_TYPE)

    async def _count_places(self) -> None:
        async with self._counting:
            now = time.monotonic()
            if self._counted_at is not None and now - self._counted_at < self.census_every_s:
                return
            try:
                counted = await census(self._redis, self._keys)
            except Exception as error:
                # The other figures are still worth serving; the gauge keeps its last value.
                _LOGGER.warning("Metrics: lobbies and games not counted: %s", error)
                return
            self._counted_at = now
            PLACES_IN_PROGRESS.labels("lobby").set(counted.lobbies)
            PLACES_IN_PROGRESS.labels("game").set(counted.games)

    def route(self) -> Route:
        return Route(METRICS_PATH, self.respond, methods=["GET"])


def metrics_app(endpoint: MetricsEndpoint) -> Starlette:
    """The app of METRICS_PORT: /metrics alone."""
    return Starlette(routes=[endpoint.route()])


class QuietServer(uvicorn.Server):
    """A uvicorn server that leaves the process's signals to the program (the metrics port's,
    beside the webhook's server or long polling)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


@contextlib.asynccontextmanager
async def metrics_port(endpoint: MetricsEndpoint, port: int) -> AsyncIterator[None]:
    """/metrics served on ``port`` (all interfaces) while the block runs."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("0.0.0.0", port))
    except OSError as exc:
        sock.close()
        message = f"cannot listen on METRICS_PORT {port}: {exc.strerror or exc}"
        raise MetricsPortError(message) from exc
    server = QuietServer(
        uvicorn.Config(
            metrics_app(endpoint),
            lifespan="off",
            log_config=None,
            access_log=False,
            server_header=False,
        )
    )
    task = asyncio.create_task(server.serve(sockets=[sock]), name="tgcheat-metrics")
    _LOGGER.info("Metrics on 0.0.0.0:%d%s", port, METRICS_PATH)
    try:
        yield
    finally:
        server.should_exit = True
        with contextlib.suppress(Exception):
            await task
        sock.close()


class MetricsPortError(Exception):
    """METRICS_PORT cannot be listened on; the message is one line for the operator."""
