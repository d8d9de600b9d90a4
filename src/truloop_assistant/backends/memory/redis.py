"""The default memory store: a bounded hash per user in Redis, ranked in process with BM25.

Search reads all of a user's memories (at most ``keys.MEMORY_MAX``) and ranks them with ``bm25s``
over the shared tokenizer, the same one the knowledge base uses, so Korean and English work
without any model.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from itertools import islice
from typing import cast

from redis.asyncio import Redis

from ...store import keys
from ..search import Bm25Index, tokenize
from .port import Memory, utcnow

# KEYS: memories hash, order zset. ARGV: id, json, score (µs), max per user, ttl s
_SAVE = """
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if excess > 0 then
  local old = redis.call('ZRANGE', KEYS[2], 0, excess - 1)
  redis.call('ZREM', KEYS[2], unpack(old))
  redis.call('HDEL', KEYS[1], unpack(old))
end
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[5])
return 1
"""


INLINE_RANK_MAX = 50
"""Up to this many memories are ranked on the event loop (well under a millisecond of CPU)."""


def new_memory_id() -> str:
    """``mem_`` and 12 hex digits."""
    return "mem_" + secrets.token_hex(6)


def rank(query: str, memories: list[Memory], limit: int) -> list[Memory]:
    """The memories matching the query best (BM25), newest first among equals; non-matching left out."""
    newest_first = sorted(memories, key=lambda m: m.created_at, reverse=True)
    # The ranking is stable, so equal scores keep the newest-first order.
    ranked = Bm25Index([tokenize(m.text) for m in newest_first]).ranked(query)
    return [
        newest_first[i].model_copy(update={"score": round(score, 4)}) for i, score in islice(ranked, limit)
    ]


class RedisMemoryStore:
    """Memories in Redis: one hash per user, at most ``max_per_user``, kept ``ttl_s`` after the last save."""

    def __init__(
        self,
        redis: Redis,
        *,
        max_per_user: int = keys.MEMORY_MAX,
        ttl_s: int = keys.MEMORY_TTL_S,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._redis = redis
        self._max = max_per_user
        self._ttl_s = ttl_s
        self._clock = clock
        self._save_script = redis.register_script(_SAVE)

    async def save(self, user_id: str, text: str) -> Memory:
        """Store the memory; the user's oldest ones go once there are more than ``max_per_user``."""
        now = self._clock().astimezone(UTC)
        memory = Memory(memory_id=new_memory_id(), text=text, created_at=now.isoformat())
        micros = int(now.timestamp() * 1_000_000)
        await self._save_script(
            keys=[keys.memories(user_id), keys.memory_order(user_id)],
            args=[
                memory.memory_id,
                memory.model_dump_json(exclude={"score"}),
                micros,
                self._max,
                self._ttl_s,
            ],
        )
        return memory

    async def search(self, user_id: str, query: str, *, limit: int = 5) -> list[Memory]:
        """The best matches (see :func:`rank`); an empty query lists the most recent."""
        if not query.strip():
            return await self.list_recent(user_id, limit)
        if limit < 1:
            return []
        raw = await self._redis.hgetall(keys.memories(user_id))
        memories = [_parse(v) for v in raw.values()]
        if len(memories) <= INLINE_RANK_MAX:
            return rank(query, memories, limit)
        # Ranking hundreds of memories takes milliseconds of CPU: keep the event loop free meanwhile.
        return await asyncio.to_thread(rank, query, memories, limit)

    async def forget(self, user_id: str, memory_id: str) -> bool:
        """Delete the user's memory; False when the user has none with that id."""
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hdel(keys.memories(user_id), memory_id)
            pipe.zrem(keys.memory_order(user_id), memory_id)
            removed, _ = await pipe.execute()
        return bool(removed)

    async def forget_all(self, user_id: str) -> int:
        """Delete every memory of the user; how many there were."""
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hlen(keys.memories(user_id))
            pipe.delete(keys.memories(user_id), keys.memory_order(user_id))
            count, _ = await pipe.execute()
        return int(count)

    async def list_recent(self, user_id: str, limit: int = 20) -> list[Memory]:
        """The user's memories, newest first."""
        if limit < 1:
            return []
        ids = cast(list[bytes], await self._redis.zrevrange(keys.memory_order(user_id), 0, limit - 1))
        if not ids:
            return []
        values = await self._redis.hmget(keys.memories(user_id), ids)
        return [_parse(v) for v in values if v is not None]


def _parse(raw: bytes | str) -> Memory:
    return Memory.model_validate_json(raw)
