"""A throwaway Redis Cluster of primaries on 127.0.0.1, one ``redis-server`` each."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from types import TracebackType

from .redis_launch import (
    CLUSTER_BUS_OFFSET,
    HOST,
    command,
    die_with_parent,
    find_redis_cli,
    free_cluster_port,
)
from .redis_server import RedisServer

CLUSTER_SLOTS = 16384


class RedisClusterServer:
    """A Redis Cluster of three primaries (no replicas) on 127.0.0.1, one ``redis-server`` each.

    The nodes are :class:`RedisServer` instances in cluster mode (so they die with their owner too), each
    in a directory of its own under one data directory.  :meth:`start` forms the cluster and returns once
    every node reports ``cluster_state:ok`` with all 16384 slots assigned: a little over two seconds, as
    a new primary waits two seconds after it starts before it calls itself ok (``CLUSTER_WRITABLE_DELAY``).

    The cluster is formed as ``redis-cli --cluster create`` does it (a config epoch and a share of the
    slots for each node, then ``CLUSTER MEET``), but by sending those commands here, where every pair of
    nodes meets at once: redis-cli sleeps a second, then waits in steps of a second for gossip to spread
    the news, which made a start take 2.1 to 5 s instead of 2.1 to 2.3 s.  ``use_redis_cli=True`` runs
    redis-cli instead, if one is found (:func:`find_redis_cli`).

    Start it from the thread that keeps it (not ``asyncio.to_thread``): Linux ends the nodes when the
    thread that spawned them exits.
    """

    def __init__(
        self,
        *,
        masters: int = 3,
        port: int | None = None,
        appendonly: bool = False,
        data_dir: str | None = None,
        extra_args: Sequence[str] = (),
        use_redis_cli: bool = False,
    ) -> None:
        if masters < 1:
            raise ValueError("a cluster needs at least one primary")
        self.masters = masters
        self.base_port = port  # the nodes take base_port, base_port + 1, ...; else free ports
        self.appendonly = appendonly
        self._given_dir = data_dir
        self.data_dir: str | None = data_dir
        self.extra_args = list(extra_args)
        self.use_redis_cli = use_redis_cli
        self.nodes: list[RedisServer] = []

    @property
    def ports(self) -> list[int]:
        return [node.port for node in self.nodes]

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"{HOST}:{port}" for port in self.ports)

    @property
    def running(self) -> bool:
        return bool(self.nodes) and all(node.running for node in self.nodes)

    def start(self, timeout: float = 15.0) -> RedisClusterServer:
        if self.running:
            return self
        deadline = time.monotonic() + timeout
        try:
            if self.data_dir is None:
                self.data_dir = tempfile.mkdtemp(prefix="truloop-redis-cluster-")
            os.makedirs(self.data_dir, exist_ok=True)
            if self.nodes:  # stopped earlier: start the same nodes again, on their ports
                for node in self.nodes:
                    node.start(timeout)
            else:
                for index in range(self.masters):
                    self.nodes.append(self._start_node(index, timeout))
            if not self._formed():
                self._form(max(deadline - time.monotonic(), 1.0))
            self._await_ok(deadline)
        except BaseException:
            self.stop()
            raise
        return self

    def _start_node(self, index: int, timeout: float) -> RedisServer:
        assert self.data_dir is not None
        node_dir = os.path.join(self.data_dir, f"node-{index}")
        taken = {p for node in self.nodes for p in (node.port, node.port + CLUSTER_BUS_OFFSET)}
        for attempt in range(3):
            port = self.base_port + index if self.base_port is not None else free_cluster_port(taken)
            node = RedisServer(
                port=port,
                appendonly=self.appendonly,
                data_dir=node_dir,
                extra_args=[
                    "--cluster-enabled", "yes",
                    "--cluster-config-file", os.path.join(node_dir, "nodes.conf"),
                    "--cluster-announce-ip", HOST,
                    *self.extra_args,
                ],
            )  # fmt: skip
            try:
                return node.start(timeout)
            except RuntimeError:
                # Someone may have taken a port (or its bus port) meanwhile: retry with fresh ones.
                if self.base_port is not None or attempt == 2:
                    raise
                shutil.rmtree(node_dir, ignore_errors=True)
                taken |= {port, port + CLUSTER_BUS_OFFSET}
        raise AssertionError("unreachable")

    def _cluster_info(self, port: int) -> dict[str, str]:
        text = command(port, "CLUSTER", "INFO").decode()
        return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)

    def _formed(self) -> bool:
        """Whether the nodes already form a cluster (restarted from a kept ``data_dir``)."""
        info = self._cluster_info(self.nodes[0].port)
        formed = {"cluster_slots_assigned": str(CLUSTER_SLOTS), "cluster_known_nodes": str(self.masters)}
        return all(info.get(key) == value for key, value in formed.items())

    def _slot_ranges(self) -> list[tuple[int, int]]:
        """Contiguous slot ranges, one per primary, split as ``redis-cli --cluster create`` does."""
        per_node = CLUSTER_SLOTS / self.masters
        bounds = [round(i * per_node) for i in range(self.masters)] + [CLUSTER_SLOTS]
        return [(bounds[i], bounds[i + 1] - 1) for i in range(self.masters)]

    def _form(self, timeout: float) -> None:
        cli = find_redis_cli() if self.use_redis_cli and self.masters >= 3 else None
        if cli is not None:
            args = [cli, "--cluster", "create", *(f"{HOST}:{port}" for port in self.ports)]
            args += ["--cluster-replicas", "0", "--cluster-yes"]
            try:
                done = subprocess.run(
                    args,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    timeout=timeout,
                    preexec_fn=die_with_parent,
                )
            except subprocess.TimeoutExpired as e:
                raise RuntimeError(f"redis-cli --cluster create: no answer within {timeout:.0f}s") from e
            if done.returncode != 0:
                output = (done.stdout + done.stderr).decode(errors="replace")
                raise RuntimeError(f"redis-cli --cluster create failed ({done.returncode}):\n{output}")
            return
        # What redis-cli does, minus its sleeps: a distinct config epoch and a share of the slots for each
        # node, then MEET; every pair meets at once (redis-cli has every node meet the first one only and
        # leaves the rest to gossip, which can take seconds more).
        for index, (port, (first, last)) in enumerate(zip(self.ports, self._slot_ranges(), strict=True)):
            command(port, "CLUSTER", "SET-CONFIG-EPOCH", index + 1, timeout=timeout)
            command(port, "CLUSTER", "ADDSLOTS", *range(first, last + 1), timeout=timeout)
        for index, port in enumerate(self.ports):
            for other in self.ports[index + 1 :]:
                command(port, "CLUSTER", "MEET", HOST, other, timeout=timeout)

    def _await_ok(self, deadline: float) -> None:
        want = {
            "cluster_state": "ok",
            "cluster_slots_assigned": str(CLUSTER_SLOTS),
            "cluster_slots_ok": str(CLUSTER_SLOTS),
            "cluster_known_nodes": str(self.masters),
            "cluster_size": str(self.masters),
        }
        pending = list(self.nodes)
        while True:
            for node in list(pending):
                if not node.running:
                    raise RuntimeError(
                        f"cluster node on port {node.port} exited; log tail:\n{node._log_tail()}"
                    )
                info = self._cluster_info(node.port)
                if all(info.get(key) == value for key, value in want.items()):
                    pending.remove(node)
            if not pending:
                return
            if time.monotonic() >= deadline:
                seen = {key: info.get(key) for key in want}
                raise RuntimeError(f"cluster node on port {node.port} not ready in time: {seen}")
            time.sleep(0.05)

    def log_tail(self, lines: int = 20) -> str:
        return "\n".join(f"node on port {node.port}:\n{node._log_tail(lines)}" for node in self.nodes)

    def stop(self) -> None:
        """Stop every node (idempotent); remove the data unless ``data_dir`` was given."""
        for node in self.nodes:
            node.stop()
        if self._given_dir is None and self.data_dir is not None:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            self.data_dir = None
            self.nodes = []  # their directories are gone: a new start forms a new cluster

    def __enter__(self) -> RedisClusterServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
