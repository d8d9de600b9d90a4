"""Which conversations someone must look at, and when: the safety net under the job queue.

A conversation is watched from the moment an event is pushed into its inbox. Whoever drains it
keeps its owner claim alive; if the owner dies and its job is lost (a worker killed while another
was recovering it, an API process killed between the push and the enqueue), the watch comes due,
finds events and no owner, and a scanner queues a new drain. An undelivered outbox is watched the
same way, due at its next retry.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from redis.asyncio import Redis

from . import keys
from .inbox_scripts import RING_IF_WAITING

# Forget a watch only if nobody moved it since it was read (a push may have just renewed it).
_FORGET_IF_UNCHANGED = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
"""


@dataclass(frozen=True)
class Backlog:
    """What a conversation has waiting, and whether a drain owns it."""

    owner: str | None
    events: int
    outgoing: int

    @property
    def idle(self) -> bool:
        return not self.events and not self.outgoing


# Become the owner of a conversation nobody owns; or, when its drain waits for a device's answer,
# wake it: it delivers what was just put in the outbox. KEYS: owner, waiting, bell. ARGV: owner, ttl ms.
_TAKE_OVER = (
    RING_IF_WAITING
    + """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
ring_if_waiting(KEYS[2], KEYS[3], ARGV[2])
return 0
"""
)


class Drains:
    def __init__(self, redis: Redis, *, owner_ttl_s: float) -> None:
        self.redis = redis
        self.owner_ttl_ms = int(owner_ttl_s * 1000)
        self.look_after_s = owner_ttl_s
        self._forget = redis.register_script(_FORGET_IF_UNCHANGED)
        self._take_over = redis.register_script(_TAKE_OVER)

    async def watch(self, channel_url: str, *, after_s: float | None = None, sooner: bool = False) -> None:
        """Look at the conversation in ``after_s`` seconds (by default: once an owner would have expired).
        ``sooner``: only if that is sooner than the look already planned (an event pushed while a
        delivery waits for its next try must not put that try off)."""
        await self.watch_write(channel_url, after_s=after_s, sooner=sooner)(self.redis)

    def watch_write(
        self, channel_url: str, *, after_s: float | None = None, sooner: bool = False
    ) -> Callable[[Any], Any]:
        """:meth:`watch` as a write to send with others (see ``reads.Batch.write``)."""
        at = time.time() + (self.look_after_s if after_s is None else after_s)
        return lambda r: r.zadd(keys.drains(), {channel_url: at}, lt=sooner)

    async def due(self, now: float, *, limit: int = 500) -> list[tuple[str, float]]:
        """Conversations whose watch came due by ``now``, with the time they were due."""
        raw = cast(
            list[tuple[bytes, float]],
            await self.redis.zrangebyscore(keys.drains(), "-inf", now, start=0, num=limit, withscores=True),
        )
        return [(member.decode(), score) for member, score in raw]

    async def forget(self, channel_url: str, due: float) -> bool:
        """Stop watching a conversation with nothing waiting (unless its watch was renewed meanwhile)."""
        return bool(await self._forget(keys=[keys.drains()], args=[channel_url, repr(due)]))

    async def backlog(self, channel_url: str) -> Backlog:
        tag = keys.conversation_tag(channel_url)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.get(keys.owner(tag))
            pipe.llen(keys.inbox(tag))
            pipe.llen(keys.outbox(tag))
            owner, events, outgoing = await pipe.execute()
        return Backlog(owner.decode() if owner else None, int(events), int(outgoing))

    async def take_over(self, channel_url: str) -> str | None:
        """Become the owner of a conversation nobody owns; the new owner id, or None if someone was
        faster (a drain waiting for a device's answer is woken up)."""
        owner = f"drain:{uuid.uuid4().hex}"
        tag = keys.conversation_tag(channel_url)
        taken = await self._take_over(
            keys=[keys.owner(tag), keys.waiting(tag), keys.bell(tag)], args=[owner, self.owner_ttl_ms]
        )
        return owner if taken else None
