"""The messages a turn's answers were streamed into, by step, kept until every re-run of a step is over.

A step that streams notes each message's id as soon as the channel gives it. When the step runs again
(its worker died mid-answer), the re-run updates those messages in place instead of posting new ones,
and its end (the outbox's :class:`~.outbox.StreamOut`) finishes them.
"""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis

from . import keys


class StreamedMessages:
    """Reads and notes the streamed message ids of a turn (hash field ``"<step>:<index>"``)."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def of_step(self, channel_url: str, turn_id: str, step: int) -> dict[int, int]:
        """Index -> message id of what an earlier run of the step streamed (empty: none)."""
        raw = cast(
            dict[bytes, bytes],
            await self.redis.hgetall(keys.streamed(keys.conversation_tag(channel_url), turn_id)),
        )
        found: dict[int, int] = {}
        for field, value in raw.items():
            at, _, index = field.decode().partition(":")
            if at == str(step) and index.isdigit():
                found[int(index)] = int(value)
        return found

    async def unfinished(self, channel_url: str, turn_id: str) -> dict[int, list[int]]:
        """Step -> the message ids (in order) of the turn's steps whose end was not delivered."""
        key = keys.streamed(keys.conversation_tag(channel_url), turn_id)
        found: dict[int, dict[int, int]] = {}
        for field, value in cast(dict[bytes, bytes], await self.redis.hgetall(key)).items():
            step, _, index = field.decode().partition(":")
            if step.isdigit() and index.isdigit():
                found.setdefault(int(step), {})[int(index)] = int(value)
        return {step: [ids[i] for i in sorted(ids)] for step, ids in sorted(found.items())}

    async def finished(self, channel_url: str, turn_id: str, step: int) -> None:
        """The step's end was delivered: its messages are final and need nothing more."""
        key = keys.streamed(keys.conversation_tag(channel_url), turn_id)
        fields = [
            f for f in cast(list[bytes], await self.redis.hkeys(key)) if f.startswith(f"{step}:".encode())
        ]
        if fields:
            await self.redis.hdel(key, *fields)

    async def note(self, channel_url: str, turn_id: str, step: int, index: int, message_id: int) -> None:
        """Remember that the step's ``index``-th streamed message is ``message_id``."""
        key = keys.streamed(keys.conversation_tag(channel_url), turn_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, f"{step}:{index}", message_id)
            pipe.expire(key, keys.STREAMED_TTL_S)
            await pipe.execute()
