"""Who is in a channel: from the Platform API (Sendbird) or from who wrote there (the dev channel).

The webhook carries the members only when the app lists them ("include members"; never for a
Supergroup); else the worker looks them up, asking again while Sendbird is slow or rate-limits, and
caches them briefly. A Supergroup's look-up lists only a preview: never taken as the whole list.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from dataclasses import dataclass
from typing import Protocol, cast
from urllib.parse import quote

from pydantic import TypeAdapter
from redis.asyncio import Redis

from ..protocol.webhook_payload import Users
from ..store import keys
from .platform_http import PlatformClient, PlatformTransportError, retry_after

log = logging.getLogger(__name__)

_USERS: TypeAdapter[Users] = TypeAdapter(Users)

LOOKUP_TIMEOUT_S = 10.0
"""One look-up's wait for Sendbird's answer (in the worker: no webhook waits for it)."""
BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 10.0


@dataclass(frozen=True)
class Roster:
    """Who is in a channel, as far as the server can tell."""

    ids: list[str]
    supergroup: bool = False
    """A Supergroup: ``ids`` is only a preview of its members, and it is always a group."""

    def full(self) -> list[str] | None:
        """The whole member list; None for a Supergroup (never its preview) or a channel not found."""
        return None if self.supergroup or not self.ids else self.ids


class Members(Protocol):
    async def of(self, channel_url: str) -> list[str] | None:
        """The member user ids (one look-up at most), or None when they cannot be known right now (and
        for a Supergroup, whose whole list is never known)."""
        ...

    async def roster(self, channel_url: str, *, patience_s: float) -> Roster | None:
        """Who is in the channel, asking again (on 429, 5xx, timeouts) for up to ``patience_s``; None
        when that was not enough, or the channel cannot be looked up at all."""
        ...

    async def listed(self, channel_url: str, ids: list[str], *, supergroup: bool = False) -> None:
        """The members a delivery carried, so that the turn it starts finds them without a look-up."""
        ...


class SendbirdMembers:
    """``GET /v3/group_channels/{url}?show_member=true``, cached in Redis for ``keys.MEMBERS_TTL_S``."""

    def __init__(self, client: PlatformClient, redis: Redis) -> None:
        self._client = client
        self._redis = redis

    async def listed(self, channel_url: str, ids: list[str], *, supergroup: bool = False) -> None:
        await self._keep(channel_url, Roster(ids, supergroup))

    async def of(self, channel_url: str) -> list[str] | None:
        roster = await self.roster(channel_url, patience_s=0.0)
        return None if roster is None else roster.full()

    async def roster(self, channel_url: str, *, patience_s: float) -> Roster | None:
        key = keys.members(keys.conversation_tag(channel_url))
        if (cached := await self._redis.get(key)) is not None:
            return _decode(cached)
        clock = asyncio.get_running_loop().time
        deadline = clock() + patience_s
        attempt = 0
        while True:
            attempt += 1
            # The first try always gets its full wait; later ones only what is left of the patience.
            timeout = (
                LOOKUP_TIMEOUT_S if attempt == 1 else max(0.1, min(LOOKUP_TIMEOUT_S, deadline - clock()))
            )
            found = await self._look_up(channel_url, timeout=timeout, attempt=attempt)
            if isinstance(found, Roster):
                await self._keep(channel_url, found)
                return found
            if found is None:
                return None
            if clock() + found >= deadline:
                if patience_s > 0:
                    log.warning("gave up looking up the members of %s after %d tries", channel_url, attempt)
                return None
            await asyncio.sleep(found)

    async def _look_up(self, channel_url: str, *, timeout: float, attempt: int) -> Roster | float | None:
        """One look-up: the roster, how long to wait before the next try, or None (no use trying again)."""
        path = f"/v3/group_channels/{quote(channel_url, safe='')}"
        try:
            response = await self._client.request(
                "GET", path, params={"show_member": "true"}, timeout=timeout
            )
        except PlatformTransportError as exc:
            log.warning("could not look up the members of %s: %s", channel_url, exc)
            return _backoff(attempt)
        if response.status_code == 429 or response.status_code >= 500:
            log.warning("could not look up the members of %s: HTTP %s", channel_url, response.status_code)
            return retry_after(response) or _backoff(attempt)
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code == 400 and isinstance(body, dict) and body.get("code") == CHANNEL_NOT_FOUND:
            return Roster([])  # nobody the assistant could answer
        members = body.get("members") if response.status_code == 200 and isinstance(body, dict) else None
        if not isinstance(members, list):
            log.warning("could not look up the members of %s: HTTP %s", channel_url, response.status_code)
            return None
        ids = [member.user_id for member in _USERS.validate_python(members)]
        return Roster(ids, supergroup=body.get("is_super") is True)

    async def _keep(self, channel_url: str, roster: Roster) -> None:
        key = keys.members(keys.conversation_tag(channel_url))
        value = {"ids": roster.ids, "super": roster.supergroup}
        await self._redis.set(key, json.dumps(value), ex=keys.MEMBERS_TTL_S)


CHANNEL_NOT_FOUND = 400201
"""Sendbird's code for a resource not found (``"Channel" not found.``)."""


def _decode(cached: bytes | str) -> Roster:
    """A cached roster; a plain list is one kept by an earlier version."""
    value = json.loads(cached)
    if isinstance(value, list):
        return Roster(cast(list[str], value))
    return Roster(cast(list[str], value["ids"]), supergroup=bool(value.get("super")))


def _backoff(attempt: int) -> float:
    # Capped exponential backoff with full jitter.
    return random.uniform(0, min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** (attempt - 1)))


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

    async def listed(self, channel_url: str, ids: list[str], *, supergroup: bool = False) -> None:
        """Nothing to keep: the dev channel's members are who wrote there."""

    async def roster(self, channel_url: str, *, patience_s: float) -> Roster | None:
        ids = await self.of(channel_url)
        return None if ids is None else Roster(ids)

    async def of(self, channel_url: str) -> list[str] | None:
        raw = cast(
            set[bytes], await self._redis.smembers(keys.local_members(keys.conversation_tag(channel_url)))
        )
        return [self._bot, *sorted(m.decode() for m in raw)]
