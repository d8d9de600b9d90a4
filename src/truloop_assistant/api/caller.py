"""Who calls a device endpoint (their token), counted in their rate-limit window."""

from __future__ import annotations

from fastapi import Request

from ..auth import Principal
from ..errors import TooManyRequests
from ..ratelimit import RateDecision
from .budget import redis_budget
from .deps import ServicesDep


async def limited(services: ServicesDep, principal: Principal, *, scope: str) -> RateDecision:
    """Count the request in the caller's window for ``scope``; 429 beyond it."""
    rate = await services.limiter.hit(principal.user_id, scope=scope, admin=principal.is_admin)
    if not rate.allowed:
        raise TooManyRequests(
            f"too many requests: at most {rate.limit} per window; try again in {rate.retry_after} s",
            headers=rate.headers(),
        )
    return rate


async def caller(request: Request, services: ServicesDep, *, scope: str) -> tuple[Principal, RateDecision]:
    """Who calls (401 without a valid token), counted in their window for ``scope`` (429 beyond it)."""
    principal = await services.auth.verify(request.headers.get("authorization"))
    async with redis_budget():
        return principal, await limited(services, principal, scope=scope)
