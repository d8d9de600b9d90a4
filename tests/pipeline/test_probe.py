"""The worker's health: ``/healthz`` (liveness) fails when the loop is stuck, not only when the process
is gone, and stays up while Redis is; ``/readyz`` (readiness) fails while Redis does not answer too.

A real ``truloop-assistant worker --metrics-port P`` against a Redis the test stalls and stops, and a
real event loop in a thread that the test blocks; every wait is for a condition, with a deadline.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from truloop_assistant.local.embedded_redis import RedisServer, free_port
from truloop_assistant.redis_client import connect
from truloop_assistant.runtime.probe import (
    LOOP_LIMIT_S,
    PING_TIMEOUT_S,
    REDIS_LIMIT_S,
    TICK_S,
    WorkerHealth,
    keep_alive,
    probe,
    probe_url,
    serve,
)

T = TypeVar("T")
SECRET = "s" * 32


def wait_until(check: Callable[[], T | None], *, timeout: float, what: str) -> T:
    """``check()``'s first truthy result; fails after ``timeout`` seconds saying ``what`` was awaited."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            last = check()
        except (httpx.HTTPError, OSError) as exc:
            last = exc
        else:
            if last:
                return last
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:.0f} s for {what}; last: {last!r}")
        time.sleep(0.05)


def ask(http: httpx.Client, port: int, path: str = "/healthz") -> httpx.Response:
    return http.get(f"http://127.0.0.1:{port}{path}")


def status(http: httpx.Client, port: int, code: int, path: str = "/healthz") -> httpx.Response | None:
    r = ask(http, port, path)
    return r if r.status_code == code else None


def ready(http: httpx.Client, port: int, code: int) -> httpx.Response | None:
    return status(http, port, code, "/readyz")


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=5, trust_env=False) as client:
        yield client


# --- the verdict, on a clock the test moves ---------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_verdict_names_what_is_wrong_and_since_when() -> None:
    clock = Clock()
    health = WorkerHealth(clock=clock)

    assert health.liveness() is None and not health.started()  # starting: live, not ready
    code, message = health.readiness() or ("", "")
    assert code == "starting" and "not started yet" in message

    health.tick()
    health.redis_answered()
    assert health.liveness() is None and health.readiness() is None and health.started()

    clock.now += REDIS_LIMIT_S - 0.1  # the loop ticks, a PING fails: one slow PING is not an outage
    health.tick()
    health.redis_failed("no answer to PING within 2 s")
    assert health.readiness() is None
    clock.now += 0.1
    health.tick()
    assert health.readiness() == (
        "redis_unreachable",
        f"Redis has not answered PING for 5 s (limit {REDIS_LIMIT_S:.0f} s): no answer to PING within 2 s",
    )
    assert health.liveness() is None  # Redis gone: still live, a restart would not bring it back
    health.redis_answered()
    assert health.readiness() is None

    clock.now += LOOP_LIMIT_S  # no tick for the loop limit: stuck, whatever Redis last said
    for verdict in (health.liveness(), health.readiness()):
        code, message = verdict or ("", "")
        assert code == "event_loop_stalled"
        assert message.startswith(f"the worker's event loop has not run for {LOOP_LIMIT_S:.0f} s")


def test_redis_that_never_answered_counts_from_the_first_tick() -> None:
    clock = Clock()
    health = WorkerHealth(clock=clock)
    health.tick()
    health.redis_failed("ConnectionError: Error 111 connecting to 127.0.0.1:1. Connection refused.")
    assert health.readiness() is None
    clock.now += REDIS_LIMIT_S
    health.tick()
    code, message = health.readiness() or ("", "")
    assert code == "redis_unreachable"
    assert "since the worker started" in message and "Connection refused" in message
    assert health.liveness() is None


def test_the_probe_asks_the_loopback_address_of_a_worker_listening_everywhere() -> None:
    assert probe_url("0.0.0.0", 9100) == "http://127.0.0.1:9100/healthz"
    assert probe_url("", 9100) == "http://127.0.0.1:9100/healthz"
    assert probe_url("::", 9101) == "http://[::1]:9101/healthz"
    assert probe_url("worker-3", 9100) == "http://worker-3:9100/healthz"
    assert probe_url("0.0.0.0", 9100, "/readyz") == "http://127.0.0.1:9100/readyz"


# --- a real event loop in a thread, blocked by the test ----------------------------------------------


@contextmanager
def loop_in_thread() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="probe-test-loop", daemon=True)
    thread.start()
    try:
        yield loop
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


