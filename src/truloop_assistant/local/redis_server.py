"""One throwaway ``redis-server`` subprocess on 127.0.0.1, for tests and local development."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from types import TracebackType
from typing import IO

from .redis_launch import HOST, die_with_parent, find_redis_server, free_port, ping


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
            "--protected-mode", "yes",  # no password: it answers loopback clients only, whatever the bind
            *self.extra_args,
        ]  # fmt: skip
        self._log = open(self.log_path, "ab")  # closed in _stop_process
        self._proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=self.data_dir,
            preexec_fn=die_with_parent,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                break
            if ping(self.port):
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
