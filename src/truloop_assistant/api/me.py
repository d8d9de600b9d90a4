"""``DELETE /api/v1/agent/me``: a person erases what the server keeps about them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import APIRouter, Depends, Response

from ..operations.erasure import Erased
from ..operations.guest_erasure import eraser_of
from .budget import redis_budget
from .deps import CurrentPrincipal, RateLimit, ServicesDep

router = APIRouter()

Erase = Callable[[str], Awaitable[Erased]]


async def _eraser(services: ServicesDep) -> Erase:
    """Erases a user from every store that keeps something of them."""
    return eraser_of(services)


@router.delete(
    "/api/v1/agent/me",
    tags=["agent"],
    status_code=204,
    response_class=Response,
    dependencies=[Depends(RateLimit("me"))],
)
async def erase_me(principal: CurrentPrincipal, erase: Annotated[Erase, Depends(_eraser)]) -> None:
    """Erase the caller's memories, history with the assistant, their lines, queued messages, tool-call
    records and dead letters in every channel they wrote in, pending calls and declared tools, and
    what the assistant passed on for them in others' channels; revoke their device tokens.

    The caller is the JWT's ``sub``. Every token of theirs issued until now (this one too) is 401
    ``token_revoked`` afterwards.
    """
    async with redis_budget(10.0):  # a person with many channels takes longer than one request's budget
        await erase(principal.user_id)
