"""What routes depend on: the process's clients, who calls, and the rate limit of a scope.

Each is an ``Annotated`` alias a route names in its signature; FastAPI solves them in the order
they appear (those of the route's ``dependencies=`` first), so a route states the order of its
checks by the order of its parameters.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request, Response
from redis.asyncio import Redis

from ..auth import Principal
from ..config import Settings
from ..deferred.device_answers import DeviceAnswers
from ..errors import AppError, Forbidden, TooManyRequests
from ..ratelimit import RateDecision
from ..services import Services
from ..store.device_declarations import ClientTools
from ..store.ledger import Ledger
from ..store.turns import TurnStore
from .budget import redis_budget


def get_services(request: Request) -> Services:
    return request.app.state.services


ServicesDep = Annotated[Services, Depends(get_services)]


def _settings(services: ServicesDep) -> Settings:
    return services.settings


def _redis(services: ServicesDep) -> Redis:
    return services.redis


def _turn_store(services: ServicesDep) -> TurnStore:
    return services.store


def _ledger(services: ServicesDep) -> Ledger:
    return services.ledger


def _client_tools(services: ServicesDep) -> ClientTools:
    return services.client_tools


def _device_answers(services: ServicesDep) -> DeviceAnswers:
    return DeviceAnswers(
        services.store, services.intake, unhandled_wait_s=services.settings.unhandled_call_wait_s
    )


SettingsDep = Annotated[Settings, Depends(_settings)]
RedisDep = Annotated[Redis, Depends(_redis)]
TurnStoreDep = Annotated[TurnStore, Depends(_turn_store)]
LedgerDep = Annotated[Ledger, Depends(_ledger)]
ClientToolsDep = Annotated[ClientTools, Depends(_client_tools)]
DeviceAnswersDep = Annotated[DeviceAnswers, Depends(_device_answers)]


async def current_principal(request: Request, services: ServicesDep) -> Principal:
    """Who calls: the user of the request's bearer token (401 without a valid one)."""
    return await services.auth.verify(request.headers.get("authorization"))


CurrentPrincipal = Annotated[Principal, Depends(current_principal)]


async def admin_principal(principal: CurrentPrincipal) -> Principal:
    """Who calls, an operator (a token with ``role: admin``; 403 for anyone else)."""
    if not principal.is_admin:
        raise Forbidden("the ledger is for operators: a token with role admin is needed", code="not_admin")
    return principal


AdminPrincipal = Annotated[Principal, Depends(admin_principal)]


class RateLimit:
    """Counts the request in the caller's window for ``scope`` (429 beyond it).

    Its ``X-RateLimit-*`` headers go on the route's answer, a success or an error of the route's own.
    """

    def __init__(self, scope: str) -> None:
        self.scope = scope

    async def __call__(
        self, principal: CurrentPrincipal, services: ServicesDep, response: Response
    ) -> AsyncIterator[RateDecision]:
        async with redis_budget():
            rate = await services.limiter.hit(principal.user_id, scope=self.scope, admin=principal.is_admin)
        if not rate.allowed:
            raise TooManyRequests(
                f"too many requests: at most {rate.limit} per window; try again in {rate.retry_after} s",
                headers=rate.headers(),
            )
        response.headers.update(rate.headers())
        try:
            yield rate
        except AppError as exc:
            exc.headers.update(rate.headers())
            raise
