"""``GET /api/v1/admin/conversations/{channel_url}``: a conversation's tool-call ledger, for operators."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from ..errors import Forbidden, NotFound, TooManyRequests
from ..operations.inspection import as_json, conversation_report
from .budget import redis_budget
from .deps import ServicesDep

router = APIRouter(prefix="/api/v1/admin", tags=["admin"])


@router.get("/conversations/{channel_url}")
async def conversation(channel_url: str, request: Request, services: ServicesDep) -> dict[str, Any]:
    """The conversation's recent turns, newest first, each with its tool calls and results (admin JWT only).

    Also the calls still waiting for the phone (with the seconds left), the events waiting to run,
    the last step that failed and the events given up after their retries. Times are ISO 8601 (UTC).
    """
    principal = await services.auth.verify(request.headers.get("authorization"))
    if not principal.is_admin:
        raise Forbidden("the ledger is for operators: a token with role admin is needed", code="not_admin")
    async with redis_budget():
        rate = await services.limiter.hit(principal.user_id, scope="admin", admin=True)
        if not rate.allowed:
            raise TooManyRequests(
                f"too many requests: try again in {rate.retry_after} s", headers=rate.headers()
            )
        report = await conversation_report(services.redis, services.ledger, channel_url)
    if not report.known:
        raise NotFound(f"no conversation {channel_url!r} is known here", code="unknown_conversation")
    return as_json(report)
