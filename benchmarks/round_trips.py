"""What one turn asks of Redis, command by command: Redis ``MONITOR`` on every primary while a single
turn runs on an otherwise idle server (``benchmarks.scale --scenario round-trips``).

A round trip is what a client waits for once: a command alone, a ``MULTI`` … ``EXEC`` transaction, or
a pipeline (a client's commands that reach Redis within ``PIPELINE_GAP_S`` of each other). Commands
that scripts run are counted apart. What an idle server does anyway (its queue's blocking reads, the
scanners' polls) is learnt from a quiet second before the turn and left out.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis

PIPELINE_GAP_S = 0.00015
"""Commands of one client closer than this are taken for one pipeline (MONITOR stamps microseconds)."""


@dataclass
class Seen:
    """The commands Redis ran meanwhile, as ``MONITOR`` showed them."""

    commands: list[dict[str, Any]] = field(default_factory=list)


@asynccontextmanager
async def monitored(nodes: list[Redis]) -> AsyncIterator[Seen]:
    """Every command the primaries run inside the block."""
    seen = Seen()
    ready = [asyncio.Event() for _ in nodes]

    async def watch(node: Redis, started: asyncio.Event) -> None:
        async with node.monitor() as monitor:
            started.set()
            async for command in monitor.listen():
                seen.commands.append(command)

    tasks = [asyncio.create_task(watch(node, started)) for node, started in zip(nodes, ready, strict=True)]
    await asyncio.gather(*(started.wait() for started in ready))
    await asyncio.sleep(0.1)  # MONITOR answers OK before it streams: let it start
    seen.commands.clear()
    try:
        yield seen
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def signature(command: dict[str, Any]) -> str:
    """A command's name and first key, without ids: what an idle server repeats."""
    words = command["command"].split()
    return " ".join(words[:2])


@dataclass(frozen=True)
class Trips:
    round_trips: int
    top_level: int
    in_scripts: int
    by_command: Counter[str]


def count(commands: list[dict[str, Any]], background: set[str]) -> Trips:
    """Round trips, commands sent and commands scripts ran, the background left out."""
    trips = top = inside = 0
    by_command: Counter[str] = Counter()
    last_at: dict[str, float] = {}
    in_multi: set[str] = set()
    background_script = False  # a script's commands follow its call at once (scripts run alone)
    for command in commands:
        name = command["command"].split()[0].upper()
        if command["client_type"] == "lua":
            if not background_script:
                inside += 1
                by_command[name.lower() + " (in a script)"] += 1
            continue
        background_script = signature(command) in background
        if background_script:
            continue
        client = f"{command['client_address']}:{command['client_port']}"
        top += 1
        by_command[name] += 1
        if name == "MULTI":
            in_multi.add(client)
            trips += 1
        elif name == "EXEC":
            in_multi.discard(client)
        elif client not in in_multi and command["time"] - last_at.get(client, -1.0) > PIPELINE_GAP_S:
            trips += 1
        last_at[client] = command["time"]
    return Trips(trips, top, inside, by_command)
