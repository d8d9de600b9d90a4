"""Invitations and event notices that their channel could not take yet (a 429, a 5xx, no answer), kept in
Redis until a worker's scan delivers them.

Each person has a queue, oldest first (``keys.pending_delivery_queue``), and a place in
``keys.pending_deliveries`` scored by when it is tried next. A scanner claims a due person by moving
them a lease ahead (one scanner wins), delivers their queue in order, and removes each entry once
delivered; if its worker dies meanwhile, the person comes due again after the lease and the next try
carries the same ``dedup_id``, so nobody sees a message twice.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import cast

from redis.asyncio import Redis

from . import keys
from .passed_on import note_passed_on

# Queue a delivery (unless one with its dedup_id waits already) and put its person in the scan.
# KEYS: due, queue. ARGV: user id, entry, dedup id, due at, ttl, max entries. Returns 1 if queued.
_ADD = """
for _, entry in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  local ok, decoded = pcall(cjson.decode, entry)
  if ok and decoded['dedup_id'] == ARGV[3] then return 0 end
end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[6]), -1)
redis.call('EXPIRE', KEYS[2], ARGV[5])
redis.call('ZADD', KEYS[1], 'NX', ARGV[4], ARGV[1])
return 1
"""
CLAIM_DUE = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) <= tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return ARGV[3]
end
return false
"""
"""Claim a due member of a schedule (a sorted set of due times) by moving it a lease ahead: the lease
score, or nil if it is not due (any more). KEYS: the schedule. ARGV: member, now, lease end. Also
the reminders' claim."""
# Remove the queue's first entry if it is still the one delivered (its dedup_id).
# KEYS: queue. ARGV: dedup id.
_POP = """
local entry = redis.call('LINDEX', KEYS[1], 0)
if not entry then return 0 end
local ok, decoded = pcall(cjson.decode, entry)
if (not ok) or decoded['dedup_id'] == ARGV[1] then redis.call('LPOP', KEYS[1]) return 1 end
return 0
"""
# End a claim: with an empty queue the person leaves the scan, else they are tried again at ARGV[3]
# (a delivery queued meanwhile is tried at once). KEYS: due, queue. ARGV: user id, lease, next try, now.
_RELEASE = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
if redis.call('LLEN', KEYS[2]) == 0 then return redis.call('ZREM', KEYS[1], ARGV[1]) end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
"""

# Drop the deliveries queued on someone's behalf; with an empty queue its person leaves the scan.
# KEYS: due, queue. ARGV: the queue's user id, whose behalf. Returns how many were dropped.
_FORGET = """
local gone = 0
for i, entry in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  local ok, decoded = pcall(cjson.decode, entry)
  if ok and type(decoded) == 'table' and decoded['on_behalf_of'] == ARGV[2] then
    redis.call('LSET', KEYS[2], i - 1, '\0dropped')
    gone = gone + 1
  end
end
if gone > 0 then redis.call('LREM', KEYS[2], 0, '\0dropped') end
if redis.call('LLEN', KEYS[2]) == 0 then redis.call('ZREM', KEYS[1], ARGV[1]) end
return gone
"""


@dataclass(frozen=True)
class PendingDelivery:
    """A text for a person's 1:1 channel with the assistant, as the event tool wrote it."""

    user_id: str
    text: str
    dedup_id: str
    on_behalf_of: str | None
    queued_at: float


class PendingDeliveries:
    """The queues of deliveries waiting for their channel, and the claims of the scans that deliver them."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._add = redis.register_script(_ADD)
        self._claim = redis.register_script(CLAIM_DUE)
        self._pop = redis.register_script(_POP)
        self._release = redis.register_script(_RELEASE)
        self._forget = redis.register_script(_FORGET)

    async def add(self, delivery: PendingDelivery, *, due: float) -> bool:
        """Queue ``delivery`` behind the person's others, tried from ``due`` on; False if it waits already.
        One on someone's behalf is noted in their index first (``passed_on``)."""
        if delivery.on_behalf_of:
            await note_passed_on(self.redis, delivery.on_behalf_of, "queue", delivery.user_id)
        entry = json.dumps(asdict(delivery))
        args = [delivery.user_id, entry, delivery.dedup_id, repr(due)]
        args += [str(keys.PENDING_DELIVERY_TTL_S), str(keys.PENDING_DELIVERIES_MAX)]
        queue = keys.pending_delivery_queue(delivery.user_id)
        return bool(await self._add(keys=[keys.pending_deliveries(), queue], args=args))

    async def waiting(self, user_id: str) -> bool:
        """Whether anything waits to be delivered to ``user_id`` (what is told next goes behind it)."""
        return bool(await self.redis.llen(keys.pending_delivery_queue(user_id)))

    async def due(self, at: float, *, limit: int) -> list[str]:
        """People whose deliveries are due by ``at`` (at most ``limit``), the longest waiting first."""
        found = await self.redis.zrangebyscore(keys.pending_deliveries(), "-inf", at, start=0, num=limit)
        return [m.decode() for m in cast(list[bytes], found)]

    async def claim(self, user_id: str, *, at: float) -> float | None:
        """Claim a due person until the lease returned; None when another scan has them."""
        lease = at + keys.PENDING_DELIVERY_LEASE_S
        claimed = await self._claim(keys=[keys.pending_deliveries()], args=[user_id, repr(at), repr(lease)])
        return None if claimed is None else lease

    async def first(self, user_id: str) -> PendingDelivery | None:
        """The oldest delivery waiting for ``user_id``."""
        raw = await self.redis.lindex(keys.pending_delivery_queue(user_id), 0)
        if raw is None:
            return None
        try:
            return PendingDelivery(**json.loads(raw))
        except (ValueError, TypeError):  # not ours: dropped by done()
            return PendingDelivery(user_id, "", "", None, 0.0)

    async def done(self, delivery: PendingDelivery) -> None:
        """Remove ``delivery`` (the person's oldest), delivered or given up."""
        await self._pop(keys=[keys.pending_delivery_queue(delivery.user_id)], args=[delivery.dedup_id])

    async def forget_for(self, user_id: str, on_behalf_of: str) -> int:
        """Drop what waits for ``user_id`` on ``on_behalf_of``'s behalf (they asked for their data to be
        erased); how many deliveries were dropped."""
        queue = keys.pending_delivery_queue(user_id)
        return int(await self._forget(keys=[keys.pending_deliveries(), queue], args=[user_id, on_behalf_of]))

    async def behalf_erased(self, delivery: PendingDelivery) -> bool:
        """Whether the person the delivery speaks for had their data erased after it was queued (an
        erasure that ran while a scan held it)."""
        if not delivery.on_behalf_of:
            return False
        erased = await self.redis.get(keys.erased(delivery.on_behalf_of))
        return erased is not None and float(erased) >= delivery.queued_at

    async def release(self, user_id: str, *, lease: float, retry_at: float) -> None:
        """End a claim: the person leaves the scan if nothing waits, else is tried at ``retry_at``."""
        queue = keys.pending_delivery_queue(user_id)
        args = [user_id, repr(lease), repr(retry_at)]
        await self._release(keys=[keys.pending_deliveries(), queue], args=args)
