"""What routes depend on: the process's clients, who calls, and the rate limit of a scope.

Each is an ``Annotated`` alias a route names in its signature; FastAPI solves them in the order
they appear (those of the route's ``dependencies=`` first), so a route states the order of its
checks by the order of its parameters. Every dependency is a coroutine function, even one that
only looks something up: FastAPI runs a plain function in a worker thread, which costs more than
the lookup itself on every request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request, Response
from redis.asyncio import Redis

from ..auth import Principal
from ..config import Settings
from ..errors import AppError, Forbidden, TooManyRequests
from ..ratelimit import RateDecision
from ..services import Services
from ..store.device_declarations import ClientTools
from ..store.ledger import Ledger
from ..store.turns import TurnStore
from .budget import redis_budget


def services_of(request: Request) -> Services:
    """The process's clients, built by the app's lifespan."""
    services: Services = request.app.state.services
    return services


async def get_services(request: Request) -> Services:
    return services_of(request)


ServicesDep = Annotated[Services, Depends(get_services)]


async def _settings(services: ServicesDep) -> Settings:
    return services.settings


async def _redis(services: ServicesDep) -> Redis:
    return services.redis


async def _turn_store(services: ServicesDep) -> TurnStore:
    return services.store


async def _ledger(services: ServicesDep) -> Ledger:
    return services.ledger


async def _client_tools(services: ServicesDep) -> ClientTools:
    return services.client_tools


SettingsDep = Annotated[Settings, Depends(_settings)]
RedisDep = Annotated[Redis, Depends(_redis)]
TurnStoreDep = Annotated[TurnStore, Depends(_turn_store)]
LedgerDep = Annotated[Ledger, Depends(_ledger)]
ClientToolsDep = Annotated[ClientTools, Depends(_client_tools)]


async def current_principal(request: Request, services: ServicesDep) -> Principal:
    """Who calls: the user of the request's bearer token (401 without a valid one, or with one issued
    before the user's tokens were revoked)."""
    return await authenticated(services, request.headers.get("authorization"))


async def authenticated(services: Services, authorization: str | None) -> Principal:
    """The principal of a valid token not revoked since (401 otherwise); its one Redis read within the
    request's budget (a JWKS fetch is not: it has its own)."""
    token = await services.auth.authenticate(authorization)
    async with redis_budget():
        return await services.auth.admit(token)


CurrentPrincipal = Annotated[Principal, Depends(current_principal)]


async def admin_principal(principal: CurrentPrincipal) -> Principal:
    """Who calls, an operator (a token with ``role: admin``; 403 for anyone else)."""
    if not principal.is_admin:
        raise Forbidden("the ledger is for operators: a token with role admin is needed", code="not_admin")
    return principal


AdminPrincipal = Annotated[Principal, Depends(admin_principal)]


async def count_request(
    services: Services, principal: Principal, scope: str, response: Response
) -> RateDecision:
    """Count the request in the caller's window for ``scope``: 429 beyond it, else its
    ``X-RateLimit-*`` headers go on ``response`` (the caller adds them to its own errors too)."""
    async with redis_budget():
        rate = await services.limiter.hit(principal.user_id, scope=scope, admin=principal.is_admin)
    return within_rate(rate, response)


def within_rate(rate: RateDecision, response: Response) -> RateDecision:
    """429 for a request beyond its window, else its ``X-RateLimit-*`` headers go on ``response``."""
    if not rate.allowed:
        raise TooManyRequests(
            f"too many requests: at most {rate.limit} per window; try again in {rate.retry_after} s",
            headers=rate.headers(),
        )
    response.headers.update(rate.headers())
    return rate


class RateLimit:
    """Counts the request in the caller's window for ``scope`` (429 beyond it).

    Its ``X-RateLimit-*`` headers go on the route's answer, a success or an error of the route's own.
    """

    def __init__(self, scope: str) -> None:
        self.scope = scope

    async def __call__(
        self, principal: CurrentPrincipal, services: ServicesDep, response: Response
    ) -> AsyncIterator[RateDecision]:
        rate = await count_request(services, principal, self.scope, response)
        try:
            yield rate
        except AppError as exc:
            exc.headers.update(rate.headers())
            raise
