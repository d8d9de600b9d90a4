"""Who is in a channel: from the Platform API (Sendbird) or from who wrote there (the dev channel).

The webhook usually carries the members; when it does not, they are looked up and cached briefly.
"""

from __future__ import annotations

import json
import logging
from typing import Protocol, cast
from urllib.parse import quote

from pydantic import TypeAdapter
from redis.asyncio import Redis

from ..protocol.webhook_payload import Users
from ..store import keys
from .platform_http import PlatformClient, PlatformTransportError

log = logging.getLogger(__name__)

_USERS: TypeAdapter[Users] = TypeAdapter(Users)


class Members(Protocol):
    async def of(self, channel_url: str) -> list[str] | None:
        """The member user ids, or None when they cannot be known right now."""
        ...

    async def listed(self, channel_url: str, ids: list[str]) -> None:
        """The members a delivery carried, so that the turn it starts finds them without a look-up."""
        ...


class SendbirdMembers:
    """``GET /v3/group_channels/{url}?show_member=true``, cached in Redis for ``keys.MEMBERS_TTL_S``."""

    def __init__(self, client: PlatformClient, redis: Redis) -> None:
        self._client = client
        self._redis = redis

    async def listed(self, channel_url: str, ids: list[str]) -> None:
        key = keys.members(keys.conversation_tag(channel_url))
        await self._redis.set(key, json.dumps(ids), ex=keys.MEMBERS_TTL_S)

    async def of(self, channel_url: str) -> list[str] | None:
        key = keys.members(keys.conversation_tag(channel_url))
        if (cached := await self._redis.get(key)) is not None:
            return cast(list[str], json.loads(cached))
        path = f"/v3/group_channels/{quote(channel_url, safe='')}"
        try:
            response = await self._client.request("GET", path, params={"show_member": "true"}, timeout=3.0)
            members = response.json().get("members") if response.status_code == 200 else None
        except (PlatformTransportError, ValueError, AttributeError) as exc:
            log.warning("could not look up the members of %s: %s", channel_url, exc)
            return None
        if not isinstance(members, list):
            log.warning("could not look up the members of %s: HTTP %s", channel_url, response.status_code)
            return None
        ids = [member.user_id for member in _USERS.validate_python(members)]
        await self._redis.set(key, json.dumps(ids), ex=keys.MEMBERS_TTL_S)
        return ids


class LocalMembers:
    """The dev channel: the assistant and everyone who has written in the channel."""

    def __init__(self, redis: Redis, *, bot_user_id: str) -> None:
        self._redis = redis
        self._bot = bot_user_id

    async def joined(self, channel_url: str, user_id: str) -> None:
        """Someone wrote in the channel: they are a member from now on."""
        key = keys.local_members(keys.conversation_tag(channel_url))
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.sadd(key, user_id)
            pipe.expire(key, keys.LOCAL_MESSAGES_TTL_S)
            await pipe.execute()

    async def listed(self, channel_url: str, ids: list[str]) -> None:
        """Nothing to keep: the dev channel's members are who wrote there."""

    async def of(self, channel_url: str) -> list[str] | None:
        raw = cast(
            set[bytes], await self._redis.smembers(keys.local_members(keys.conversation_tag(channel_url)))
        )
        return [self._bot, *sorted(m.decode() for m in raw)]
