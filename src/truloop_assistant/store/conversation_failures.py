"""What a conversation's failures leave for operators: its last step that raised, and the events it
gave up after their retries (dead letters: the last few, with the error and an id), with an app-wide
index of the conversations that keep some (``truloop-assistant dead-letters``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, cast

from redis.asyncio import Redis
from redis.exceptions import RedisError

from . import keys

ERROR_KEPT = 1000
"""A dead letter's error is kept up to this many characters."""
DEAD_EVENT_CHARS = 32_000
"""A dead letter keeps its event whole up to this many characters (a message is at most
``TRULOOP_MAX_MESSAGE_CHARS``, 4,000 by default); a longer one is cut, and cannot be replayed."""

# Keep a dead letter once per id, newest first, bounded. KEYS: the list. ARGV: entry, id, max, ttl.
_ADD_DEAD = """
for _, kept in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local ok, entry = pcall(cjson.decode, kept)
  if ok and type(entry) == 'table' and entry['id'] == ARGV[2] then return 0 end
end
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[3]) - 1)
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""

# Take a conversation off the index only if nobody moved its score since it was read.
_FORGET_IF_UNCHANGED = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
"""


@dataclass(frozen=True)
class DeadLetter:
    """An event a conversation gave up after its retries, with why."""

    id: str
    """The id of the push that was given up (its ``eid``), as the drain's log line names it."""
    at: float
    error: str
    event: str
    """The inbox event's JSON (what the person wrote included), whole unless ``cut``; or, for a
    message the channel refused (id ``out:<dedup_id>``), the outgoing message's JSON."""
    cut: bool
    stored: bytes
    """The entry as Redis keeps it, to remove exactly this one."""
    code: int | None = None
    """The channel's own error code (a chat service's or an SMS provider's), when it refused a message."""

    @classmethod
    def read(cls, stored: bytes) -> DeadLetter:
        """An entry of the list, as :meth:`ConversationFailures.add_dead_letter` keeps it."""
        entry = json.loads(stored)
        return cls(
            id=str(entry["id"]),
            at=float(entry.get("at", 0.0)),
            error=str(entry.get("error", "")),
            event=str(entry.get("event", "")),
            cut=bool(entry.get("cut", False)),
            stored=stored,
            code=entry["code"] if isinstance(entry.get("code"), int) else None,
        )