@contextmanager
def ticking(health: WorkerHealth, redis_url: str) -> Iterator[asyncio.AbstractEventLoop]:
    """:func:`keep_alive` in a loop of its own thread (as in the worker), PINGing ``redis_url``."""

    async def run() -> None:
        client = connect(redis_url, socket_connect_timeout=1)
        try:
            await keep_alive(health, client, every_s=0.05, ping_timeout_s=0.5)
        finally:
            await client.aclose()

    async def start() -> asyncio.Task[None]:
        return asyncio.create_task(run())

    async def stop(task: asyncio.Task[None]) -> None:
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task

    with loop_in_thread() as loop:
        task = asyncio.run_coroutine_threadsafe(start(), loop).result(10)
        try:
            yield loop
        finally:
            asyncio.run_coroutine_threadsafe(stop(task), loop).result(10)


@contextmanager
def probe_server(health: WorkerHealth) -> Iterator[int]:
    port = free_port()
    server = serve(health, port)
    try:
        yield port
    finally:
        server.shutdown()
        server.server_close()


def test_a_stuck_event_loop_fails_the_probe_and_a_freed_one_passes_again(
    redis_url: str, http: httpx.Client, capsys: pytest.CaptureFixture[str]
) -> None:
    health = WorkerHealth(loop_limit_s=0.5)
    release = threading.Event()
    with probe_server(health) as port, ticking(health, redis_url) as loop:
        wait_until(lambda: ready(http, port, 200), timeout=10, what="ready once the loop ticks")
        assert probe("127.0.0.1", [port]) == 0
        assert probe("127.0.0.1", [port], ready=True) == 0
        out = capsys.readouterr().out
        assert out == f"http://127.0.0.1:{port}/healthz: ok\nhttp://127.0.0.1:{port}/readyz: ready\n"

        loop.call_soon_threadsafe(release.wait)  # a blocking call inside the loop: it stops ticking
        try:
            stalled = wait_until(lambda: status(http, port, 503), timeout=10, what="503 for a stuck loop")
            assert stalled.json()["error"]["code"] == "event_loop_stalled", stalled.text
            assert probe("127.0.0.1", [port]) == 1
            out = capsys.readouterr().out
            assert out.startswith(f"http://127.0.0.1:{port}/healthz: unhealthy (503): the worker's event")
            assert ready(http, port, 503), "a stuck loop is not ready either"
        finally:
            release.set()
        wait_until(lambda: status(http, port, 200), timeout=10, what="200 once the loop runs again")


def test_a_redis_that_does_not_answer_fails_readiness_not_liveness(
    http: httpx.Client, capsys: pytest.CaptureFixture[str]
) -> None:
    health = WorkerHealth(redis_limit_s=0.3)
    with probe_server(health) as port, ticking(health, f"redis://127.0.0.1:{free_port()}/0"):
        failing = wait_until(
            lambda: (
                (r := ask(http, port, "/readyz")).status_code == 503 and "redis_unreachable" in r.text and r
            ),
            timeout=10,
            what="503 redis_unreachable",
        )
        error = failing.json()["error"]
        assert error["code"] == "redis_unreachable"
        assert "since the worker started" in error["message"] and "ConnectionError" in error["message"]
        assert failing.headers["content-type"] == "application/json"
        live = ask(http, port)
        assert (live.status_code, live.json()) == (200, {"status": "ok"})
        assert probe("127.0.0.1", [port]) == 0
        assert probe("127.0.0.1", [port], ready=True) == 1
        out = capsys.readouterr().out.splitlines()
        assert out[0] == f"http://127.0.0.1:{port}/healthz: ok"
        assert out[1].startswith(
            f"http://127.0.0.1:{port}/readyz: not ready (503): Redis has not answered PING"
        )


def test_metrics_keep_their_port_and_the_probe_answers_head(http: httpx.Client) -> None:
    health = WorkerHealth()
    with probe_server(health) as port:
        metrics = http.get(f"http://127.0.0.1:{port}/metrics")
        assert metrics.status_code == 200 and "# TYPE " in metrics.text
        starting = http.head(f"http://127.0.0.1:{port}/readyz")
        assert starting.status_code == 503 and starting.content == b""
        live = http.get(f"http://127.0.0.1:{port}/healthz")  # live while it starts (e.g. waits for Redis)
        assert (live.status_code, live.json()) == (200, {"status": "starting"})


