"""What people in a channel can see: who said what, kept short, for the model's context.

A turn's model context holds its own person's history (with their tool calls and results, which
stay private) and, from here, the other people's visible messages in the channel and the
assistant's answers to them, quoted with their authors (``agent.context``).
"""

from __future__ import annotations

import time

from pydantic import BaseModel, Field
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from . import keys
from .passed_on import note_passed_on
from .reads import Read, Write

ASSISTANT = ""
"""The ``user_id`` of the assistant's own lines."""


class Line(BaseModel):
    """One visible message: a person's text, or the assistant's: an answer (``to`` that person) or
    something it wrote on its own (an invitation, a reminder; ``to`` None)."""

    user_id: str
    text: str
    to: str | None = None
    turn: bool = False
    """The person's message was a turn: it is in their own history already."""
    on_behalf_of: str | None = None
    """Whose words the assistant passed on in it (a relayed message's sender, an event's organizer)."""
    message_id: str | None = None
    """The channel's id of the person's message (None for the assistant's lines, and for lines kept
    before lines had one), so that a message deleted later leaves the transcript too."""
    at: float = Field(default_factory=time.time)


# Append a line, keep the newest, renew the TTL (the arguments: :func:`append_args`); also part of
# the inbox's push, which adds a turn's own words with its event.
APPEND_LINE = """
local function append_line(key, line, keep, ttl)
  if redis.call('RPUSH', key, line) > -tonumber(keep) then redis.call('LTRIM', key, keep, -1) end
  redis.call('EXPIRE', key, ttl)
end
"""

# One command, atomic. KEYS: the transcript. ARGV: as append_args.
_APPEND = APPEND_LINE + "append_line(KEYS[1], ARGV[1], ARGV[2], ARGV[3])\nreturn 1\n"


# Append the line once per message. KEYS: its mark, the transcript. ARGV: mark ttl s, as append_args.
_APPEND_ONCE = (
    APPEND_LINE
    + """
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then return 0 end
append_line(KEYS[2], ARGV[2], ARGV[3], ARGV[4])
return 1
"""
)


# Remove the lines one of whose fields has the value given, keeping the others in order; how many
# went. One command on one key (atomic; Cluster-safe). KEYS: the transcript. ARGV: field, value, ...
_REMOVE = """
local gone = 0
for i, raw in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local ok, line = pcall(cjson.decode, raw)
  if ok and type(line) == 'table' then
    for j = 1, #ARGV, 2 do
      if line[ARGV[j]] == ARGV[j + 1] then
        redis.call('LSET', KEYS[1], i - 1, '\0removed')
        gone = gone + 1
        break
      end
    end
  end
end
if gone > 0 then redis.call('LREM', KEYS[1], 0, '\0removed') end
return gone
"""


class Transcript:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._append = redis.register_script(_APPEND)
        self._append_once = redis.register_script(_APPEND_ONCE)
        self._remove = redis.register_script(_REMOVE)

    async def add(self, channel_url: str, line: Line) -> None:
        await self._append(keys=[_key(channel_url)], args=append_args(line))

    def add_write(self, channel_url: str, line: Line) -> Write:
        """:meth:`add` as a write to send with others (as ``EVAL``: a registered script in a pipeline
        costs a round trip of its own, ``SCRIPT EXISTS``)."""
        key, args = _key(channel_url), append_args(line)
        return lambda pipe: pipe.eval(_APPEND, 1, key, *args)

    async def add_for(self, channel_url: str, message_id: str, line: Line) -> None:
        """Add the line of message ``message_id`` unless it was added before (the step is run again)."""
        tag = keys.conversation_tag(channel_url)
        await self._append_once(
            keys=[keys.seen_line(tag, message_id), keys.transcript(tag)],
            args=[keys.SEEN_TTL_S, *append_args(line)],
        )

    async def add_once(self, channel_url: str, line: Line) -> None:
        """Add the line unless the same speaker said the same recently (a retried delivery). A line
        written on someone's behalf is noted in their index first (``passed_on``), so that erasing
        them finds it."""
        text = line.text[: keys.TRANSCRIPT_LINE_CHARS]
        if any(old.user_id == line.user_id and old.text == text for old in await self.recent(channel_url)):
            return
        if line.on_behalf_of:
            await note_passed_on(self.redis, line.on_behalf_of, "line", channel_url)
        await self.add(channel_url, line)

    async def recent(self, channel_url: str, *, limit: int = keys.TRANSCRIPT_MAX) -> list[Line]:
        """The newest ``limit`` lines, oldest first."""
        return await self.recent_read(channel_url, limit=limit).once(self.redis)

    def recent_read(self, channel_url: str, *, limit: int = keys.TRANSCRIPT_MAX) -> Read[list[Line]]:
        """:meth:`recent` as a read to batch with others."""
        key = _key(channel_url)
        return Read(lambda r: r.lrange(key, -limit, -1), _quotable)

    async def remove_message(self, channel_url: str, message_id: str) -> bool:
        """Remove the line of the person's message ``message_id`` (it was deleted); False when none is
        kept (never added, pushed out by newer ones, or removed already)."""
        return bool(await self._remove(keys=[_key(channel_url)], args=["message_id", message_id]))

    async def forget_user(self, channel_url: str, user_id: str) -> int:
        """Drop a person's lines, the answers to them and what was passed on for them (they asked for
        their data to be erased); how many lines went."""
        args = ["user_id", user_id, "to", user_id, "on_behalf_of", user_id]
        return int(await self._remove(keys=[_key(channel_url)], args=args))


def _quotable(raw: list[bytes]) -> list[Line]:
    """The stored lines, without those passed on for someone longer ago than their index lasts."""
    lines = [Line.model_validate_json(r) for r in raw]
    oldest = time.time() - keys.PASSED_ON_LINE_MAX_AGE_S
    return [line for line in lines if not line.on_behalf_of or line.at >= oldest]


def _key(channel_url: str) -> str:
    return keys.transcript(keys.conversation_tag(channel_url))


def append_args(line: Line) -> list[str | int]:
    """The line as stored, minus the number of lines kept, the TTL (s)."""
    return [encode_line(line), -keys.TRANSCRIPT_MAX, keys.HISTORY_TTL_S]


def encode_line(line: Line) -> str:
    """The stored line, its text cut to ``TRANSCRIPT_LINE_CHARS``."""
    if len(line.text) > keys.TRANSCRIPT_LINE_CHARS:
        line = line.model_copy(update={"text": line.text[: keys.TRANSCRIPT_LINE_CHARS]})
    return line.model_dump_json()


def add_line(pipe: Pipeline, tag: str, line: Line) -> None:
    """Queue a line in a transaction (with the step that produced it)."""
    key = keys.transcript(tag)
    pipe.rpush(key, encode_line(line))
    pipe.ltrim(key, -keys.TRANSCRIPT_MAX, -1)
    pipe.expire(key, keys.HISTORY_TTL_S)
