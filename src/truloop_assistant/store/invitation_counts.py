"""How many people an organizer invited lately: their events invite at most so many an hour."""

from __future__ import annotations

from redis.asyncio import Redis

from . import keys


class InvitationCounts:
    """Per organizer: the people their events invited in the current window (``INVITATIONS_WINDOW_S``)."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def lately(self, organizer: str) -> int:
        """People invited in the organizer's current window (0 once it has passed)."""
        return int(await self.redis.get(keys.invitations_sent(organizer)) or 0)

    async def add(self, organizer: str, people: int) -> None:
        """``people`` more were invited; the window starts with the first of them."""
        key = keys.invitations_sent(organizer)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(key, 0, ex=keys.INVITATIONS_WINDOW_S, nx=True)  # the window, from the first
            pipe.incrby(key, people)
            await pipe.execute()
