"""A real Redis Cluster for tests and the soak: 3 masters (and, for a failover drill, one replica
each) on 127.0.0.1, each a `RedisServer` of the same binary the other tests use, run with
cluster-enabled. The slots are assigned with redis-py alone (CLUSTER ADDSLOTSRANGE, MEET,
REPLICATE): no redis-cli, no other tool.

    with running_cluster(workdir, replicas=True) as cluster:
        client = redis.asyncio.RedisCluster.from_url(cluster.url)

Every wait is on a condition (the nodes' own view of the cluster) with a bound.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import redis as sync_redis

from tests.support.redis_server import RedisServer

#: Redis Cluster's hash slots, 0..16383.
SLOTS = 16384
MASTERS = 3
#: How long a node may not answer before the others count it as failing. Short, so that a
#: drill's failover is over in seconds; long enough that a loaded machine (a test run on two
#: busy cores) does not fail a node that is merely slow.
NODE_TIMEOUT_MS = 3000
#: The bound on each wait for the cluster to agree (started, a failover).
CONVERGE_TIMEOUT_S = 30.0
_POLL_S = 0.05


def slot_ranges(masters: int) -> list[tuple[int, int]]:
    """The slots split into ``masters`` contiguous ranges (first, last), as redis-cli does."""
    per = SLOTS / masters
    return [(round(i * per), round((i + 1) * per) - 1) for i in range(masters)]


@dataclass(eq=False)
class ClusterNode:
    server: RedisServer
    #: The cluster's id of the node (CLUSTER MYID), kept across its restarts.
    node_id: str

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.server.port}"

    def client(self) -> sync_redis.Redis:
        return sync_redis.Redis(port=self.server.port, socket_timeout=5, decode_responses=True)


class RedisCluster:
    """``MASTERS`` masters, each with one replica when ``replicas``; files under ``workdir``.

    `start()` returns once every running node reports ``cluster_state:ok``, every slot is
    served, and each replica is in sync with its master. `stop()` stops every node."""

    def __init__(self, workdir: str | os.PathLike[str], *, replicas: bool = False) -> None:
        self.workdir = os.fspath(workdir)
        self.replicas = replicas
        self.masters: list[ClusterNode] = []
        #: replicas[i] replicates masters[i] (as started; a failover swaps the roles).
        self.replica_nodes: list[ClusterNode] = []

    @property
    def nodes(self) -> list[ClusterNode]:
        return [*self.masters, *self.replica_nodes]

    @property
    def url(self) -> str:
        """A URL of one node, as REDIS_URL names a cluster (any node; the client finds the
        others). A cluster has one database: no /db in it."""
        return f"redis://{self.masters[0].address}"

    def start(self) -> None:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        count = MASTERS * (2 if self.replicas else 1)
        started: list[ClusterNode] = []
        for index in range(count):
            workdir = os.path.join(self.workdir, f"node{index}")
            os.makedirs(workdir, exist_ok=True)
            # Append-only, so that a node stopped by a drill comes back with its data.
            server = RedisServer(workdir, append_only=True, cluster_node_timeout_ms=NODE_TIMEOUT_MS)
            server.start()
            with contextlib.closing(_client(server)) as client:
                node = ClusterNode(server, str(client.execute_command("CLUSTER", "MYID")))
                # Distinct config epochs from the start, as redis-cli gives them: else the
                # masters settle their equal epochs between them first.
                client.execute_command("CLUSTER", "SET-CONFIG-EPOCH", index + 1)
            started.append(node)
        self.masters = started[:MASTERS]
        self.replica_nodes = started[MASTERS:]

        for node, (first, last) in zip(self.masters, slot_ranges(MASTERS), strict=True):
            with contextlib.closing(node.client()) as client:
                client.execute_command("CLUSTER", "ADDSLOTSRANGE", first, last)
        with contextlib.closing(self.masters[0].client()) as client:
            for node in started[1:]:
                # Its bus port too: it is not the default (the port + 10000).
                client.execute_command(
                    "CLUSTER", "MEET", "127.0.0.1", node.server.port, node.server.bus_port
                )
        # A node can replicate a master only once it knows it.
        self.wait_until(lambda: all(len(_known(n)) == count for n in started), "nodes met")
        for replica, master in zip(self.replica_nodes, self.masters, strict=False):
            with contextlib.closing(replica.client()) as client:
                client.execute_command("CLUSTER", "REPLICATE", master.node_id)
        self.wait_until_ok()

    def wait_until_ok(self) -> None:
        """Until every running node sees the cluster ok, with every slot served by a running
        master whose replicas (if any run) are in sync."""
        self.wait_until(self._ok, "cluster_state:ok")

    def _ok(self) -> bool:
        running = [node for node in self.nodes if node.server.up]
        for node in running:
            info = _cluster_info(node)
            if info.get("cluster_state") != "ok" or info.get("cluster_slots_ok") != str(SLOTS):
                return False
        for node in running:
            with contextlib.closing(node.client()) as client:
                replication = client.info("replication")
            if replication["role"] == "slave" and replication["master_link_status"] != "up":
                return False
        return True

    def master_of_slot(self, slot: int) -> ClusterNode:
        """The node that serves ``slot`` now, as a running node sees it."""
        viewer = next(node for node in self.nodes if node.server.up)
        with contextlib.closing(viewer.client()) as client:
            for first, last, master, *_replicas in client.execute_command("CLUSTER", "SLOTS"):
                if first <= slot <= last:
                    port = int(master[1])
                    return next(node for node in self.nodes if node.server.port == port)
        raise LookupError(f"slot {slot} is not served")

    def replica_of(self, master: ClusterNode) -> ClusterNode:
        for node in self.nodes:
            if node.server.up and node is not master:
                with contextlib.closing(node.client()) as client:
                    replication = client.info("replication")
                if (
                    replication["role"] == "slave"
                    and int(replication["master_port"]) == master.server.port
                ):
                    return node
        raise LookupError(f"{master.address} has no running replica")

    def promote(self, replica: ClusterNode) -> None:
        """Make ``replica`` a master at once (CLUSTER FAILOVER TAKEOVER: without its master's
        agreement, which is gone), then wait until the cluster is ok again."""
        with contextlib.closing(replica.client()) as client:
            client.execute_command("CLUSTER", "FAILOVER", "TAKEOVER")
        self.wait_until(lambda: _role(replica) == "master", "replica promoted")
        self.wait_until_ok()

    def wait_until(self, condition: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + CONVERGE_TIMEOUT_S
        while True:
            try:
                if condition():
                    return
            except sync_redis.RedisError:
                pass  # a node between two states (starting, failing over): ask again
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"Redis Cluster: no {what} within {CONVERGE_TIMEOUT_S:.0f}s: {self._states()}"
                )
            time.sleep(_POLL_S)

    def stop(self) -> None:
        for node in self.nodes:
            node.server.stop()

    def _states(self) -> str:
        states = []
        for node in self.nodes:
            try:
                state = _cluster_info(node).get("cluster_state", "?") if node.server.up else "down"
            except sync_redis.RedisError as exc:
                state = f"error {exc}"
            states.append(f"{node.address} {state}")
        return "; ".join(states)


@contextlib.contextmanager
def running_cluster(
    workdir: str | os.PathLike[str] | None = None, *, replicas: bool = False
) -> Iterator[RedisCluster]:
    """A started cluster for the duration of the block (its files in a temporary directory
    unless ``workdir`` is given), stopped at the end."""
    with contextlib.ExitStack() as stack:
        if workdir is None:
            workdir = stack.enter_context(tempfile.TemporaryDirectory(prefix="tgcheat-cluster-"))
        cluster = RedisCluster(workdir, replicas=replicas)
        cluster.start()
        stack.callback(cluster.stop)
        yield cluster


def _client(server: RedisServer) -> sync_redis.Redis:
    return sync_redis.Redis(port=server.port, socket_timeout=5, decode_responses=True)


def _cluster_info(node: ClusterNode) -> dict[str, str]:
    with contextlib.closing(node.client()) as client:
        text = str(client.execute_command("CLUSTER", "INFO"))
    return dict(line.split(":", 1) for line in text.split() if ":" in line)


def _known(node: ClusterNode) -> list[str]:
    """The nodes ``node`` knows and is connected to (itself included)."""
    with contextlib.closing(node.client()) as client:
        text = str(client.execute_command("CLUSTER", "NODES"))
    lines = [line.split() for line in text.strip().splitlines()]
    return [f[0] for f in lines if "handshake" not in f[2] and f[7] == "connected"]


def _role(node: ClusterNode) -> str:
    with contextlib.closing(node.client()) as client:
        return str(client.info("replication")["role"])
