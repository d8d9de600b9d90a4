"""``worker --processes N``: N worker processes under one command, restarted when one dies.

The parent only supervises: SIGTERM or SIGINT is passed on to every child, which finishes its turns
in flight and exits; a child that exits on its own (a crash, an out-of-memory kill) is started
again after a short, growing pause, and its unfinished conversations are taken over meanwhile by
the others (their claims expire with the heartbeat).
"""

from __future__ import annotations

import ctypes
import logging
import signal
import subprocess
import sys
import time
from types import FrameType

log = logging.getLogger(__name__)

POLL_S = 0.2
RESTART_BACKOFF_MAX_S = 30.0
PR_SET_PDEATHSIG = 1
STOP_TIMEOUT_S = 60.0
"""How long the parent waits for its children to finish their turns after a stop signal."""


def _start(command: list[str]) -> subprocess.Popen[bytes]:
    """Start a worker process that stops too if this one dies (Linux), so none is left behind."""
    return subprocess.Popen(command, preexec_fn=_die_with_parent if sys.platform == "linux" else None)


def _die_with_parent() -> None:
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def supervise(commands: list[list[str]]) -> int:
    """Run one process per command until a stop signal; 0 when all stopped cleanly."""
    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    children = [_start(command) for command in commands]
    restarts = [0] * len(children)
    due: list[float | None] = [None] * len(children)
    log.info("started %d worker processes: %s", len(children), [c.pid for c in children])
    try:
        while not stopping:
            time.sleep(POLL_S)
            for i, child in enumerate(children):
                if stopping or child.poll() is None:
                    continue
                if due[i] is None:
                    restarts[i] += 1
                    delay = min(RESTART_BACKOFF_MAX_S, 0.5 * 2 ** (restarts[i] - 1))
                    log.error(
                        "worker process %d (pid %d) exited with %s; starting it again in %.1f s",
                        i,
                        child.pid,
                        child.returncode,
                        delay,
                    )
                    due[i] = time.monotonic() + delay
                elif time.monotonic() >= (due[i] or 0):
                    children[i] = _start(commands[i])
                    due[i] = None
                    log.info("worker process %d started again (pid %d)", i, children[i].pid)
        log.info("stopping %d worker processes", len(children))
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for child in children:
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning("worker process %d did not stop in time; killing it", child.pid)
                child.kill()
                child.wait()
        return 0 if all(c.returncode in (0, -signal.SIGTERM) for c in children) else 1
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
