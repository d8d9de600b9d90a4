"""Request head limits (431) and arrival deadlines (408 and close), over raw sockets to a real server."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from fastapi import FastAPI

from tests.support import JWT_SECRET, serve
from truloop_assistant.api.http_limits import MAX_HEAD_BYTES, MAX_HEADER_FIELDS, limited_protocol
from truloop_assistant.app import create_app
from truloop_assistant.config import load_settings
from truloop_assistant.local.embedded_redis import free_port

BOUND = 0.5  # the lowered head and body deadline these tests run with


@pytest.fixture
def app(redis_url: str) -> FastAPI:
    return create_app(load_settings(channel="local", redis_url=redis_url, jwt_secret=JWT_SECRET))


@asynccontextmanager
async def server(app: FastAPI, *, bound: float | None = None) -> AsyncIterator[int]:
    """The app on a free port: with the shipped limits, or with head and body deadlines of ``bound``."""
    port = free_port()
    if bound is None:
        async with serve(app, port):
            yield port
    else:
        async with serve(app, port, http=limited_protocol(head_timeout=bound, body_timeout=bound)):
            yield port


async def connect(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port)


def request_head(*, size: int | None = None, fields: int = 1, path: bytes = b"/healthz") -> bytes:
    """A GET head with ``fields`` header fields, or two fields padded to exactly ``size`` bytes."""
    lines = [b"GET " + path + b" HTTP/1.1", b"Host: test"]
    lines += [b"X-Field-%d: %d" % (i, i) for i in range(fields - 1)]
    if size is not None:
        used = len(b"\r\n".join(lines)) + len(b"\r\nX-Pad: ") + len(b"\r\n\r\n")
        lines.append(b"X-Pad: " + b"a" * (size - used))
    head = b"\r\n".join(lines) + b"\r\n\r\n"
    assert size is None or len(head) == size
    return head


async def read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], Any]:
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    status_line, *lines = head.decode("latin-1").strip().split("\r\n")
    headers = {name.lower(): value.strip() for name, value in (line.split(":", 1) for line in lines)}
    body = await asyncio.wait_for(reader.readexactly(int(headers["content-length"])), 5)
    return int(status_line.split()[1]), headers, json.loads(body)


async def until_closed(reader: asyncio.StreamReader, within: float = 5) -> bytes:
    """Everything the server sends until it closes the connection (fails if it is still open)."""
    received = bytearray()

    async def read_all() -> None:
        while chunk := await reader.read(65536):
            received.extend(chunk)

    try:
        await asyncio.wait_for(read_all(), within)
    except ConnectionResetError:
        pass  # a reset after the answer: what came before it still counts
    return bytes(received)


async def trickle(writer: asyncio.StreamWriter, data: bytes, every: float = 0.05) -> None:
    """Send one byte at a time until all is sent or the server hangs up."""
    try:
        for i in range(len(data)):
            writer.write(data[i : i + 1])
            await writer.drain()
            await asyncio.sleep(every)
    except ConnectionError:
        pass


def error_of(response: bytes) -> tuple[int, str, str]:
    """Status, error code and connection header of a raw error response."""
    head, _, body = response.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, value in (line.split(":", 1) for line in lines)}
    return int(status_line.split()[1]), json.loads(body)["error"]["code"], headers["connection"]


@pytest.mark.parametrize(
    ("head", "status"),
    [
        (request_head(size=MAX_HEAD_BYTES), 200),
        (request_head(fields=MAX_HEADER_FIELDS), 200),
        (request_head(size=MAX_HEAD_BYTES + 1), 431),
        (request_head(fields=MAX_HEADER_FIELDS + 1), 431),
    ],
    ids=["16-kib", "100-fields", "16-kib-plus-one", "101-fields"],
)
@pytest.mark.parametrize("pieces", [1, 3], ids=["at-once", "in-pieces"])
async def test_heads_up_to_16_kib_and_100_fields_are_served_and_larger_ones_get_431(
    app: FastAPI, head: bytes, status: int, pieces: int
) -> None:
    async with server(app) as port:
        reader, writer = await connect(port)
        step = -(-len(head) // pieces)
        for i in range(0, len(head), step):
            writer.write(head[i : i + step])
            await writer.drain()
            await asyncio.sleep(0.02)  # separate reads on the server's side
        if status == 200:
            assert (await read_response(reader))[::2] == (200, {"status": "ok"})
        else:
            assert error_of(await until_closed(reader)) == (431, "headers_too_large", "close")
        writer.close()


async def test_a_header_streamed_far_past_the_limit_is_refused_with_431_before_it_is_read(
    app: FastAPI,
) -> None:
    async with server(app) as port:
        reader, writer = await connect(port)

        async def stream() -> int:
            sent = 0
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: test\r\nX-Huge: ")
            try:
                while sent < 64 * 1024 * 1024 and not reader.at_eof():
                    writer.write(b"a" * 65536)
                    await writer.drain()
                    sent += 65536
            except ConnectionError:
                pass
            return sent

        sender = asyncio.create_task(stream())
        assert error_of(await until_closed(reader)) == (431, "headers_too_large", "close")
        writer.close()
        assert await sender < 64 * 1024 * 1024  # the server hung up long before the header ended


async def test_a_head_sent_byte_by_byte_slower_than_the_bound_gets_408_and_is_closed(app: FastAPI) -> None:
    loop = asyncio.get_running_loop()
    async with server(app, bound=BOUND) as port:
        reader, writer = await connect(port)
        start = loop.time()
        sender = asyncio.create_task(trickle(writer, request_head(fields=20)))  # 4 s at this pace
        answer = await until_closed(reader)
        elapsed = loop.time() - start
        assert not sender.done()  # cut off mid-head, not answered after it
        sender.cancel()
        writer.close()
    assert error_of(answer) == (408, "request_timeout", "close")
    assert BOUND <= elapsed < BOUND + 2


async def test_a_body_sent_slower_than_the_bound_gets_408_and_is_closed(app: FastAPI) -> None:
    loop = asyncio.get_running_loop()
    body = b'{"jsonrpc":"2.0","id":"call_1","result":{}}'
    async with server(app, bound=BOUND) as port:
        reader, writer = await connect(port)
        writer.write(
            b"POST /api/v1/agent/tool-message HTTP/1.1\r\nHost: test\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
        )
        start = loop.time()
        sender = asyncio.create_task(trickle(writer, body))  # 2 s at this pace
        answer = await until_closed(reader)
        elapsed = loop.time() - start
        assert not sender.done()
        sender.cancel()
        writer.close()
    assert error_of(answer) == (408, "request_timeout", "close")
    assert BOUND <= elapsed < BOUND + 2


async def test_a_connection_that_never_sends_a_byte_is_closed_without_an_answer(app: FastAPI) -> None:
    loop = asyncio.get_running_loop()
    async with server(app, bound=BOUND) as port:
        reader, writer = await connect(port)
        start = loop.time()
        assert await until_closed(reader) == b""
        assert BOUND <= loop.time() - start < BOUND + 2
        writer.close()


async def test_a_keep_alive_connection_serves_request_after_request(app: FastAPI) -> None:
    post = (
        b"POST /api/v1/agent/tool-message HTTP/1.1\r\nHost: test\r\n"
        b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n"
    )
    async with server(app, bound=BOUND) as port:
        reader, writer = await connect(port)
        writer.write(request_head())
        assert (await read_response(reader))[0] == 200
        # Idle between requests longer than the head bound: that is keep-alive time, not head time.
        await asyncio.sleep(BOUND * 2)
        writer.write(request_head())
        assert (await read_response(reader))[0] == 200
        # A head and a body in pieces, each well within the bound.
        writer.write(post[:20])
        await asyncio.sleep(BOUND / 5)
        writer.write(post[20:] + b"{")
        await asyncio.sleep(BOUND / 5)
        writer.write(b"}")
        status, _, error = await read_response(reader)
        assert (status, error["error"]["code"]) == (401, "unauthorized")
        # A body of many reads.
        big = b'{"pad":"' + b"a" * 200_000 + b'"}'
        writer.write(post.replace(b"Content-Length: 2", b"Content-Length: %d" % len(big)) + big)
        status, _, error = await read_response(reader)
        assert (status, error["error"]["code"]) == (401, "unauthorized")
        # Pipelined requests in one write.
        writer.write(request_head() * 3)
        assert [(await read_response(reader))[0] for _ in range(3)] == [200, 200, 200]
        writer.write(request_head())
        assert (await read_response(reader))[0] == 200
        assert not reader.at_eof()
        writer.close()


def open_handles() -> int | None:
    """File handles this process holds (the server runs in it), where the platform can tell."""
    return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None


async def test_many_slow_connections_are_all_closed_after_the_bound(app: FastAPI) -> None:
    n = 200
    loop = asyncio.get_running_loop()
    async with server(app, bound=BOUND) as port:
        before = open_handles()
        start = loop.time()
        clients = []
        for _ in range(n):  # each begins its request at once (a silent connection is just closed)
            reader, writer = await connect(port)
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: test\r\nX-Slow: ")
            clients.append((reader, writer))
        answers = await asyncio.gather(*(until_closed(reader, within=10) for reader, _ in clients))
        elapsed = loop.time() - start
        for _, writer in clients:
            writer.close()
        assert sum(error_of(a)[:2] == (408, "request_timeout") for a in answers) == n
        assert elapsed < BOUND + 5
        if before is not None:
            # The server lets go of its side of every connection too (it drains until the client's close).
            for _ in range(100):
                if (after := open_handles()) is not None and after <= before:
                    break
                await asyncio.sleep(0.05)
            assert open_handles() == before
