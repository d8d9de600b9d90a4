"""Files put through the local channel (``/dev``): kept in Redis as a chat service keeps uploads.

The local channel has no file host: a picture, PDF or voice note attached in ``/dev`` is kept here
under a random id, and its message names it ``upload:<id>`` (never a URL anything fetches). A turn
reads it back by that name (``channels.file_reader``). Kept as long as the local channel's messages.
"""

from __future__ import annotations

import secrets
from typing import cast

from redis.asyncio import Redis

from ..protocol.files import UPLOAD_SCHEME
from . import keys


class Uploads:
    def __init__(self, redis: Redis, *, max_bytes: int) -> None:
        self.redis = redis
        self.max_bytes = max_bytes

    async def put(self, channel_url: str, data: bytes) -> str:
        """Keep ``data`` (at least a byte, at most ``max_bytes``: the caller refuses others) for the
        channel; its URL."""
        if not data:
            raise ValueError("an upload has at least one byte")
        if len(data) > self.max_bytes:
            raise ValueError(f"an upload of {len(data)} bytes is over the {self.max_bytes}-byte limit")
        upload_id = secrets.token_urlsafe(12)
        key = keys.upload(keys.conversation_tag(channel_url), upload_id)
        await self.redis.set(key, data, ex=keys.LOCAL_MESSAGES_TTL_S)
        return f"{UPLOAD_SCHEME}{upload_id}"

    async def get(self, channel_url: str, url: str) -> bytes | None:
        """The bytes an ``upload:<id>`` URL of the channel names; None when gone (or not one)."""
        key = _key(channel_url, url)
        if key is None:
            return None
        return cast(bytes | None, await self.redis.get(key))

    async def size(self, channel_url: str, url: str) -> int | None:
        """How many bytes an ``upload:<id>`` URL of the channel names, without reading them; None
        when gone (or not one): what a message naming it is checked against before it is queued."""
        key = _key(channel_url, url)
        size = int(await self.redis.strlen(key)) if key is not None else 0
        return size or None  # an upload is never empty: 0 is a key that is not there


def _key(channel_url: str, url: str) -> str | None:
    """The Redis key of an ``upload:<id>`` URL of the channel; None for any other URL."""
    upload_id = url.removeprefix(UPLOAD_SCHEME)
    bare = upload_id.replace("-", "").replace("_", "")
    if not url.startswith(UPLOAD_SCHEME) or not (bare.isascii() and bare.isalnum()) or len(upload_id) > 64:
        return None
    return keys.upload(keys.conversation_tag(channel_url), upload_id)