def test_the_probe_without_a_worker_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    assert probe("127.0.0.1", [port], timeout_s=1) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"http://127.0.0.1:{port}/healthz: no answer (")
    assert f"is the worker running with --metrics-port {port}?" in out


# --- a real worker process --------------------------------------------------------------------------


class Worker:
    """``truloop-assistant worker --metrics-port P``; its output goes to a file (read on failure)."""

    def __init__(self, tmp_path: Path, redis_url: str, metrics_port: int) -> None:
        self.log = tmp_path / "worker.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")}
        env |= {"TRULOOP_REDIS_URL": redis_url, "TRULOOP_CHANNEL": "local", "TRULOOP_JWT_SECRET": SECRET}
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "truloop_assistant.cli", "worker", "--concurrency", "4",
                 "--metrics-port", str(metrics_port)],
                env=env, cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stopped(self, *, within_s: float) -> int:
        """Its exit code once it stops; a failure showing what it printed if it does not in time."""
        try:
            return self.proc.wait(within_s)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the worker did not stop within {within_s:g} s:\n{self.output()}") from None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def run_probe(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=30)


def test_a_worker_without_redis_stays_live_is_not_ready_and_is_ready_again_when_redis_is_back(
    tmp_path: Path, http: httpx.Client
) -> None:
    port = free_port()
    # The worker's own Redis, which the test freezes and stops (the suite's stays untouched).
    with RedisServer() as redis_server:
        worker = Worker(tmp_path, redis_server.url, port)
        try:
            bound = REDIS_LIMIT_S + PING_TIMEOUT_S + TICK_S + 3  # limit, a PING in flight, a tick, slack
            wait_until(lambda: ready(http, port, 200), timeout=60, what="a ready worker")
            assert ask(http, port).json() == {"status": "ok"}, worker.output()
            assert ask(http, port, "/readyz").json() == {"status": "ready"}
            metrics = http.get(f"http://127.0.0.1:{port}/metrics")
            assert metrics.status_code == 200 and "truloop_" in metrics.text

            cli = ["-m", "truloop_assistant.cli", "worker", "--metrics-port", str(port), "--probe"]
            module = ["-m", "truloop_assistant.runtime.probe"]
            for probe_command, path, answer in (
                (cli, "healthz", "ok"),
                ([*cli, "--ready"], "readyz", "ready"),
                ([*module, str(port)], "healthz", "ok"),
                ([*module, "--ready", str(port)], "readyz", "ready"),
            ):
                done = run_probe(*probe_command)
                assert (done.returncode, done.stdout) == (0, f"http://127.0.0.1:{port}/{path}: {answer}\n"), (
                    done
                )

            redis_server.pause()  # a stall: connections stay open, nothing is answered
            started = time.monotonic()
            try:
                stalled = wait_until(
                    lambda: ready(http, port, 503), timeout=bound, what="not ready on a stall"
                )
                assert time.monotonic() - started < bound
                error = stalled.json()["error"]
                assert error["code"] == "redis_unreachable", error
                assert error["message"].startswith("Redis has not answered PING for ")
                assert status(http, port, 200), "a stalled Redis leaves the worker live"
                done = run_probe("-m", "truloop_assistant.runtime.probe", "--ready", str(port))
                assert done.returncode == 1
                assert done.stdout.startswith(
                    f"http://127.0.0.1:{port}/readyz: not ready (503): Redis has not answered PING"
                )
                done = run_probe("-m", "truloop_assistant.runtime.probe", str(port))
                assert (done.returncode, done.stdout) == (0, f"http://127.0.0.1:{port}/healthz: ok\n"), done
            finally:
                redis_server.resume()
            wait_until(lambda: ready(http, port, 200), timeout=30, what="ready once Redis answers again")

            redis_server.kill()  # gone: refused connections
            started = time.monotonic()
            gone = wait_until(lambda: ready(http, port, 503), timeout=bound, what="not ready without Redis")
            assert time.monotonic() - started < bound
            assert gone.json()["error"]["code"] == "redis_unreachable", gone.text
            assert worker.proc.poll() is None, worker.output()
            assert status(http, port, 200), "a stopped Redis leaves the worker live"

            redis_server.restart()
            wait_until(lambda: ready(http, port, 200), timeout=30, what="ready once Redis is back")
            assert "Redis is back" in worker.output()
            worker.proc.send_signal(signal.SIGTERM)
            assert worker.stopped(within_s=60) == 0, worker.output()
        finally:
            worker.kill()
