"""The cluster client's transactions: queued without a thread per command, same answers and errors."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from redis.exceptions import RedisClusterException, ResponseError

from truloop_assistant.redis_client import connect

pytestmark = pytest.mark.parametrize("redis_url", ["cluster"], indirect=True)

BUMP = "redis.call('INCR', KEYS[1]) return redis.call('GET', KEYS[2])"


async def test_a_transaction_queues_its_commands_without_threads(
    redis: Any, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = []
    start = threading.Thread.start

    def counted(thread: threading.Thread) -> None:
        started.append(thread.name)
        start(thread)

    client = connect(redis_url)
    try:
        await client.ping()  # connected: the slots are known
        monkeypatch.setattr(threading.Thread, "start", counted)
        async with client.pipeline(transaction=True) as pipe:
            pipe.set("{c:1}:a", "1", ex=60)
            pipe.hset("{c:1}:h", mapping={"x": "1", "y": "2"})
            pipe.expire("{c:1}:h", 60)
            pipe.rpush("{c:1}:l", "p", "q")
            pipe.ltrim("{c:1}:l", -1, -1)
            pipe.eval(BUMP, 2, "{c:1}:n", "{c:1}:a")
            pipe.delete("{c:1}:gone", "{c:1}:also-gone")
            pipe.hgetall("{c:1}:h")
            pipe.lindex("{c:1}:l", 0)
            replies = await pipe.execute()
        assert started == []  # redis-py 8 starts one per queued command
        assert replies == [True, 2, True, 2, True, b"1", 0, {b"x": b"1", b"y": b"2"}, b"q"]
    finally:
        await client.aclose()


async def test_keys_in_two_slots_are_still_refused(redis: Any, redis_url: str) -> None:
    client = connect(redis_url)
    try:
        await client.ping()
        with pytest.raises((RedisClusterException, ResponseError)):
            async with client.pipeline(transaction=True) as pipe:
                pipe.set("{c:1}:a", "1")
                pipe.set("{c:2}:a", "1")
                await pipe.execute()
        assert await client.get("{c:1}:a") is None  # nothing of it ran
    finally:
        await client.aclose()


async def test_a_command_it_cannot_place_goes_the_usual_way(redis: Any, redis_url: str) -> None:
    client = connect(redis_url)
    try:
        async with client.pipeline(transaction=True) as pipe:  # before any command: not yet connected
            pipe.set("{c:1}:a", "1")
            pipe.getrange("{c:1}:a", 0, 0)  # not one _Transaction places itself
            assert await pipe.execute() == [True, b"1"]
    finally:
        await client.aclose()


async def test_a_fresh_client_takes_a_burst_of_first_commands(redis: Any, redis_url: str) -> None:
    """A new process's first webhooks all at once: before the warm-up, about one burst in five had a
    first command fail with ``'NoneType' object has no attribute 'writelines'``."""
    for burst in range(10):
        client = connect(redis_url)
        try:
            done = await asyncio.gather(
                *(client.set(f"{{c:{n}}}:first", burst) for n in range(60)), return_exceptions=True
            )
            assert [r for r in done if isinstance(r, BaseException)] == [], burst
            async with client.pipeline(transaction=True) as pipe:  # and its transactions after
                pipe.get("{c:7}:first")
                assert await pipe.execute() == [str(burst).encode()]
        finally:
            await client.aclose()
