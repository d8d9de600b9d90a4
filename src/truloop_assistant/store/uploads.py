"""Files put through the local channel (``/dev``): kept in Redis as a chat service keeps uploads.

The local channel has no file host: a picture, PDF or voice note attached in ``/dev`` is kept here
under a random id, and its message names it ``upload:<id>`` (never a URL anything fetches). A turn
reads it back by that name (``channels.file_reader``). Kept as long as the local channel's messages.
"""

from __future__ import annotations

import secrets

from redis.asyncio import Redis

from ..protocol.files import UPLOAD_SCHEME
from . import keys


class Uploads:
    def __init__(self, redis: Redis, *, max_bytes: int) -> None:
        self.redis = redis
        self.max_bytes = max_bytes

    async def put(self, channel_url: str, data: bytes) -> str:
        """Keep ``data`` (at most ``max_bytes``: the caller refuses more) for the channel; its URL."""
        if len(data) > self.max_bytes:
            raise ValueError(f"an upload of {len(data)} bytes is over the {self.max_bytes}-byte limit")
        upload_id = secrets.token_urlsafe(12)
        key = keys.upload(keys.conversation_tag(channel_url), upload_id)
        await self.redis.set(key, data, ex=keys.LOCAL_MESSAGES_TTL_S)
        return f"{UPLOAD_SCHEME}{upload_id}"

    async def get(self, channel_url: str, url: str) -> bytes | None:
        """The bytes an ``upload:<id>`` URL of the channel names; None when gone (or not one)."""
        upload_id = url.removeprefix(UPLOAD_SCHEME)
        if not url.startswith(UPLOAD_SCHEME) or not upload_id.replace("-", "").replace("_", "").isalnum():
            return None
        raw = await self.redis.get(keys.upload(keys.conversation_tag(channel_url), upload_id))
        return raw if isinstance(raw, bytes) else None
