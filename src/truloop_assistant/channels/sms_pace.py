"""The app-wide pace of text messages (``TRULOOP_TWILIO_RATE`` a second), kept in Redis.

Every process takes the next free slot from one key, by Redis's own clock: sends are spaced at least
``1 / rate`` seconds apart however many processes send. A caller whose slot would be more than
``max_wait_s`` away takes none (the send is tried again later, so a burst never piles up waiters), and
a 429 moves the next slot past the wait Twilio asked for.
"""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis

from ..errors import ServiceError
from ..store import keys

_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local slot = tonumber(redis.call('GET', KEYS[1]) or '0')
if slot < now then slot = now end
if slot - now > tonumber(ARGV[2]) then return -1 end
local after = slot + interval
local ttl = string.format('%.0f', math.ceil((after - now) / 1000) + ARGV[3])
redis.call('SET', KEYS[1], string.format('%.0f', after), 'PX', ttl)
return slot - now
"""
"""KEYS: the next free slot. ARGV: µs between sends, the longest wait taken (µs), how long the key
outlives its slot (ms). The wait for the slot taken in µs; -1: none taken (it is too far off)."""

_HOLD = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local until_ = now + tonumber(ARGV[1])
local slot = tonumber(redis.call('GET', KEYS[1]) or '0')
if slot < until_ then
  redis.call('SET', KEYS[1], string.format('%.0f', until_), 'PX',
    string.format('%.0f', math.ceil(tonumber(ARGV[1]) / 1000) + ARGV[2]))
end
return 0
"""
"""KEYS: the next free slot. ARGV: how long from now nothing is sent (µs), how long the key outlives it."""


class PaceTooFar(ServiceError):
    """No slot within the longest wait: the sends already waiting fill it."""


class SmsPace:
    """Spaces every process's sends ``1 / rate`` seconds apart."""

    def __init__(self, redis: Redis, *, rate: float, max_wait_s: float = 30.0) -> None:
        self._take = redis.register_script(_TAKE)
        self._hold = redis.register_script(_HOLD)
        self.interval_us = round(1_000_000 / rate)
        self.max_wait_us = round(max_wait_s * 1_000_000)

    async def slot(self) -> None:
        """Wait for this send's slot; :class:`PaceTooFar` if it is beyond the longest wait."""
        wait_us = int(
            await self._take(
                keys=[keys.sms_pace()],
                args=[self.interval_us, self.max_wait_us, keys.SMS_PACE_TTL_S * 1000],
            )
        )
        if wait_us < 0:
            raise PaceTooFar(f"more sends are waiting than go out within {self.max_wait_us / 1e6:g} s")
        if wait_us:
            await asyncio.sleep(wait_us / 1_000_000)

    async def hold(self, seconds: float) -> None:
        """Send nothing for ``seconds`` (Twilio answered 429 and asked for that wait)."""
        await self._hold(
            keys=[keys.sms_pace()], args=[round(seconds * 1_000_000), keys.SMS_PACE_TTL_S * 1000]
        )
