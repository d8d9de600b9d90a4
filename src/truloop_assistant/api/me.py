"""``DELETE /api/v1/agent/me``: a person erases what the server keeps about them."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from ..errors import TooManyRequests
from ..operations.erasure import erase_user
from .budget import redis_budget
from .deps import ServicesDep

router = APIRouter()


@router.delete("/api/v1/agent/me", tags=["agent"], status_code=204, response_class=Response)
async def erase_me(request: Request, services: ServicesDep) -> Response:
    """Erase the caller's memories, history with the assistant, pending calls and declared tools.

    The caller is the JWT's ``sub``.
    """
    principal = await services.auth.verify(request.headers.get("authorization"))
    async with redis_budget(10.0):  # a person with many channels takes longer than one request's budget
        rate = await services.limiter.hit(principal.user_id, scope="me", admin=principal.is_admin)
        if not rate.allowed:
            raise TooManyRequests(
                f"too many requests: try again in {rate.retry_after} s", headers=rate.headers()
            )
        await erase_user(
            principal.user_id,
            redis=services.redis,
            store=services.store,
            transcript=services.transcript,
            memory=services.backends.memory,
            intake=services.intake,
        )
    return Response(status_code=204)
