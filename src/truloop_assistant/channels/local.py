"""A channel kept in Redis, for the dev server: the web page and curl read and write it."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import replace
from typing import Any, cast

from redis.asyncio import Redis
from redis.exceptions import WatchError

from ..protocol.files import Attachment
from ..protocol.jsonrpc import JsonRpcRequest
from ..store import keys
from .base import AGENT_RPC, AGENT_RPC_SETTLED, CHAT, Capabilities, ChannelSendError, streaming_data
from .parts import DEFAULT_MAX_CHARS, send_in_parts

log = logging.getLogger(__name__)


class LocalChannel:
    def __init__(self, redis: Redis, *, bot_user_id: str, max_message_chars: int = DEFAULT_MAX_CHARS) -> None:
        self.redis = redis
        self.bot_user_id = bot_user_id
        self.max_message_chars = max_message_chars

    def capabilities(self, channel_url: str) -> Capabilities:
        """A chat with the app: device requests, streaming, updates and typing; its length limit."""
        return replace(CHAT, max_chars=self.max_message_chars)

    async def send_text(self, channel_url: str, text: str, *, dedup_id: str) -> None:
        """Post the text, in parts as Sendbird would take it (so dev shows what users will see)."""

        async def send(part: str, part_dedup_id: str) -> None:
            await self.append(channel_url, user_id=self.bot_user_id, message=part, dedup_id=part_dedup_id)

        await send_in_parts(send, text, dedup_id=dedup_id, max_chars=self.max_message_chars)

    async def send_rpc(
        self,
        channel_url: str,
        request: JsonRpcRequest,
        *,
        notification: str,
        dedup_id: str,
        recipient: str = "",
    ) -> int | None:
        item = await self.append(
            channel_url,
            user_id=self.bot_user_id,
            message=notification,
            custom_type=AGENT_RPC,
            data=request.model_dump_json(),
            dedup_id=dedup_id,
            mentioned_user_ids=[recipient] if recipient else [],
        )
        return item.get("message_id")

    async def settle_rpc(self, channel_url: str, message_id: int, *, data: str, text: str) -> None:
        """Change the message in place, as Sendbird's update does; it is listed again as updated."""
        await self._change(
            channel_url, message_id, {"custom_type": AGENT_RPC_SETTLED, "data": data, "message": text}
        )

    async def post_streamed(
        self, channel_url: str, text: str, *, dedup_id: str, streaming: bool, stopped: bool = False
    ) -> int | None:
        item = await self.append(
            channel_url,
            user_id=self.bot_user_id,
            message=text,
            data=streaming_data(streaming, stopped=stopped),
            dedup_id=dedup_id,
        )
        return item.get("message_id")

    async def update_streamed(
        self, channel_url: str, message_id: int, text: str, *, streaming: bool, stopped: bool = False
    ) -> bool:
        """Change the text and ``data`` in place (listed again as updated, ``updated_at`` bumped)."""
        try:
            await self._change(
                channel_url, message_id, {"message": text, "data": streaming_data(streaming, stopped=stopped)}
            )
        except ChannelSendError:
            if not streaming:
                raise
            return False
        return True

    async def update_text(self, channel_url: str, message_id: int, text: str, *, data: str = "") -> None:
        """Change a plain message's text and data in place (a growing answer); listed again as updated."""
        await self._change(channel_url, message_id, {"data": data, "message": text})

    async def delete_message(self, channel_url: str, message_id: int) -> None:
        key = keys.local_messages(keys.conversation_tag(channel_url))
        for raw in cast(list[bytes], await self.redis.lrange(key, 0, -1)):
            if json.loads(raw)["message_id"] == message_id:
                await self.redis.lrem(key, 1, raw)  # type: ignore[arg-type]  # bytes are what it stores

    async def _change(self, channel_url: str, message_id: int, fields: dict[str, Any]) -> None:
        key = keys.local_messages(keys.conversation_tag(channel_url))
        async with self.redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(key)
                    raw = cast(list[bytes], await pipe.lrange(key, 0, -1))
                    found = next(
                        (i for i, r in enumerate(raw) if json.loads(r)["message_id"] == message_id), None
                    )
                    if found is None:
                        raise ChannelSendError(
                            f"no message {message_id} in {channel_url} to update", retryable=False
                        )
                    seq = int(await self.redis.incr(keys.local_message_seq()))
                    item = (
                        json.loads(raw[found])
                        | fields
                        | {
                            "updated_seq": seq,
                            "updated_at": int(time.time() * 1000),
                        }
                    )
                    pipe.multi()
                    pipe.lset(key, found, json.dumps(item, ensure_ascii=False))
                    await pipe.execute()
                    return
                except WatchError:
                    continue

    async def typing_started(self, channel_url: str) -> None:
        try:
            key = keys.local_typing(keys.conversation_tag(channel_url))
            await self.redis.set(key, self.bot_user_id, ex=keys.LOCAL_TYPING_TTL_S)
        except Exception as exc:
            log.warning("could not mark typing in %s: %r", channel_url, exc)

    async def typing_stopped(self, channel_url: str) -> None:
        try:
            await self.redis.delete(keys.local_typing(keys.conversation_tag(channel_url)))
        except Exception as exc:
            log.warning("could not clear typing in %s: %r", channel_url, exc)

    async def is_typing(self, channel_url: str) -> bool:
        """Whether the assistant is working on a step in the channel."""
        return bool(await self.redis.exists(keys.local_typing(keys.conversation_tag(channel_url))))

    async def append(
        self,
        channel_url: str,
        *,
        user_id: str,
        message: str,
        custom_type: str = "",
        data: str = "",
        dedup_id: str | None = None,
        mentioned_user_ids: list[str] | None = None,
        files: list[Attachment] | None = None,
    ) -> dict[str, Any]:
        """Add a message to the channel and return it (as Sendbird would show it).

        A message with ``files`` (a person's pictures, PDFs, voice notes: ``upload:`` URLs of
        ``store.uploads``) lists them under ``files``, so the page shows what was sent; ``message`` is
        then their caption, or empty. A message without files has no ``files`` key.
        """
        tag = keys.conversation_tag(channel_url)
        if dedup_id is not None:
            # Like Sendbird's dedup_id: a retried send is not shown twice.
            first = await self.redis.set(keys.seen(tag, "out:" + dedup_id), b"1", nx=True, ex=keys.SEEN_TTL_S)
            if not first:
                return {}
        item = {
            "message_id": int(await self.redis.incr(keys.local_message_seq())),
            "channel_url": channel_url,
            "user_id": user_id,
            "message": message,
            "custom_type": custom_type,
            "data": data,
            "mentioned_users": [{"user_id": u} for u in mentioned_user_ids or []],
            "created_at": int(time.time() * 1000),
        }
        if files:
            item["files"] = [f.model_dump(exclude={"require_auth"}) for f in files]
        key = keys.local_messages(tag)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.rpush(key, json.dumps(item, ensure_ascii=False))
            pipe.ltrim(key, -keys.LOCAL_MESSAGES_MAX, -1)
            pipe.expire(key, keys.LOCAL_MESSAGES_TTL_S)
            await pipe.execute()
        return item

    async def messages(
        self, channel_url: str, *, after: int = 0, custom_type: str | None = None
    ) -> list[dict[str, Any]]:
        """Messages posted, or updated, after ``after`` (message ids and updates share one sequence);
        only those of ``custom_type`` when given."""
        raw = await self.redis.lrange(keys.local_messages(keys.conversation_tag(channel_url)), 0, -1)
        items = [json.loads(r) for r in raw]
        return [
            m
            for m in items
            if max(m["message_id"], m.get("updated_seq", 0)) > after
            and (custom_type is None or m["custom_type"] == custom_type)
        ]
