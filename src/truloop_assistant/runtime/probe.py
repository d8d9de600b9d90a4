"""The worker's health: liveness at ``GET /healthz``, readiness at ``GET /readyz``, beside ``/metrics``
on ``worker --metrics-port``.

A worker process that exists is not necessarily one that works: its event loop can be stuck (a
blocking call, a CPU-bound loop), or Redis can have stopped answering it. The two are told apart,
so that an orchestrator restarts a stuck worker but not every worker at once for a Redis blip (a
restart would not bring Redis back; the worker picks up again by itself when Redis answers).
:func:`keep_alive` runs in the worker's loop and once a second records a tick and PINGs Redis;
:func:`serve` answers from a thread of its own, so a stuck loop cannot keep it from answering:

- ``/healthz`` (liveness): ``200 {"status":"ok"}`` while the loop ticked less than
  :data:`LOOP_LIMIT_S` ago (``{"status":"starting"}`` before it first runs, e.g. while the worker
  waits for Redis), else ``503`` ``event_loop_stalled``;
- ``/readyz`` (readiness): ``200 {"status":"ready"}`` while the loop is live and Redis answered a
  PING less than :data:`REDIS_LIMIT_S` ago, else ``503`` ``starting``, ``event_loop_stalled`` or
  ``redis_unreachable``.

A 503's body is ``{"error":{"code":…,"message":…}}``, the message saying for how long and why. Every
other path is the Prometheus text. :func:`probe` is the client, exit code 0 or 1, no curl needed:
``truloop-assistant worker --metrics-port P --probe [--ready]``, or the same check without loading the
app's settings (about 0.1 s instead of 0.7 s, for a health check run every few seconds)
``python -m truloop_assistant.runtime.probe [--ready] P``. This module imports only the standard
library until a function needs more.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .side_port import SidePortServer

if TYPE_CHECKING:
    from redis.asyncio import Redis

HEALTH_PATH = "/healthz"
"""Liveness: the worker's event loop runs."""
READY_PATH = "/readyz"
"""Readiness: the loop runs and Redis answers."""
TICK_S = 1.0
"""How often the worker's loop ticks and PINGs Redis."""
PING_TIMEOUT_S = 2.0
"""A PING not answered within this counts as failed (and the next tick comes)."""
LOOP_LIMIT_S = 15.0
"""A loop that has not ticked for this long is stuck."""
REDIS_LIMIT_S = 5.0
"""Redis that has not answered a PING for this long is unreachable (one slow PING is not)."""
PROBE_TIMEOUT_S = 3.0
"""How long :func:`probe` waits for an answer."""

Problem = tuple[str, str]
"""``(code, message)`` of what is wrong."""


