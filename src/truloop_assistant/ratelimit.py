"""Per-user rate limits: an exact moving window per user and scope, kept in Redis.

Each window is one sorted set of the requests it counted, scored by their time, and one Lua script
(:data:`HIT_SCRIPT`, one ``EVALSHA``) counts a request and answers with where the window stands: a
constant handful of commands whatever the limit. A request beyond the limit is not counted. One key
per script, so it runs on any slot of a Redis Cluster; the key expires a window after its newest
request. The limits are read with ``limits.parse`` (``20/minute``).
"""

from __future__ import annotations

import itertools
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from limits import RateLimitItem, parse
from redis.asyncio import Redis

from .config import Settings
from .store import keys
from .store.reads import Read

HIT_SCRIPT = """
-- KEYS[1]: the window, a sorted set of the requests it counted scored by their time (Unix seconds)
-- ARGV: now, the oldest time still in the window (now - window), the limit, the window in
--       milliseconds, a member unique to this request
-- Times stay strings: Lua would print a number with 14 significant digits, and lose the microseconds.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[2])
local count = redis.call('ZCARD', KEYS[1])
local allowed = 0
if count < tonumber(ARGV[3]) then
    redis.call('ZADD', KEYS[1], ARGV[1], ARGV[5])
    redis.call('PEXPIRE', KEYS[1], ARGV[4])
    count = count + 1
    allowed = 1
    if count == 1 then return {1, 1, ARGV[1]} end  -- this request is the window's oldest
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {allowed, count, oldest[2] or ARGV[1]}
"""
"""Count one request if the window has room; ``[allowed (0/1), requests in the window, oldest time]``."""


@dataclass(frozen=True)
class RateDecision:
    allowed: bool
    limit: int
    remaining: int
    reset_at: int
    """Unix time (seconds) when the window frees up again."""

    @property
    def retry_after(self) -> int:
        return max(1, math.ceil(self.reset_at - time.time()))

    def headers(self) -> dict[str, str]:
        headers = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset_at),
        }
        if not self.allowed:
            headers["Retry-After"] = str(self.retry_after)
        return headers


class RateLimiter:
    """Counts requests per user and scope; admins (JWT ``role: admin``) get the admin limit.

    At most N requests in any W seconds (both ends of the window included), by this process's
    clock (``clock``, Unix seconds).
    """

    def __init__(self, settings: Settings, redis: Redis, *, clock: Callable[[], float] = time.time) -> None:
        self.user: RateLimitItem = parse(settings.rate_limit_user)
        self.admin: RateLimitItem = parse(settings.rate_limit_admin)
        self._clock = clock
        # redis-py's script object: EVALSHA, and on NOSCRIPT (a restarted or failed-over Redis)
        # SCRIPT LOAD (to every primary of a cluster) and EVALSHA again.
        self._script = redis.register_script(HIT_SCRIPT)
        # Members only need to differ: this process's random tag and a counter.
        self._tag = secrets.token_hex(6)
        self._seq = itertools.count()

    async def hit(self, user_id: str, *, scope: str, admin: bool = False) -> RateDecision:
        """Count one request; the decision says whether it is within the limit."""
        item, key, args = self._hit_args(user_id, scope, admin)
        return _decision(item, await self._script(keys=[key], args=args))

    def hit_read(self, user_id: str, *, scope: str, admin: bool = False) -> Read[RateDecision]:
        """:meth:`hit` to send with other reads in one round trip. The script goes as ``EVAL``: a
        registered one in a pipeline costs a round trip of its own (``SCRIPT EXISTS``)."""
        item, key, args = self._hit_args(user_id, scope, admin)
        return Read(lambda r: r.eval(HIT_SCRIPT, 1, key, *args), lambda reply: _decision(item, reply))

    def _hit_args(self, user_id: str, scope: str, admin: bool) -> tuple[RateLimitItem, str, list[str | int]]:
        item = self.admin if admin else self.user
        window = item.get_expiry()
        now = self._clock()
        # The limit and window are in the key: another setting starts a fresh window.
        key = f"{keys.rate_limit_prefix()}:{scope}:{item.amount}/{window}s:{user_id}"
        member = f"{self._tag}:{next(self._seq)}"
        return item, key, [repr(now), repr(now - window), item.amount, window * 1000, member]

    def window_s(self, *, admin: bool = False) -> int:
        return (self.admin if admin else self.user).get_expiry()


def _decision(item: RateLimitItem, reply: list[bytes | int]) -> RateDecision:
    allowed, count, oldest = reply
    return RateDecision(
        allowed=bool(allowed),
        limit=item.amount,
        remaining=max(0, item.amount - int(count)),
        reset_at=math.ceil(float(oldest) + item.get_expiry()),
    )
