"""The CPU one Redis round trip costs the process that sends it: the server's client
(``redis_client.connect``) beside redis-py's own with the same options, on uvloop as the server runs.

A command alone (``GET``) and a pipeline of three, against a Redis started for the run on 127.0.0.1;
rounds of the two clients interleaved, the median of each printed (user + system CPU per round
trip, from ``getrusage``)::

    .venv/bin/python -m benchmarks.redis_client [--rounds 7] [--trips 5000]
"""

from __future__ import annotations

import argparse
import resource
import statistics
from collections.abc import Awaitable, Callable

import uvloop
from redis.asyncio import Redis

from truloop_assistant.local.embedded_redis import RedisServer
from truloop_assistant.redis_client import connect

OPTIONS = {"socket_timeout": 10, "health_check_interval": 30}
"""What the server's processes open Redis with (``services.py``)."""


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def per_trip(trip: Callable[[], Awaitable[object]], trips: int) -> float:
    """CPU seconds per round trip over ``trips`` of them."""
    started = cpu_s()
    for _ in range(trips):
        await trip()
    return (cpu_s() - started) / trips


async def measure(url: str, rounds: int, trips: int) -> dict[str, dict[str, list[float]]]:
    clients = {
        "server's client": connect(url, **OPTIONS),
        "redis-py's own": Redis.from_url(url, **OPTIONS),
    }
    figures: dict[str, dict[str, list[float]]] = {name: {"alone": [], "pipeline": []} for name in clients}
    for client in clients.values():
        await client.set("bench:k", "v")

    def alone(client: Redis) -> Callable[[], Awaitable[object]]:
        return lambda: client.get("bench:k")

    def pipeline(client: Redis) -> Callable[[], Awaitable[object]]:
        async def trip() -> object:
            async with client.pipeline(transaction=False) as pipe:
                pipe.get("bench:k").incr("bench:n").hget("bench:h", "f")
                return await pipe.execute()

        return trip

    try:
        for client in clients.values():  # warm up: connections open, code paths hot
            await per_trip(alone(client), trips // 5)
        for _ in range(rounds):
            for name, client in clients.items():
                figures[name]["alone"].append(await per_trip(alone(client), trips))
                figures[name]["pipeline"].append(await per_trip(pipeline(client), trips))
    finally:
        for client in clients.values():
            await client.aclose()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--trips", type=int, default=5000, help="round trips per client and round")
    args = parser.parse_args()
    with RedisServer() as server:
        figures = uvloop.run(measure(server.url, args.rounds, args.trips))
    print(f"CPU per Redis round trip, median of {args.rounds} interleaved rounds of {args.trips}")
    print(f"{'round trip':28} | {'server client':>13} | {'redis-py own':>12} | ratio | target")
    for kind, label in (("alone", "GET alone"), ("pipeline", "pipeline of 3 commands")):
        ours = statistics.median(figures["server's client"][kind]) * 1e6
        theirs = statistics.median(figures["redis-py's own"][kind]) * 1e6
        print(f"{label:28} | {ours:10.1f} µs | {theirs:9.1f} µs | {ours / theirs:.2f} | reported")


if __name__ == "__main__":
    main()