class WorkerHealth:
    """What the worker's loop last reported (its ticks, Redis's answers); read by the probe server's
    threads."""

    def __init__(
        self,
        *,
        loop_limit_s: float = LOOP_LIMIT_S,
        redis_limit_s: float = REDIS_LIMIT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.loop_limit_s = loop_limit_s
        self.redis_limit_s = redis_limit_s
        self._clock = clock
        self._lock = threading.Lock()
        self._first_tick: float | None = None
        self._last_tick: float | None = None
        self._redis_ok: float | None = None
        self._redis_error = ""

    def tick(self) -> None:
        """The loop runs: called from it, once a second."""
        now = self._clock()
        with self._lock:
            if self._first_tick is None:
                self._first_tick = now
            self._last_tick = now

    def redis_answered(self) -> None:
        with self._lock:
            self._redis_ok = self._clock()
            self._redis_error = ""

    def redis_failed(self, reason: str) -> None:
        with self._lock:
            self._redis_error = reason

    def liveness(self) -> Problem | None:
        """What keeps the worker from being live (its loop is stuck), or None."""
        now = self._clock()
        with self._lock:
            last = self._last_tick
        if last is not None and now - last >= self.loop_limit_s:
            return (
                "event_loop_stalled",
                f"the worker's event loop has not run for {now - last:.0f} s "
                f"(limit {self.loop_limit_s:.0f} s): something blocks it",
            )
        return None

    def started(self) -> bool:
        """Whether the worker's loop has ticked yet."""
        with self._lock:
            return self._first_tick is not None

    def readiness(self) -> Problem | None:
        """What keeps the worker from taking turns (not started, stuck, no Redis), or None."""
        now = self._clock()
        with self._lock:
            first, redis_ok, error = self._first_tick, self._redis_ok, self._redis_error
        if first is None:
            return "starting", "the worker's event loop has not started yet (it starts once Redis answers)"
        if (stuck := self.liveness()) is not None:
            return stuck
        silent = now - (first if redis_ok is None else redis_ok)
        if silent >= self.redis_limit_s:
            never = " since the worker started" if redis_ok is None else ""
            return (
                "redis_unreachable",
                f"Redis has not answered PING for {silent:.0f} s{never} "
                f"(limit {self.redis_limit_s:.0f} s): {error or 'no answer yet'}",
            )
        return None


async def keep_alive(
    health: WorkerHealth, redis: Redis, *, every_s: float = TICK_S, ping_timeout_s: float = PING_TIMEOUT_S
) -> None:
    """Tick and PING Redis every ``every_s`` until cancelled (a task beside the worker)."""
    while True:
        health.tick()
        started = time.monotonic()
        try:
            async with asyncio.timeout(ping_timeout_s):
                await redis.ping()
        except TimeoutError:
            health.redis_failed(f"no answer to PING within {ping_timeout_s:g} s")
        except Exception as exc:
            health.redis_failed(f"{type(exc).__name__}: {exc}"[:300])
        else:
            health.redis_answered()
        await asyncio.sleep(max(0.0, every_s - (time.monotonic() - started)))


def health_app(health: WorkerHealth, other: Callable[..., Iterable[bytes]]) -> Callable[..., Iterable[bytes]]:
    """A WSGI app answering :data:`HEALTH_PATH` and :data:`READY_PATH` from ``health``, every other
    path with ``other``."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO")
        if path == HEALTH_PATH:
            problem, fine = health.liveness(), "ok" if health.started() else "starting"
        elif path == READY_PATH:
            problem, fine = health.readiness(), "ready"
        else:
            return other(environ, start_response)
        body: dict[str, Any]
        if problem is None:
            status, body = "200 OK", {"status": fine}
        else:
            code, message = problem
            status, body = "503 Service Unavailable", {"error": {"code": code, "message": message}}
        data = json.dumps(body).encode()
        start_response(
            status,
            [
                ("Content-Type", "application/json"),
                ("Content-Length", str(len(data))),
                ("Cache-Control", "no-store"),
            ],
        )
        return [] if environ.get("REQUEST_METHOD") == "HEAD" else [data]

    return app


def serve(health: WorkerHealth, port: int, host: str = "127.0.0.1") -> SidePortServer:
    """Serve ``/healthz``, ``/readyz`` and the Prometheus text on ``host:port`` from a thread of its
    own, within :mod:`.side_port`'s bounds (a slow or stalled client costs no thread).

    Raises :class:`OSError` when the port cannot be bound. ``shutdown()`` and ``server_close()`` the
    returned server to stop it (the process's exit does too).
    """
    from prometheus_client import make_wsgi_app

    return SidePortServer(health_app(health, make_wsgi_app()), host, port, name="worker-probe")


def probe_url(host: str, port: int, path: str = HEALTH_PATH) -> str:
    """Where :func:`probe` asks: a worker listening on every address is asked on the loopback one."""
    host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{path}"


def probe(host: str, ports: Sequence[int], *, ready: bool = False, timeout_s: float = PROBE_TIMEOUT_S) -> int:
    """Ask each worker's ``/healthz`` (``/readyz`` when ``ready``); one line each on stdout; 0 when
    every one is live (ready), else 1."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via an HTTP(S)_PROXY
    healthy = True
    for port in ports:
        url = probe_url(host, port, READY_PATH if ready else HEALTH_PATH)
        try:
            with opener.open(url, timeout=timeout_s) as response:
                line = _status(response.read())
        except urllib.error.HTTPError as exc:
            healthy = False
            line = f"{'not ready' if ready else 'unhealthy'} ({exc.code}): {_message(exc.read())}"
        except OSError as exc:  # refused, timed out, unresolvable
            healthy = False
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            line = f"no answer ({reason}): is the worker running with --metrics-port {port}?"
        print(f"{url}: {line}", file=sys.stdout, flush=True)
    return 0 if healthy else 1


def _status(body: bytes) -> str:
    try:
        return str(json.loads(body)["status"])
    except (ValueError, KeyError, TypeError):
        return "ok"


def _message(body: bytes) -> str:
    try:
        return str(json.loads(body)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return body.decode(errors="replace")[:300]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m truloop_assistant.runtime.probe",
        description="Ask running workers' /healthz (each one's --metrics-port): 0 when all are live; "
        "with --ready their /readyz: 0 when all are ready (they reach Redis).",
    )
    parser.add_argument("ports", type=int, nargs="+", metavar="PORT", help="a worker's --metrics-port")
    parser.add_argument("--host", default="127.0.0.1", help="the workers' --metrics-host")
    parser.add_argument(
        "--ready", action="store_true", help="ask for readiness (/readyz) instead of liveness"
    )
    parser.add_argument("--timeout", type=float, default=PROBE_TIMEOUT_S, help="seconds to wait for each")
    args = parser.parse_args(argv)
    return probe(args.host, args.ports, ready=args.ready, timeout_s=args.timeout)


if __name__ == "__main__":
    sys.exit(main())
