"""App-wide pacing of the Platform API calls, in Redis: every process shares one budget.

Sendbird limits an application as a whole (per endpoint and per app, whatever process calls), so
the budget lives in Redis: each call reserves the next free slot of a schedule (a GCRA without
bursts: one call every ``1/rate`` seconds) in one script round trip, and waits on the client until
its slot. Writes (message sends, updates, channel creations) take a slot in a second, slower
schedule too. What goes first when the budget is short:

- ``ANSWER`` (answers, requests to the phone, invitations, channel creations) and ``LOOKUP``
  reserve the next slot whatever its wait: they are queued, in the order they asked.
- ``UPDATE`` (a request's message updated to ``agent-rpc-settled``) takes only a slot free now;
  while the schedule is booked it waits and asks again, so answers asked for meanwhile go first.
  After ``UPDATE_PRIORITY_S`` it is queued like an answer: an update is late, never lost.
- ``STREAM`` (an update of an answer that is still growing) takes only a slot free now, else it is
  skipped: the next one, or the answer's final update (an ``ANSWER``), carries its text anyway.
- ``TYPING`` (a start) takes only a slot free now, else it is skipped; for as long as the schedule
  is known to be booked, a start is skipped without asking Redis at all. ``TYPING_STOP`` (the stop
  of a start that went out, so the bot is not left typing) is queued if its slot is within
  ``TYPING_STOP_WAIT_S``, else skipped too.

A 429 moves the shared schedule past the wait Sendbird asked for, so every process holds back.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import RedisError

from ..errors import ServiceError
from ..store import keys

log = logging.getLogger(__name__)


class Kind(enum.Enum):
    """What a call is, for its place in the budget."""

    ANSWER = "answer"
    UPDATE = "update"
    STREAM = "stream"
    TYPING = "typing"
    TYPING_STOP = "typing-stop"
    LOOKUP = "lookup"

    @property
    def is_write(self) -> bool:
        """Sends, updates and channel creations: Sendbird's stricter limit."""
        return self in (Kind.ANSWER, Kind.UPDATE, Kind.STREAM)


HEADROOM = 1.1
"""Slots are this much further apart than the rate says: a call reaches Sendbird a little earlier or
later than its slot (the network, a busy event loop), and two that arrive closer than Sendbird's own
spacing would be refused."""
UPDATE_PRIORITY_S = 2.0
"""How long an update yields to answers before it is queued like one."""
TYPING_STOP_WAIT_S = 1.0
"""The longest a typing stop (whose start went out) is queued for; beyond it, it is skipped too."""
MAX_WAIT_S = 60.0
"""The longest a call is queued; a longer schedule fails the call as a transport error (retried)."""

# KEYS: the schedule of every call, the schedule of writes (one hash tag: one slot on a Cluster).
# ARGV: interval of every call (µs), interval of writes (µs, 0: not a write), the longest wait
# accepted (µs; 0: only a slot free now), the hold asked for by a 429 (µs; 0: none).
# Returns the wait until the reserved slot (µs, >= 0), or -(wait until a slot frees) when the
# longest wait is shorter than that: then nothing is reserved.
_RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local all_iv, write_iv = tonumber(ARGV[1]), tonumber(ARGV[2])
local max_wait, hold = tonumber(ARGV[3]), tonumber(ARGV[4])
local all_at = math.max(tonumber(redis.call('GET', KEYS[1]) or 0), now)
local write_at = now
if write_iv > 0 then write_at = math.max(tonumber(redis.call('GET', KEYS[2]) or 0), now) end
if hold > 0 then
  all_at = math.max(all_at, now + hold)
  if write_iv > 0 then write_at = math.max(write_at, now + hold) end
end
local at = math.max(all_at, write_at)
local ttl = math.ceil((at - now) / 1000) + 2000
if at - now > max_wait then
  if hold > 0 then
    redis.call('SET', KEYS[1], all_at, 'PX', ttl)
    if write_iv > 0 then redis.call('SET', KEYS[2], write_at, 'PX', ttl) end
  end
  return -math.max(at - now, 1)
