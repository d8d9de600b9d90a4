"""Gauges of shared state, read from Redis by every worker every ``GAUGE_INTERVAL_S``.

``truloop_pending_calls`` sums the unanswered calls of the paused turns (at most ``MAX_TURNS`` are
read; beyond that the figure is scaled from them); ``truloop_queue_jobs`` counts the turn queue's
queued and active jobs.
"""

from __future__ import annotations

import json
import time
from typing import cast

from redis.asyncio import Redis
from saq import Queue

from ..metrics import PENDING_CALLS, QUEUED_JOBS
from ..store import keys

GAUGE_INTERVAL_S = 10.0
MAX_TURNS = 2_000


class Gauges:
    def __init__(self, redis: Redis, queue: Queue) -> None:
        self.redis = redis
        self.queue = queue
        self._next = 0.0

    async def refresh(self) -> None:
        """Read the gauges again if ``GAUGE_INTERVAL_S`` passed since the last time."""
        if time.monotonic() < self._next:
            return
        self._next = time.monotonic() + GAUGE_INTERVAL_S
        PENDING_CALLS.set(await self.pending_calls())
        for kind in ("queued", "active"):
            QUEUED_JOBS.labels(kind).set(await self.queue.count(kind))

    async def pending_calls(self) -> float:
        total = cast(int, await self.redis.zcard(keys.deadlines()))
        if not total:
            return 0
        members = cast(list[bytes], await self.redis.zrange(keys.deadlines(), 0, MAX_TURNS - 1))
        async with self.redis.pipeline(transaction=False) as pipe:
            for member in members:
                channel_url, turn_id = json.loads(member)
                pipe.hget(keys.turn(keys.conversation_tag(channel_url), turn_id), "remaining")
            remaining = cast(list[bytes | None], await pipe.execute())
        counted = sum(int(r) for r in remaining if r is not None)
        return counted * total / len(members) if members else 0
