"""Which Sendbird channel is the bot's 1:1 channel with a person, shared by every process for a while.

Finding it costs a Platform API call (a look-up, sometimes a creation too); an invitation asks for it
twice (the person's language, then the delivery) and a reminder or a relayed message again later.
Remembered here, the first delivery to a person pays for it and the rest of ``DIRECT_CHANNEL_TTL_S``
costs nothing, in whichever process they run.
"""

from __future__ import annotations

from redis.asyncio import Redis

from . import keys


class DirectChannels:
    """Person -> the URL of the bot's 1:1 channel with them, for one bot user."""

    def __init__(self, redis: Redis, *, bot_user_id: str) -> None:
        self.redis = redis
        self.bot_user_id = bot_user_id

    async def get(self, user_id: str) -> str | None:
        """The channel last found or made for ``user_id``; None when unknown or expired."""
        raw = await self.redis.hget(keys.direct_channel(user_id), self.bot_user_id)
        return raw.decode() if isinstance(raw, bytes) else raw

    async def remember(self, user_id: str, channel_url: str) -> None:
        """``channel_url`` is the 1:1 channel with ``user_id`` for the next ``DIRECT_CHANNEL_TTL_S``."""
        key = keys.direct_channel(user_id)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hset(key, self.bot_user_id, channel_url)
            pipe.expire(key, keys.DIRECT_CHANNEL_TTL_S)
            await pipe.execute()
