"""Files a person sent in a group right before mentioning the assistant: part of that turn.

In a group, people send a picture and then write "@assistant add this" in a message of its own. A
file message that does not mention the assistant is kept here, for its sender only, for
``RECENT_FILES_TTL_S``; their next message that mentions it takes them (once). Nobody else's turn
ever sees them, and they go with the person's data when they ask for it to be erased.
"""

from __future__ import annotations

from pydantic import TypeAdapter
from redis.asyncio import Redis

from ..protocol.files import Attachment
from . import keys
from .reads import Write

_FILES: TypeAdapter[list[Attachment]] = TypeAdapter(list[Attachment])


def keep_writes(channel_url: str, user_id: str, files: tuple[Attachment, ...]) -> list[Write]:
    """Keep ``files`` (of one message) for the sender's next mention, as writes to send with others
    (none for a message without files)."""
    if not files:
        return []
    key = keys.recent_files(keys.conversation_tag(channel_url), user_id)
    value = _FILES.dump_json(list(files))
    return [
        lambda pipe: pipe.rpush(key, value),
        lambda pipe: pipe.ltrim(key, -keys.RECENT_FILES, -1),
        lambda pipe: pipe.expire(key, keys.RECENT_FILES_TTL_S),
    ]


async def take(redis: Redis, channel_url: str, user_id: str) -> tuple[Attachment, ...]:
    """The files the person sent here without a mention lately, oldest first; gone once taken."""
    key = keys.recent_files(keys.conversation_tag(channel_url), user_id)
    async with redis.pipeline(transaction=True) as pipe:
        pipe.lrange(key, 0, -1)
        pipe.delete(key)
        listed, _ = await pipe.execute()
    return tuple(file for raw in listed for file in _FILES.validate_json(raw))
