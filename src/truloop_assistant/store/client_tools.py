"""The device tools each person's app declared, kept for 30 days after the last declaration."""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis

from ..protocol.declarations import Declaration, load_declaration
from . import keys


class ClientTools:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def get(self, user_id: str) -> Declaration | None:
        """The person's declaration, or None when their app declared nothing (or it lapsed)."""
        raw = cast(bytes | None, await self.redis.get(keys.client_tools(user_id)))
        return None if raw is None else load_declaration(raw)

    async def put(self, user_id: str, declaration: Declaration) -> None:
        """Replace the person's declaration; its 30 days start again."""
        raw = declaration.model_dump_json(exclude_none=True)
        await self.redis.set(keys.client_tools(user_id), raw, ex=keys.CLIENT_TOOLS_TTL_S)

    async def delete(self, user_id: str) -> bool:
        """Drop the person's declaration; True when there was one."""
        return bool(await self.redis.delete(keys.client_tools(user_id)))