end
-- A write counts against every call's budget from now, not from its (later) slot: reads and typing
-- are not held up behind the writes' queue.
redis.call('SET', KEYS[1], all_at + all_iv, 'PX', ttl + math.ceil(all_iv / 1000))
if write_iv > 0 then redis.call('SET', KEYS[2], at + write_iv, 'PX', ttl + math.ceil(write_iv / 1000)) end
return at - now
"""


class Throttled(ServiceError):
    """The call found no slot it could take (a typing call, or a wait past ``MAX_WAIT_S``)."""


@dataclass(frozen=True)
class Rates:
    """Calls per second to Sendbird, app-wide: every call, and writes among them."""

    all: float
    writes: float


class Pacer:
    """Reserves each Platform API call's slot in the app-wide schedule (Redis) and waits for it."""

    def __init__(self, redis: Redis, rates: Rates) -> None:
        self.rates = rates
        self._reserve = redis.register_script(_RESERVE)
        self._booked_until = 0.0
        """Until when (``time.monotonic``) the schedule is known to be booked: typing is skipped."""

    async def acquire(self, kind: Kind) -> None:
        """Wait for the call's slot; raise :class:`Throttled` when it gets none (see the module)."""
        if kind is Kind.TYPING:
            if time.monotonic() < self._booked_until:
                raise Throttled("no budget to spare for typing")
            await self._take(kind, max_wait_s=0.0)
            return
        if kind is Kind.STREAM:
            await self._take(kind, max_wait_s=0.0)
            return
        if kind is Kind.TYPING_STOP:
            await self._take(kind, max_wait_s=TYPING_STOP_WAIT_S)
            return
        if kind is Kind.UPDATE:
            yield_until = time.monotonic() + UPDATE_PRIORITY_S
            while (left := yield_until - time.monotonic()) > 0:
                try:
                    await self._take(kind, max_wait_s=0.0)
                    return
                except _Booked as booked:
                    await asyncio.sleep(min(booked.wait_s, left) + 0.001)
        await self._take(kind, max_wait_s=MAX_WAIT_S)

    async def hold(self, kind: Kind, seconds: float) -> None:
        """Sendbird answered 429: nobody calls before ``seconds`` from now (the call retries after it)."""
        try:
            await self._take(kind, max_wait_s=0.0, hold_s=seconds)
        except _Booked:
            pass  # the schedule is booked past the hold already

    async def _take(self, kind: Kind, *, max_wait_s: float, hold_s: float = 0.0) -> None:
        write_iv = _micros(HEADROOM / self.rates.writes) if kind.is_write else 0
        try:
            wait = int(
                await self._reserve(
                    keys=[keys.sendbird_pace("all"), keys.sendbird_pace("writes")],
                    args=[_micros(HEADROOM / self.rates.all), write_iv, _micros(max_wait_s), _micros(hold_s)],
                )
            )
        except (RedisError, OSError) as exc:  # Sendbird's own limit still holds: the call goes out
            # With the exception attached, an outage is one line per outage, not one per call.
            log.warning("could not pace a Sendbird call (%s)", kind.value, exc_info=exc)
            return
        if wait < 0:
            if not kind.is_write:  # a write's wait may be its own schedule's, not every call's
                self._booked_until = time.monotonic() + -wait / 1e6
            if max_wait_s >= MAX_WAIT_S:
                raise Throttled(f"Sendbird's budget is booked for {-wait / 1e6:.1f} s")
            raise _Booked(-wait / 1e6)
        if wait > 0:
            if not kind.is_write:
                self._booked_until = time.monotonic() + wait / 1e6
            await asyncio.sleep(wait / 1e6)


class _Booked(Throttled):
    """No slot free now; one frees in ``wait_s``."""

    def __init__(self, wait_s: float) -> None:
        super().__init__(f"no slot free for {wait_s:.3f} s")
        self.wait_s = wait_s


def _micros(seconds: float) -> int:
    return max(0, round(seconds * 1_000_000))
