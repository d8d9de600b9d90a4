"""How long a request may wait on Redis before it gives up with 503 ``unavailable``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from redis.exceptions import TimeoutError as RedisTimeoutError

# Well under the 5 s after which Sendbird re-sends a webhook, and far over a healthy Redis round trip.
REDIS_BUDGET_S = 1.5


@asynccontextmanager
async def redis_budget(seconds: float = REDIS_BUDGET_S) -> AsyncIterator[None]:
    """Cancel the Redis work still running after ``seconds`` and raise a ``RedisError`` (-> 503)."""
    # Cancelling a command is safe: redis-py disconnects a connection whose reply was not read,
    # so no later request gets a stale answer.
    budget = asyncio.timeout(seconds)
    try:
        async with budget:
            yield
    except TimeoutError:
        if not budget.expired():
            raise
        raise RedisTimeoutError(f"Redis did not answer within {seconds:g} s") from None
