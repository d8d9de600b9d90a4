"""The recorded results of tools that changed something, so a re-run step replays them, not redoes them.

A step may run again: its worker died after the tool ran, or its result could not be committed. A
tool that creates an event, relays a message or saves a memory must not do it twice; its result is
kept by the call's id (stable when a confirmed call runs on resume) and, for tools that need no
confirmation, also by the tool and its arguments (a model asked again makes the same call anew).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, cast

from redis.asyncio import Redis

from . import keys


def arguments_key(tool_name: str, args: dict[str, Any]) -> str:
    """``args:<tool>:<digest>``: the same tool with the same arguments."""
    canonical = json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return f"args:{tool_name}:{hashlib.sha256(canonical.encode()).hexdigest()[:32]}"


class Effects:
    """A turn's recorded side effects, in one hash per turn (deleted when the turn ends)."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def recorded(self, channel_url: str, turn_id: str, *names: str) -> str | None:
        """The JSON result recorded under the first of ``names`` that has one."""
        key = keys.effects(keys.conversation_tag(channel_url), turn_id)
        values = cast(list[bytes | None], await self.redis.hmget(key, list(names)))
        return next((v.decode() for v in values if v is not None), None)

    async def record(self, channel_url: str, turn_id: str, result_json: str, *names: str) -> None:
        key = keys.effects(keys.conversation_tag(channel_url), turn_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping=dict.fromkeys(names, result_json))
            pipe.expire(key, keys.EFFECTS_TTL_S)
            await pipe.execute()
