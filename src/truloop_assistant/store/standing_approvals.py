"""A person's standing approvals: the tools they said "always" to, and since when."""

from __future__ import annotations

import time

from redis.asyncio import Redis

from . import keys
from .reads import Read


def standing_read(user_id: str) -> Read[dict[str, float]]:
    """Tool name -> when the person allowed it for good (epoch seconds), as a read to batch."""
    key = keys.standing_approvals(user_id)
    return Read(lambda r: r.hgetall(key), lambda raw: {k.decode(): float(v) for k, v in raw.items()})


async def standing(redis: Redis, user_id: str) -> dict[str, float]:
    """:func:`standing_read`, on its own."""
    return await standing_read(user_id).once(redis)


async def allow_always(redis: Redis, user_id: str, tool: str) -> None:
    """The person is not asked again for ``tool`` (the first "always" keeps its time)."""
    key = keys.standing_approvals(user_id)
    async with redis.pipeline(transaction=False) as pipe:
        pipe.hsetnx(key, tool, repr(time.time()))
        pipe.expire(key, keys.STANDING_APPROVALS_TTL_S)
        await pipe.execute()


async def end_standing(redis: Redis, user_id: str, tool: str) -> None:
    """The person is asked again for ``tool`` (nothing to do when they were)."""
    await redis.hdel(keys.standing_approvals(user_id), tool)


async def end_all_standing(redis: Redis, user_id: str) -> None:
    """Every standing approval of the person ends (their data is erased)."""
    await redis.delete(keys.standing_approvals(user_id))
