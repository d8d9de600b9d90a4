"""Messages a finished step still has to deliver, kept in Redis until the channel takes them.

A step writes its answer (or its device requests) here in the same transaction that records what
the step did, so a failed send never re-runs the model: delivery is retried from the outbox, and a
conversation's later events wait behind it.
"""

from __future__ import annotations

import time
from typing import Annotated, Literal, cast

from pydantic import BaseModel, Field, TypeAdapter
from redis.asyncio import Redis

from ..protocol.jsonrpc import JsonRpcRequest
from . import keys


class _Outgoing(BaseModel):
    dedup_id: str
    """Stable per turn, step and message: the channel shows a re-sent message once."""
    created_at: float = Field(default_factory=time.time)


class TextOut(_Outgoing):
    """The assistant's answer (or an apology), as plain text."""

    kind: Literal["text"] = "text"
    text: str


class RpcOut(_Outgoing):
    """A JSON-RPC request for the user's device, with the text shown meanwhile."""

    kind: Literal["rpc"] = "rpc"
    request: JsonRpcRequest
    notification: str
    recipient: str = ""
    """The user whose phone is to answer it (mentioned in the message); empty in older records."""


Outgoing = Annotated[TextOut | RpcOut, Field(discriminator="kind")]
OUTGOING: TypeAdapter[TextOut | RpcOut] = TypeAdapter(Outgoing)

# Remove a delivered (or abandoned) message if it is still the oldest, forget the failures in a
# row, and return the next message to send. KEYS: outbox, failures. ARGV: the message.
_POP_IF_HEAD = """
if redis.call('LINDEX', KEYS[1], 0) == ARGV[1] then redis.call('LPOP', KEYS[1]) end
redis.call('DEL', KEYS[2])
return redis.call('LINDEX', KEYS[1], 0)
"""


class Outbox:
    """Reads and empties a conversation's outbox (:class:`~.turns.TurnStore` fills it)."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._pop = redis.register_script(_POP_IF_HEAD)

    async def head(self, channel_url: str) -> tuple[bytes, TextOut | RpcOut] | None:
        """The oldest undelivered message (with its stored bytes, to remove it once sent)."""
        raw = cast(bytes | None, await self.redis.lindex(keys.outbox(keys.conversation_tag(channel_url)), 0))
        return _item(raw)

    async def pop(self, channel_url: str, raw: bytes) -> tuple[bytes, TextOut | RpcOut] | None:
        """Remove a delivered (or abandoned) message, if it is still the oldest; the next one, if any."""
        tag = keys.conversation_tag(channel_url)
        return _item(await self._pop(keys=[keys.outbox(tag), keys.outbox_failures(tag)], args=[raw]))

    async def failed(self, channel_url: str) -> int:
        """Count a failed delivery; how many failed in a row."""
        key = keys.outbox_failures(keys.conversation_tag(channel_url))
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, keys.INBOX_TTL_S)
            count, _ = await pipe.execute()
        return int(count)

    async def empty(self, channel_url: str) -> bool:
        return not await self.redis.llen(keys.outbox(keys.conversation_tag(channel_url)))


def _item(raw: bytes | None) -> tuple[bytes, TextOut | RpcOut] | None:
    return None if raw is None else (raw, OUTGOING.validate_json(raw))
