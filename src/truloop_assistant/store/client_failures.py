"""How often in a row a person's devices failed each device tool (in any of their channels).

A part of the turn store (:class:`~.turns.TurnStore` extends it): a tool whose calls keep failing
on the person's devices is held back from the model for a while.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from redis.asyncio import Redis

from . import keys
from .reads import Batch, Read


class ClientFailureCounts:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    def batch(self) -> Batch:
        """Reads to send together (this store's and others')."""
        return Batch(self.redis)

    async def client_failures(self, user_id: str) -> dict[str, int]:
        """Tool name -> consecutive failures of the person's devices (in any of their channels)."""
        return await self.client_failures_read(user_id).once(self.redis)

    def client_failures_read(self, user_id: str) -> Read[dict[str, int]]:
        """:meth:`client_failures` as a read to batch with others."""
        key = keys.client_failures(user_id)
        return Read(lambda r: r.hgetall(key), lambda raw: {k.decode(): int(v) for k, v in raw.items()})

    async def record_client_outcomes(self, user_id: str, outcomes: dict[str, bool]) -> None:
        """Count a device failure per tool, or reset the count when the device did its part."""
        batch = self.batch()
        self.count_client_outcomes(batch, user_id, outcomes)
        await batch.run()

    def count_client_outcomes(self, batch: Batch, user_id: str, outcomes: dict[str, bool]) -> None:
        """:meth:`record_client_outcomes` as writes in ``batch`` (its reads after them see them)."""
        if not outcomes:
            return
        key = keys.client_failures(user_id)
        for tool, ok in outcomes.items():
            batch.write(partial(_reset, key, tool) if ok else partial(_count_failure, key, tool))
        if not all(outcomes.values()):  # a reset adds nothing that would need to live longer
            batch.write(lambda r: r.expire(key, keys.CLIENT_FAILURES_TTL_S))


def _reset(key: str, tool: str, redis: Any) -> Any:
    return redis.hdel(key, tool)


def _count_failure(key: str, tool: str, redis: Any) -> Any:
    return redis.hincrby(key, tool, 1)
