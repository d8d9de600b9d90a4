"""Messages a finished step still has to deliver, kept in Redis until the channel takes them.

A step writes its answer (or its device requests) here in the same transaction that records what
the step did, so a failed send never re-runs the model: delivery is retried from the outbox, and a
conversation's later events wait behind it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Annotated, Literal, cast

from pydantic import BaseModel, Field, TypeAdapter
from redis.asyncio import Redis

from ..i18n import Language
from ..protocol.jsonrpc import JsonRpcRequest
from . import keys
from .records import SettledState


class _Outgoing(BaseModel):
    dedup_id: str
    """Stable per turn, step and message: the channel shows a re-sent message once."""
    created_at: float = Field(default_factory=time.time)


class TextOut(_Outgoing):
    """The assistant's answer (or an apology), as plain text."""

    kind: Literal["text"] = "text"
    text: str
    part: int | None = None
    """None: a whole text, sent under ``dedup_id``. A number: what is left of a longer text, from its
    part of this index on (each part is sent under its own id, derived from ``dedup_id``)."""


class StreamOut(_Outgoing):
    """The end of an answer that was streamed: its messages updated to the whole ``text`` (``data``
    streaming false), in parts as a long text is sent; parts past the streamed messages are posted
    (under ids derived from ``dedup_id``), and streamed messages past the parts are deleted."""

    kind: Literal["stream"] = "stream"
    text: str
    message_ids: list[int]
    """The messages the text was streamed into, in order (a re-run of its step may have left more)."""
    turn_id: str = ""
    step: int = 0
    not_before: float = 0.0
    """The last update of the growing message was at this time less the updates' interval: the final
    one waits until then (``time.time()``)."""
    stopped: bool = False
    """The person stopped the answer: its last message's final ``data`` says so too."""


class RpcOut(_Outgoing):
    """A JSON-RPC request for the user's device, with the text shown meanwhile."""

    kind: Literal["rpc"] = "rpc"
    request: JsonRpcRequest
    notification: str
    recipient: str = ""
    """The user whose phone is to answer it (mentioned in the message); empty in older records."""
    channel_url: str = ""
    """Where it is posted when not in the conversation's channel (the person's 1:1 channel with the
    assistant, for a turn in a channel of several people); empty: the conversation's channel."""


class SettleOut(_Outgoing):
    """A call left ``pending``: its ``agent-rpc`` message is updated to say so (devices close the dialog)."""

    kind: Literal["settle"] = "settle"
    call_id: str
    state: SettledState
    method: str
    lang: Language


Outgoing = Annotated[TextOut | StreamOut | RpcOut | SettleOut, Field(discriminator="kind")]
Item = TextOut | StreamOut | RpcOut | SettleOut
OUTGOING: TypeAdapter[Item] = TypeAdapter(Outgoing)

# Remove a delivered (or abandoned) message if it is still the oldest, forget the failures in a
# row (and the last one's error), note (or forget) the channel's message id of a call's request, and
# return the next message to send. KEYS: outbox, failures, the request's message-id key (or the
# outbox, unused), the last error. ARGV: the message, 'set' (with the id and its ttl) / 'del' / ''.
_POP_IF_HEAD = """
if redis.call('LINDEX', KEYS[1], 0) == ARGV[1] then redis.call('LPOP', KEYS[1]) end
redis.call('DEL', KEYS[2], KEYS[4])
if ARGV[2] == 'set' then
  redis.call('SET', KEYS[3], ARGV[3], 'EX', ARGV[4])
elseif ARGV[2] == 'del' then
  redis.call('DEL', KEYS[3])
end
return redis.call('LINDEX', KEYS[1], 0)
"""


# Move a message that could not go out now from the head to the back; return the new head.
_TO_BACK = """
if redis.call('LINDEX', KEYS[1], 0) == ARGV[1] then
  redis.call('LPOP', KEYS[1])
  redis.call('RPUSH', KEYS[1], ARGV[1])
end
return redis.call('LINDEX', KEYS[1], 0)
"""


