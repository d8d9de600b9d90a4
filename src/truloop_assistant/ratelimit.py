"""Per-user rate limits, kept in Redis with the ``limits`` library (moving windows)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from limits import RateLimitItem, parse
from limits.aio.storage import RedisClusterStorage, RedisStorage
from limits.aio.strategies import MovingWindowRateLimiter
from redis.asyncio import Redis

from .config import Settings
from .redis_client import is_cluster, parse_cluster_url
from .store import keys


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
    """Counts requests per user and scope; admins (JWT ``role: admin``) get the admin limit."""

    def __init__(self, settings: Settings, redis: Redis) -> None:
        self.user: RateLimitItem = parse(settings.rate_limit_user)
        self.admin: RateLimitItem = parse(settings.rate_limit_admin)
        storage: RedisStorage
        if is_cluster(settings.redis_url):
            # ``limits`` builds a cluster client from a URL; it is pointed at the server's own
            # instead (one set of connections, closed with the server). Each counter is one key,
            # so its moving-window script works on any slot.
            seeds = ",".join(f"{host}:{port}" for host, port in parse_cluster_url(settings.redis_url).nodes)
            storage = RedisClusterStorage(
                f"async+redis+cluster://{seeds}",
                implementation="redispy",
                key_prefix=keys.rate_limit_prefix(),
            )
            bridge: Any = storage.bridge
            bridge.storage = redis
            bridge.connection_getter = lambda _readonly: redis
            bridge.register_scripts()  # on the server's client
        else:
            url = settings.redis_url.replace("redis://", "async+redis://", 1).replace(
                "rediss://", "async+rediss://", 1
            )
            # On the server's own connection pool: nothing more to open or close. (``limits`` types
            # its client options as scalars, but hands them to redis-py's client as they are.)
            shared: dict[str, Any] = {"connection_pool": redis.connection_pool}
            storage = RedisStorage(
                url, implementation="redispy", key_prefix=keys.rate_limit_prefix(), **shared
            )
        self._storage = storage
        self._limiter = MovingWindowRateLimiter(self._storage)

    async def hit(self, user_id: str, *, scope: str, admin: bool = False) -> RateDecision:
        """Count one request; the decision says whether it is within the limit."""
        item = self.admin if admin else self.user
        allowed = await self._limiter.hit(item, scope, user_id)
        stats = await self._limiter.get_window_stats(item, scope, user_id)
        return RateDecision(
            allowed=allowed,
            limit=item.amount,
            remaining=max(0, stats.remaining),
            reset_at=math.ceil(stats.reset_time),
        )

    def window_s(self, *, admin: bool = False) -> int:
        return (self.admin if admin else self.user).get_expiry()
