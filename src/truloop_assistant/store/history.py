"""A conversation's history: what the model sees of earlier turns, bounded by count and by size."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, cast

from redis.asyncio import Redis

from . import keys
from .history_files import without_bytes
from .reads import Read

if TYPE_CHECKING:
    from pydantic import TypeAdapter
    from pydantic_ai.messages import ModelMessage

# pydantic-ai is imported where messages are read or written, not above: the API keeps a History
# (through the turn store) without ever loading the agent's library, and `serve` starts without it.


def _adapter() -> TypeAdapter[list[ModelMessage]]:
    from pydantic_ai import ModelMessagesTypeAdapter

    return ModelMessagesTypeAdapter


class History:
    """Reads a person's history in a channel; :meth:`TurnStore.finish` writes it, with the turn it closes."""

    def __init__(self, redis: Redis, *, max_messages: int) -> None:
        self.redis = redis
        self.max_messages = max_messages

    async def load(self, channel_url: str, user_id: str) -> list[ModelMessage]:
        """One person's history in a channel (others' tool calls and results never mix in)."""
        return await self.read(channel_url, user_id).once(self.redis)

    def read(self, channel_url: str, user_id: str) -> Read[list[ModelMessage]]:
        """:meth:`load` as a read to batch with others."""
        key = keys.history(keys.conversation_tag(channel_url), user_id)
        return Read(lambda r: r.get(key), lambda raw: _adapter().validate_json(raw) if raw else [])

    def encode(self, messages: list[ModelMessage]) -> bytes:
        """The history as stored: at most ``max_messages``, and at most ``HISTORY_MAX_BYTES``."""
        kept = trim_history(without_bytes(without_instructions(messages)), self.max_messages)
        value = _adapter().dump_json(kept)
        while len(value) > keys.HISTORY_MAX_BYTES and len(kept) > 1:
            shorter = trim_history(kept, len(kept) - 1)  # drop the oldest turn, then measure again
            if len(shorter) == len(kept):
                # One turn alone is too big (large tool results): keep its question and final answer.
                shorter = _from_turn_start([kept[0], kept[-1]] if len(kept) > 2 else kept[-1:])
            kept = shorter
            value = _adapter().dump_json(kept)
        return value

    async def revise(self, channel_url: str, user_id: str, message_id: str, text: str | None) -> bool:
        """Give the user prompt of the turn of message ``message_id`` the text ``text`` (the person
        edited it), or take it out (None: they deleted it); False when the history holds no prompt
        marked with that id (an older history, or the message was not a turn). Written only over the
        very history read (a compare-and-set on its one key): a turn of the same person that ended
        meanwhile is not overwritten, and the change is made again on what it wrote."""
        key = keys.history(keys.conversation_tag(channel_url), user_id)
        for _ in range(3):
            raw = cast(bytes | None, await self.redis.get(key))
            changed = revised(_adapter().validate_json(raw), message_id, text) if raw else None
            if raw is None or changed is None:
                return False
            if await self.redis.eval(_SWAP, 1, key, raw, self.encode(changed)):
                return True
        return False


# Replace a value only if it is still the one read, keeping its TTL. KEYS: the key. ARGV: old, new.
_SWAP = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 1
"""


MESSAGE_ID = "truloop_message_id"
"""The key of a turn's request metadata that names the message the turn's user prompt was (never sent
to the model); histories written before it was kept have none."""


def marked(messages: list[ModelMessage], message_id: str) -> list[ModelMessage]:
    """The messages with the latest request that holds a user prompt (the turn's own words) marked as
    message ``message_id``'s, so that an edit or a deletion of that message finds it later."""
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, ModelRequest) and any(isinstance(p, UserPromptPart) for p in message.parts):
            if (message.metadata or {}).get(MESSAGE_ID) == message_id:
                return messages
            metadata = {**(message.metadata or {}), MESSAGE_ID: message_id}
            return [*messages[:index], replace(message, metadata=metadata), *messages[index + 1 :]]
    return messages


def revised(messages: list[ModelMessage], message_id: str, text: str | None) -> list[ModelMessage] | None:
    """The messages with the user prompt marked as message ``message_id``'s given ``text``, or taken
    out (None; a request left with nothing else goes too); None when no request is marked so."""
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    for index, message in enumerate(messages):
        if not isinstance(message, ModelRequest) or (message.metadata or {}).get(MESSAGE_ID) != message_id:
            continue
        parts = [
            p if not isinstance(p, UserPromptPart) or text is None else replace(p, content=text)
            for p in message.parts
            if text is not None or not isinstance(p, UserPromptPart)
        ]
        kept = [replace(message, parts=parts)] if parts else []
        return [*messages[:index], *kept, *messages[index + 1 :]]
    return None


def without_instructions(messages: list[ModelMessage]) -> list[ModelMessage]:
    """The messages without the instructions each request carried.

    Every run computes its instructions afresh (the agent's, the person's context, the channel's
    recent messages), and the model is sent only those: the copies pydantic-ai records on each
    request are dead weight in Redis, often most of a turn's size.
    """
    from pydantic_ai.messages import ModelRequest

    return [replace(m, instructions=None) if isinstance(m, ModelRequest) else m for m in messages]


def dump_messages(messages: list[ModelMessage]) -> str:
    """A run's messages as kept while it is paused (JSON, without instructions or files' bytes)."""
    return _adapter().dump_json(without_bytes(without_instructions(messages))).decode()


def paused_messages(
    messages: list[ModelMessage], started_from: list[ModelMessage], history_len: int
) -> tuple[str, int]:
    """A paused run's messages as kept: those after the stored history it started from (its first
    ``history_len`` messages), and how many were left out. All of them when the run's messages do
    not begin with those very messages."""
    last = history_len - 1
    if not (0 <= last < min(len(messages), len(started_from))) or messages[last] is not started_from[last]:
        history_len = 0
    return dump_messages(messages[history_len:]), history_len


def restored_messages(
    stored: list[ModelMessage], history_len: int, rest: str
) -> tuple[list[ModelMessage], int]:
    """A paused run's messages: the first ``history_len`` of the stored history, then ``rest`` (JSON);
    and how many came from the history (fewer when it expired meanwhile: it was a week old)."""
    kept = stored[:history_len]
    return [*kept, *_adapter().validate_json(rest)], len(kept)


def trim_history(messages: list[ModelMessage], max_messages: int) -> list[ModelMessage]:
    """Keep at most ``max_messages``, cutting only where a user prompt starts a turn."""
    if len(messages) <= max_messages:
        return messages
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    starts = [
        i
        for i, m in enumerate(messages)
        if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart) for p in m.parts)
    ]
    for i in starts:
        if len(messages) - i <= max_messages:
            return _from_turn_start(messages[i:])
    return _from_turn_start(messages[starts[-1] :]) if starts else messages[-max_messages:]


def _from_turn_start(messages: list[ModelMessage]) -> list[ModelMessage]:
    """The history from a turn's first request, without results whose calls were cut off with the rest.

    A message that arrived while the phone still owed answers shares its request with the results
    of the calls it cut short; once the calls are gone, those results would answer nothing.
    """
    from pydantic_ai.messages import ModelRequest, RetryPromptPart, ToolReturnPart, UserPromptPart

    first = messages[0] if messages else None
    if isinstance(first, ModelRequest) and any(not isinstance(p, UserPromptPart) for p in first.parts):
        kept = [p for p in first.parts if not isinstance(p, ToolReturnPart | RetryPromptPart)]
        return [replace(first, parts=kept), *messages[1:]]
    return messages