class ConversationFailures:
    """A conversation's last failure and dead letters in Redis."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._add_dead = redis.register_script(_ADD_DEAD)
        self._forget_dead = redis.register_script(_FORGET_IF_UNCHANGED)

    async def add_dead_letter(
        self, channel_url: str, event: str, error: str, *, eid: str, code: int | None = None
    ) -> None:
        """Keep an event given up after its retries, with why, under its push's id (bounded, newest
        first; once per id), and name its conversation in the index of dead letters. ``code``: the
        channel's error code, for a message it refused."""
        now = time.time()
        entry: dict[str, Any] = {"id": eid, "at": now, "error": error[:ERROR_KEPT], "event": event}
        if code is not None:
            entry["code"] = code
        if len(event) > DEAD_EVENT_CHARS:
            entry.update(event=event[:DEAD_EVENT_CHARS], cut=True)
        key = keys.dead_letters(keys.conversation_tag(channel_url))
        args: list[str | int] = [
            json.dumps(entry, ensure_ascii=False),
            eid,
            keys.DEAD_LETTERS_MAX,
            keys.LEDGER_TTL_S,
        ]
        if not await self._add_dead(keys=[key], args=args):
            return  # kept already (a worker gave it up again after a crash)
        index = keys.dead_letter_conversations()
        # After the list (another hash slot): a conversation leaves the index only when its list is
        # empty and its score has not moved since (see drop_dead_letters). Best effort: the dead
        # letter is kept whatever happens here, and inspect shows it.
        with suppress(RedisError):
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zadd(index, {channel_url: now})
                pipe.zremrangebyscore(index, "-inf", now - keys.LEDGER_TTL_S)
                pipe.zremrangebyrank(index, 0, -keys.DEAD_LETTER_CONVERSATIONS_MAX - 1)
                pipe.expire(index, keys.LEDGER_TTL_S)
                await pipe.execute()

    async def note_failure(self, channel_url: str, eid: str, error: str) -> None:
        """Remember the conversation's last step that raised (``inspect`` shows it)."""
        key = keys.last_failure(keys.conversation_tag(channel_url))
        entry = json.dumps({"at": time.time(), "event": eid, "error": error[:1000]})
        await self.redis.set(key, entry, ex=keys.LEDGER_TTL_S)

    async def last_failure(self, channel_url: str) -> dict[str, Any] | None:
        raw = await self.redis.get(keys.last_failure(keys.conversation_tag(channel_url)))
        return None if raw is None else cast(dict[str, Any], json.loads(raw))

    async def dead_letters(self, channel_url: str) -> list[DeadLetter]:
        """The conversation's dead letters, newest first."""
        key = keys.dead_letters(keys.conversation_tag(channel_url))
        return [DeadLetter.read(r) for r in cast(list[bytes], await self.redis.lrange(key, 0, -1))]

    async def all_dead_letters(self) -> dict[str, list[DeadLetter]]:
        """Every indexed conversation's dead letters, the one that gave an event up last first."""
        index = keys.dead_letter_conversations()
        named = cast(
            list[tuple[bytes, float]],
            await self.redis.zrevrangebyscore(
                index, "+inf", time.time() - keys.LEDGER_TTL_S, withscores=True
            ),
        )
        if not named:
            return {}
        async with self.redis.pipeline(transaction=False) as pipe:
            for channel_url, _ in named:
                pipe.lrange(keys.dead_letters(keys.conversation_tag(channel_url.decode())), 0, -1)
            lists = cast(list[list[bytes]], await pipe.execute())
        found = {}
        for (channel_url, score), raws in zip(named, lists, strict=True):
            if raws:
                found[channel_url.decode()] = [DeadLetter.read(r) for r in raws]
            else:  # its dead letters expired, or were replayed or purged
                await self._forget_dead(keys=[index], args=[channel_url, repr(score)])
        return found

    async def drop_dead_letters(self, channel_url: str, letters: Sequence[DeadLetter]) -> int:
        """Remove these dead letters (those still there); how many were removed."""
        key = keys.dead_letters(keys.conversation_tag(channel_url))
        index = keys.dead_letter_conversations()
        score = await self.redis.zscore(index, channel_url)
        async with self.redis.pipeline(transaction=True) as pipe:
            for letter in letters:
                pipe.lrem(key, 1, letter.stored.decode())
            pipe.llen(key)
            *removed, left = await pipe.execute()
        if not left and score is not None:
            # Unless a new dead letter moved its score meanwhile (it is added to the list first).
            await self._forget_dead(keys=[index], args=[channel_url, repr(score)])
        return sum(int(r) for r in removed)

    async def forget_dead_letters_of(self, channel_url: str, user_id: str, turn_ids: Collection[str]) -> int:
        """Drop the dead letters of ``user_id``: their messages, and resumes of their turns
        (``turn_ids``); and the conversation's last failure when it was one of those. How many went."""
        mine = [d for d in await self.dead_letters(channel_url) if _of(d, user_id, turn_ids)]
        if not mine:
            return 0
        dropped = await self.drop_dead_letters(channel_url, mine)
        failure = await self.last_failure(channel_url)
        if failure is not None and failure.get("event") in {d.id for d in mine}:
            await self.redis.delete(keys.last_failure(keys.conversation_tag(channel_url)))
        return dropped


def _of(letter: DeadLetter, user_id: str, turn_ids: Collection[str]) -> bool:
    """Whether a dead letter is of ``user_id``: their message, or a resume of one of their turns. One
    that cannot be read (cut when kept) is theirs if it names them as its sender."""
    try:
        event = json.loads(letter.event)
    except ValueError:
        return f'"user_id":{json.dumps(user_id, ensure_ascii=False)}' in letter.event
    if not isinstance(event, dict):
        return False
    return event.get("user_id") == user_id or event.get("turn_id") in turn_ids