# Replace the oldest message (a text longer than the channel takes) by its first part and what follows
# it, if it is still the oldest; return the new oldest. KEYS: outbox. ARGV: the message, the first
# part, the rest.
_SPLIT_HEAD = """
if redis.call('LINDEX', KEYS[1], 0) == ARGV[1] then
  redis.call('LSET', KEYS[1], 0, ARGV[3])
  redis.call('LPUSH', KEYS[1], ARGV[2])
end
return redis.call('LINDEX', KEYS[1], 0)
"""


# Drop the messages of a person's turns that wait in the outbox: an answer or a request whose
# dedup id starts with one of their turn ids (ARGV[2] on), or a request to their phone (ARGV[1]).
# Updates of settled requests stay: they carry no content and close the dialogs. KEYS: outbox.
_FORGET = """
local turns = {}
for i = 2, #ARGV do turns[ARGV[i]] = true end
local gone = 0
for _, raw in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local ok, item = pcall(cjson.decode, raw)
  if ok and type(item) == 'table' and item['kind'] ~= 'settle' then
    local turn = string.match(tostring(item['dedup_id']), '^([^:]*):')
    if item['recipient'] == ARGV[1] or (turn and turns[turn]) then
      gone = gone + redis.call('LREM', KEYS[1], 1, raw)
    end
  end
end
return gone
"""


@dataclass(frozen=True)
class DeliveryFailure:
    """Why the outbox's oldest message did not go out: the message (its ``dedup_id``) and the channel's
    answer (HTTP status, its own error code, the text), if it gave one."""

    dedup_id: str
    error: str
    status: int | None = None
    code: int | None = None
    at: float = field(default_factory=time.time)


@dataclass(frozen=True)
class RpcMessage:
    """Noted as a message leaves the outbox: the channel's message id of a call's request (its update
    names it), or None once the request's message was updated for good and the id is not needed."""

    call_id: str
    message_id: int | None
    channel_url: str = ""
    """The channel the request was posted in, when not the conversation's (its update goes there)."""


@dataclass(frozen=True)
class PostedRequest:
    """Where a call's request message is: its channel and the channel's id of the message."""

    channel_url: str
    message_id: int


@dataclass(frozen=True)
class Peeked:
    """An outbox's oldest message (None: it was empty), as read along with something else."""

    raw: bytes | None

    @cached_property
    def item(self) -> tuple[bytes, Item] | None:
        """The message, parsed once however often it is looked at."""
        return _item(self.raw)

    @property
    def is_update(self) -> bool:
        """Whether it is a request's update."""
        return (head := self.item) is not None and isinstance(head[1], SettleOut)


