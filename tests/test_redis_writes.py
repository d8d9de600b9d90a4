"""The client's writes: a command goes to the socket at once, one the socket cannot take at once is
waited for within ``socket_timeout``, and a Redis that stops reading fails the command in time."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from redis.exceptions import TimeoutError as RedisTimeoutError

from tests.support import ON_STANDALONE_AND_CLUSTER
from truloop_assistant.local.embedded_redis import RedisServer
from truloop_assistant.redis_client import connect

BIG = 48 * 1024 * 1024
"""More than the kernel's socket buffers on both sides hold: the write has to wait for Redis to read."""


@pytest.fixture
def server() -> Iterator[RedisServer]:
    with RedisServer() as redis_server:
        yield redis_server


@ON_STANDALONE_AND_CLUSTER
async def test_commands_small_and_large_go_out_whole_and_in_order(redis: Any, redis_url: str) -> None:
    client = connect(redis_url, socket_timeout=10, health_check_interval=30)
    try:
        value = bytes(range(256)) * (BIG // 256)
        async with client.pipeline(transaction=False) as pipe:
            pipe.set("{c:w}:small", "1")
            pipe.set("{c:w}:big", value)  # the socket takes it in parts
            pipe.incr("{c:w}:small")
            replies = await pipe.execute()
        assert replies == [True, True, 2]
        assert await client.get("{c:w}:big") == value
        assert await client.strlen("{c:w}:big") == BIG
        for i in range(200):  # many small ones after it, each answered in turn
            assert await client.incr("{c:w}:small") == 3 + i
    finally:
        await client.aclose()


async def test_a_redis_that_stops_reading_fails_the_command_in_time_and_the_client_goes_on(
    server: RedisServer,
) -> None:
    client = connect(server.url, socket_timeout=0.5)
    try:
        await client.set("k", "before")
        server.pause()
        try:
            started = time.monotonic()
            with pytest.raises(RedisTimeoutError, match="writing"):  # waited at the write, not after it
                await client.set("big", b"x" * BIG)
            waited = time.monotonic() - started
        finally:
            server.resume()
        assert waited < 3.0, f"the command failed after {waited:.1f} s"
        # The half-sent command's connection was dropped: the next command gets a clean one.
        assert await client.get("k") == b"before"
        assert await client.set("k", "after")
        assert await client.get("k") == b"after"
    finally:
        await client.aclose()
