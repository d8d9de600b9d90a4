"""The metrics and probe ports under slow clients, over real sockets: the worker's ``--metrics-port``
(``/healthz``, ``/readyz``, ``/metrics``) and ``serve``'s ``TRULOOP_METRICS_PORT`` (``/metrics``).

A connection that sends half a request and stalls costs no thread, is closed once the head deadline
passes, and never keeps a scraper from being answered.
"""

from __future__ import annotations

import selectors
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from truloop_assistant.local.embedded_redis import free_port
from truloop_assistant.runtime.metrics_server import serve_metrics
from truloop_assistant.runtime.probe import WorkerHealth, serve
from truloop_assistant.runtime.side_port import HEAD_TIMEOUT_S, MAX_CONNECTIONS, MAX_HEAD_BYTES

STALLED = 400

SERVERS: dict[str, Callable[[int], Any]] = {
    "worker --metrics-port": lambda port: serve(WorkerHealth(), port),
    "serve TRULOOP_METRICS_PORT": lambda port: serve_metrics(port),
}


@pytest.fixture(params=list(SERVERS))
def port(request: pytest.FixtureRequest) -> Iterator[int]:
    port = free_port()
    server = SERVERS[request.param](port)
    try:
        yield port
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def sockets() -> Iterator[list[socket.socket]]:
    opened: list[socket.socket] = []
    yield opened
    for sock in opened:
        sock.close()


def stall(port: int, opened: list[socket.socket], count: int, data: bytes = b"GET /metr") -> None:
    """Open ``count`` connections that each send ``data`` (half a request line) and nothing more."""
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        opened.append(sock)
        sock.sendall(data)


def scrape(port: int, path: str = "/metrics") -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = httpx.get(f"http://127.0.0.1:{port}{path}", timeout=10)
    return response, time.monotonic() - started


def closed(sock: socket.socket) -> bytes | None:
    """What the server sent before closing, once it has closed; None while it stays open."""
    sock.setblocking(False)
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except BlockingIOError:
        return None
    except ConnectionResetError:
        pass
    return received or b"(closed)"


def wait_all_closed(socks: list[socket.socket], timeout: float) -> dict[socket.socket, bytes]:
    """Each socket's last words, once every one is closed; fails after ``timeout`` seconds."""
    done: dict[socket.socket, bytes] = {}
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            selector.register(sock, selectors.EVENT_READ)
        while len(done) < len(socks):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{len(socks) - len(done)} of {len(socks)} still open after {timeout} s")
            for key, _ in selector.select(min(left, 0.5)):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if (said := closed(sock)) is not None:
                    done[sock] = said
                    selector.unregister(sock)
    return done


def test_stalled_requests_hold_no_thread_are_closed_after_the_deadline_and_scrapes_still_answer(
    port: int, sockets: list[socket.socket]
) -> None:
    before = threading.active_count()
    started = time.monotonic()
    stall(port, sockets, STALLED)

    response, took = scrape(port)  # accepted after every stalled one: they are all in by now
    assert response.status_code == 200 and "# TYPE " in response.text
    assert took < 2, f"a scrape beside {STALLED} stalled connections took {took:.2f} s"
    assert threading.active_count() - before <= 2, f"{threading.active_count() - before} threads more"

    last_words = wait_all_closed(sockets, timeout=HEAD_TIMEOUT_S + 10)
    assert time.monotonic() - started < HEAD_TIMEOUT_S + 10
    timed_out = [said for said in last_words.values() if said.startswith(b"HTTP/1.1 408 ")]
    assert timed_out and all(b'"code":"request_timeout"' in said for said in timed_out)
    assert scrape(port)[0].status_code == 200  # and it goes on answering


def test_beyond_the_bound_the_connection_waiting_longest_is_closed(
    port: int, sockets: list[socket.socket]
) -> None:
    stall(port, sockets, MAX_CONNECTIONS)
    response, _ = scrape(port, "/metrics")  # one more than the bound: the oldest stalled one makes room
    assert response.status_code == 200
    [said] = wait_all_closed(sockets[:1], timeout=5).values()
    assert said == b"(closed)"
    assert closed(sockets[-1]) is None  # the newest still has its time


def test_a_request_that_arrives_slowly_but_in_time_is_answered(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        for piece in (b"GET /met", b"rics HTTP/1.1\r\n", b"Host: x\r\n", b"\r\n"):
            sock.sendall(piece)
            time.sleep(HEAD_TIMEOUT_S / 10)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and b"# TYPE " in answer


def test_a_head_too_large_is_refused(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /metrics HTTP/1.1\r\nX-Pad: " + b"a" * MAX_HEAD_BYTES + b"\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert b'"code":"headers_too_large"' in answer


def test_a_bad_request_line_is_a_400(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"NONSENSE\r\n\r\n")
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 400 "), answer