class Outbox:
    """Reads and empties a conversation's outbox (:class:`~.turns.TurnStore` fills it)."""

    def __init__(self, redis: Redis, *, pending_ttl_s: int) -> None:
        self.redis = redis
        self.rpc_message_ttl_s = pending_ttl_s + keys.SETTLED_TTL_S
        self._pop = redis.register_script(_POP_IF_HEAD)
        self._to_back = redis.register_script(_TO_BACK)
        self._split_head = redis.register_script(_SPLIT_HEAD)
        self._forget = redis.register_script(_FORGET)

    async def rpc_message(self, channel_url: str, call_id: str) -> PostedRequest | None:
        """Where a call's request message is, if it was delivered (and noted): in the conversation's
        channel unless it was posted elsewhere."""
        raw = cast(
            bytes | None, await self.redis.get(keys.rpc_message(keys.conversation_tag(channel_url), call_id))
        )
        if raw is None:
            return None
        message_id, _, elsewhere = raw.decode().partition(" ")
        return PostedRequest(elsewhere or channel_url, int(message_id))

    async def head(self, channel_url: str) -> tuple[bytes, Item] | None:
        """The oldest undelivered message (with its stored bytes, to remove it once sent)."""
        raw = cast(bytes | None, await self.redis.lindex(keys.outbox(keys.conversation_tag(channel_url)), 0))
        return _item(raw)

    async def updates_only(self, channel_url: str) -> tuple[Peeked, bool]:
        """The oldest undelivered message, and whether every message waiting is a request's update."""
        outbox = keys.outbox(keys.conversation_tag(channel_url))
        waiting = [Peeked(raw) for raw in cast(list[bytes], await self.redis.lrange(outbox, 0, -1))]
        return (waiting[0] if waiting else Peeked(None)), bool(waiting) and all(p.is_update for p in waiting)

    async def pop(
        self, channel_url: str, raw: bytes, *, note: RpcMessage | None = None
    ) -> tuple[bytes, Item] | None:
        """Remove a delivered (or abandoned) message, if it is still the oldest, with what ``note``
        says of its request's message id; the next message, if any."""
        tag = keys.conversation_tag(channel_url)
        outbox = keys.outbox(tag)
        args: list[str | bytes | int] = [raw, ""]
        if note is not None:
            # "<message id>", or "<message id> <channel>" for a request posted in another channel.
            posted = f"{note.message_id} {note.channel_url}".rstrip()
            args = (
                [raw, "set", posted, self.rpc_message_ttl_s] if note.message_id is not None else [raw, "del"]
            )
        rpc = keys.rpc_message(tag, note.call_id) if note is not None else outbox
        failures = [keys.outbox_failures(tag), rpc, keys.outbox_error(tag)]
        return _item(await self._pop(keys=[outbox, *failures], args=args))

    async def to_back(self, channel_url: str, raw: bytes) -> tuple[bytes, Item] | None:
        """Move a message that could not go out now behind the others; the new oldest one."""
        return _item(await self._to_back(keys=[keys.outbox(keys.conversation_tag(channel_url))], args=[raw]))

    async def split(
        self, channel_url: str, raw: bytes, first: TextOut, rest: TextOut
    ) -> tuple[bytes, Item] | None:
        """Replace the oldest message by its ``first`` part and the ``rest`` behind it, each sent and
        removed in turn: a part sent is not sent again, whatever happens before the next (and the
        outbox grows by one message, however long the text). The new oldest message."""
        args: list[bytes | str] = [raw, first.model_dump_json(), rest.model_dump_json()]
        return _item(
            await self._split_head(keys=[keys.outbox(keys.conversation_tag(channel_url))], args=args)
        )

    async def add(self, channel_url: str, items: Sequence[Item]) -> None:
        """Put messages at the back of the outbox (outside a step: a turn given up after crashes)."""
        tag = keys.conversation_tag(channel_url)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.rpush(keys.outbox(tag), *(item.model_dump_json() for item in items))
            pipe.expire(keys.outbox(tag), keys.INBOX_TTL_S)
            await pipe.execute()

    async def failed(self, channel_url: str, failure: DeliveryFailure | None = None) -> int:
        """Count a failed delivery (and keep ``failure``, for ``inspect``); how many failed in a row.
        The outbox keeps its newest ``OUTBOX_MAX`` messages: it only grows while deliveries fail, so
        this is where it is trimmed."""
        tag = keys.conversation_tag(channel_url)
        key = keys.outbox_failures(tag)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, keys.INBOX_TTL_S)
            pipe.ltrim(keys.outbox(tag), -keys.OUTBOX_MAX, -1)
            if failure is not None:
                pipe.set(keys.outbox_error(tag), json.dumps(asdict(failure)), ex=keys.INBOX_TTL_S)
            count, *_ = await pipe.execute()
        return int(count)

    async def forget_user(self, channel_url: str, user_id: str, turn_ids: Sequence[str]) -> int:
        """Drop what waits to be sent for ``user_id`` (bounded by ``OUTBOX_MAX``): the answers and
        requests of their turns (``turn_ids``) and requests to their phone; how many went. What other
        people's turns send, and the updates that close settled requests, stay."""
        return int(
            await self._forget(
                keys=[keys.outbox(keys.conversation_tag(channel_url))], args=[user_id, *turn_ids]
            )
        )

    async def empty(self, channel_url: str) -> bool:
        return not await self.redis.llen(keys.outbox(keys.conversation_tag(channel_url)))


def _item(raw: bytes | None) -> tuple[bytes, Item] | None:
    return None if raw is None else (raw, OUTGOING.validate_json(raw))
