"""The rate limiter on its own, against a real Redis and a real Redis Cluster: an exact moving
window per user and scope, one script call per request."""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import cast

import pytest
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from tests.support import ON_STANDALONE_AND_CLUSTER, make_settings
from truloop_assistant.local.embedded_redis import free_port
from truloop_assistant.ratelimit import RateLimiter
from truloop_assistant.redis_client import connect, is_cluster
from truloop_assistant.redis_outage import outage_error
from truloop_assistant.store import keys

pytestmark = ON_STANDALONE_AND_CLUSTER


class Clock:
    """A clock the test moves by hand (Unix seconds)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def limiter(
    redis: Redis,
    redis_url: str,
    *,
    user: str = "3/minute",
    admin: str = "5/minute",
    clock: Callable[[], float] = time.time,
) -> RateLimiter:
    settings = make_settings(redis_url, "http://127.0.0.1:9", rate_limit_user=user, rate_limit_admin=admin)
    return RateLimiter(settings, redis, clock=clock)


async def rate_keys(redis: Redis) -> list[bytes]:
    return sorted([key async for key in redis.scan_iter(match=f"{keys.rate_limit_prefix()}:*", count=1000)])


@asynccontextmanager
async def primaries(redis: Redis, redis_url: str) -> AsyncIterator[list[Redis]]:
    """A plain client to each primary (one for a standalone server)."""
    if not is_cluster(redis_url):
        yield [redis]
        return
    nodes = [Redis(host=node.host, port=node.port) for node in cast(RedisCluster, redis).get_primaries()]
    try:
        yield nodes
    finally:
        for node in nodes:
            await node.aclose()


async def commandstats(nodes: list[Redis]) -> Counter[str]:
    calls: Counter[str] = Counter()
    for node in nodes:
        for name, stats in (await node.info("commandstats")).items():
            calls[name.removeprefix("cmdstat_")] += int(stats["calls"])
    return calls


async def test_the_window_is_exact_at_its_boundary(redis: Redis, redis_url: str) -> None:
    clock = Clock(time.time())
    start = clock.now
    rl = limiter(redis, redis_url, clock=clock)
    decisions = []
    for offset in (0.0, 0.25, 10.0):
        clock.now = start + offset
        decisions.append(await rl.hit("jeff", scope="turns"))
    assert [(d.allowed, d.remaining) for d in decisions] == [(True, 2), (True, 1), (True, 0)]
    assert {d.reset_at for d in decisions} == {math.ceil(start + 60)}  # when the first one leaves

    # The first request is counted up to and including 60 s after it, and not a microsecond longer.
    clock.now = start + 60.0
    refused = await rl.hit("jeff", scope="turns")
    assert (refused.allowed, refused.remaining, refused.reset_at) == (False, 0, math.ceil(start + 60))
    clock.now = start + 60.000001
    again = await rl.hit("jeff", scope="turns")
    assert (again.allowed, again.remaining) == (True, 0)
    assert again.reset_at == math.ceil(start + 60.25)  # now the second one is the oldest
    clock.now = start + 60.2
    assert not (await rl.hit("jeff", scope="turns")).allowed
    clock.now = start + 60.26
    assert (await rl.hit("jeff", scope="turns")).allowed


async def test_refused_requests_do_not_count(redis: Redis, redis_url: str) -> None:
    clock = Clock(time.time())
    start = clock.now
    rl = limiter(redis, redis_url, user="2/minute", clock=clock)
    for offset in (0, 1):
        clock.now = start + offset
        assert (await rl.hit("jeff", scope="turns")).allowed
    for offset in range(2, 60):  # one a second, all refused
        clock.now = start + offset
        assert not (await rl.hit("jeff", scope="turns")).allowed
    # Only the two allowed ones were counted: one slot frees up as each leaves the window.
    clock.now = start + 60.5
    assert (await rl.hit("jeff", scope="turns")).allowed
    clock.now = start + 61.5
    assert (await rl.hit("jeff", scope="turns")).allowed
    [key] = await rate_keys(redis)
    assert await redis.zcard(key) == 2


async def test_concurrent_requests_get_exactly_the_limit(redis: Redis, redis_url: str) -> None:
    rl = limiter(redis, redis_url, user="20/minute")
    decisions = await asyncio.gather(*(rl.hit("jeff", scope="turns") for _ in range(50)))
    allowed = [d for d in decisions if d.allowed]
    assert len(allowed) == 20
    assert sorted(d.remaining for d in allowed) == list(range(20))
    assert {d.remaining for d in decisions if not d.allowed} == {0}
    [key] = await rate_keys(redis)
    assert await redis.zcard(key) == 20


async def test_requests_in_the_same_instant_each_count(redis: Redis, redis_url: str) -> None:
    rl = limiter(redis, redis_url, user="3/minute", clock=Clock(time.time()))
    decisions = await asyncio.gather(*(rl.hit("jeff", scope="turns") for _ in range(4)))
    assert [d.allowed for d in decisions].count(True) == 3


async def test_remaining_reset_and_retry_after(redis: Redis, redis_url: str) -> None:
    rl = limiter(redis, redis_url)
    before = time.time()
    decisions = [await rl.hit("jeff", scope="calls") for _ in range(4)]
    after = time.time()
    assert [d.remaining for d in decisions] == [2, 1, 0, 0]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert {d.limit for d in decisions} == {3}
    assert {d.reset_at for d in decisions} == {decisions[0].reset_at}
    assert math.ceil(before + 60) <= decisions[0].reset_at <= math.ceil(after + 60)
    limited = decisions[-1].headers()
    assert limited["X-RateLimit-Limit"] == "3" and limited["X-RateLimit-Remaining"] == "0"
    assert 59 <= int(limited["Retry-After"]) <= 61
    assert "Retry-After" not in decisions[0].headers()


async def test_admins_get_the_admin_limit_and_each_user_and_scope_its_own_window(
    redis: Redis, redis_url: str
) -> None:
    rl = limiter(redis, redis_url, user="2/minute", admin="4/minute")
    assert (rl.window_s(), rl.window_s(admin=True)) == (60, 60)
    boss = [await rl.hit("boss", scope="turns", admin=True) for _ in range(5)]
    assert [d.allowed for d in boss] == [True] * 4 + [False]
    assert {d.limit for d in boss} == {4}
    jeff = [await rl.hit("jeff", scope="turns") for _ in range(3)]
    assert [d.allowed for d in jeff] == [True, True, False]
    assert {d.limit for d in jeff} == {2}
    assert (await rl.hit("mina", scope="turns")).remaining == 1
    assert (await rl.hit("jeff", scope="calls")).remaining == 1


async def test_every_window_expires(redis: Redis, redis_url: str) -> None:
    rl = limiter(redis, redis_url, user="2/second", admin="5/minute")
    await rl.hit("jeff", scope="turns")
    await rl.hit("boss", scope="turns", admin=True)
    found = await rate_keys(redis)
    assert len(found) == 2
    ttls = sorted([await redis.pttl(key) for key in found])
    assert 0 < ttls[0] <= 1000 and 59_000 < ttls[1] <= 60_000
    # A refused request does not keep the window alive.
    await rl.hit("jeff", scope="turns")
    await asyncio.sleep(0.5)
    assert not (await rl.hit("jeff", scope="turns")).allowed
    await asyncio.sleep(0.6)
    assert len(await rate_keys(redis)) == 1


async def test_one_script_call_per_request_whatever_the_limit(redis: Redis, redis_url: str) -> None:
    async with primaries(redis, redis_url) as nodes:
        for limit in ("20/minute", "1000000/minute"):
            rl = limiter(redis, redis_url, user=limit)
            await rl.hit("warm-up", scope="turns")  # the script is loaded
            before = await commandstats(nodes)
            for _ in range(30):
                await rl.hit(f"jeff-{limit}", scope="turns")
            calls = await commandstats(nodes) - before
            calls["info"] -= len(nodes)
            assert calls["evalsha"] == 30, limit
            assert calls.total() - calls["evalsha"] <= 5 * 30, (limit, +calls)
            assert +calls <= Counter(
                evalsha=30, zremrangebyscore=30, zcard=30, zadd=30, pexpire=30, zrange=30
            ), limit


async def test_a_redis_that_forgot_the_script_gets_it_again(redis: Redis, redis_url: str) -> None:
    rl = limiter(redis, redis_url)
    assert (await rl.hit("jeff", scope="turns")).remaining == 2
    # As after a restart or a failover: every primary's script cache is empty.
    async with primaries(redis, redis_url) as nodes:
        for node in nodes:
            await node.script_flush()
    assert (await rl.hit("jeff", scope="turns")).remaining == 1
    assert (await rl.hit("jeff", scope="turns")).remaining == 0


async def test_an_unreachable_redis_is_an_outage_for_the_caller(redis_url: str) -> None:
    # The client's own error, unwrapped: callers take it for an outage (503, one log line).
    scheme = "redis+cluster" if is_cluster(redis_url) else "redis"
    url = f"{scheme}://127.0.0.1:{free_port()}"  # nothing listens there
    client = connect(url)
    try:
        rl = limiter(client, url)
        with pytest.raises(Exception) as caught:
            await rl.hit("jeff", scope="turns")
        assert outage_error(caught.value) is not None
        if not is_cluster(url):
            assert isinstance(caught.value, RedisConnectionError)
    finally:
        await client.aclose()


async def test_a_wrongly_typed_key_is_a_redis_error(redis: Redis, redis_url: str) -> None:
    rl = limiter(redis, redis_url)
    await rl.hit("jeff", scope="turns")
    [key] = await rate_keys(redis)
    await redis.set(key, "x", ex=60)
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        await rl.hit("jeff", scope="turns")
