"""The chat on a guest's page: the conversation ``page:<person>``, kept in Redis, read by the page.

A guest without the app talks with the assistant on their guest page (``api.guest_page``): what they
write and what the assistant answers are one list per conversation, which the page polls. Nothing
there can answer a device request, grow a message in place or show typing, so the channel says so
(:meth:`PageChannel.capabilities`) and the pipeline offers none of it.
"""

from __future__ import annotations

import json
import time
from typing import Any, Literal, cast

from redis.asyncio import Redis

from ..store import guest_link_keys as gk
from .base import Capabilities, NoDevice
from .parts import send_in_parts

PAGE = Capabilities(devices=False, streams=False, updates=False, typing=False, max_chars=2000)
"""A guest page: plain messages of at most 2,000 characters, nothing else."""

Sender = Literal["guest", "assistant"]


class PageChannel(NoDevice):
    """Guest pages' chats in Redis: the assistant's answers and the guest's own messages."""

    CARRIES = "a guest page"

    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    def capabilities(self, channel_url: str) -> Capabilities:
        """Plain text only: no device requests, streaming, updates or typing."""
        return PAGE

    async def send_text(self, channel_url: str, text: str, *, dedup_id: str) -> None:
        """Post the assistant's answer, in parts of at most :data:`PAGE`'s length, each once."""

        async def send(part: str, part_dedup_id: str) -> None:
            await self.append(channel_url, "assistant", part, dedup_id="out:" + part_dedup_id)

        await send_in_parts(send, text, dedup_id=dedup_id, max_chars=PAGE.max_chars)

    async def append(
        self, channel_url: str, sender: Sender, text: str, *, dedup_id: str | None = None
    ) -> dict[str, Any] | None:
        """Add a message to the chat and return it; None when one with ``dedup_id`` is there already."""
        if dedup_id is not None:
            first = await self.redis.set(
                gk.page_seen(channel_url, dedup_id), b"1", nx=True, ex=gk.PAGE_SEEN_TTL_S
            )
            if not first:
                return None
        seq_key, key = gk.page_seq(channel_url), gk.page_messages(channel_url)
        item = {
            "id": int(await self.redis.incr(seq_key)),
            "from": sender,
            "text": text,
            "at": int(time.time() * 1000),
        }
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.rpush(key, json.dumps(item, ensure_ascii=False))
            pipe.ltrim(key, -gk.PAGE_MESSAGES_MAX, -1)
            pipe.expire(key, gk.PAGE_MESSAGES_TTL_S)
            pipe.expire(seq_key, gk.PAGE_MESSAGES_TTL_S)
            await pipe.execute()
        return item

    async def messages(self, channel_url: str, *, after: int = 0) -> list[dict[str, Any]]:
        """The chat's messages with an id above ``after``, oldest first."""
        raw = cast(list[bytes], await self.redis.lrange(gk.page_messages(channel_url), 0, -1))
        items = (json.loads(r) for r in raw)
        return [m for m in items if m["id"] > after]

    async def forget(self, channel_url: str) -> None:
        """Delete the chat (the guest's data is erased)."""
        await self.redis.delete(gk.page_messages(channel_url), gk.page_seq(channel_url))
