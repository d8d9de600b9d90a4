"""``/api/v1/agent/approvals``: the tools a person allows for good ("always"), and ending one.

A yes with ``"remember": "always"`` in a confirmation dialog makes it; from then on that person's
calls of that tool run without a dialog, on all their devices and in every channel, until they end it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, Depends, Response
from pydantic import BaseModel, Field

from ..store.standing_approvals import end_standing, standing
from .budget import redis_budget
from .deps import CurrentPrincipal, RateLimit, RedisDep
from .openapi import AUTH_ERRORS

router = APIRouter(tags=["agent"], dependencies=[Depends(RateLimit("me"))])


class StandingApproval(BaseModel):
    tool: str = Field(description="the tool's name, e.g. create_event")
    since: datetime = Field(description="when the person first said always to it (UTC)")


class StandingApprovals(BaseModel):
    approvals: list[StandingApproval] = Field(description="oldest first")


@router.get("/api/v1/agent/approvals", responses=AUTH_ERRORS)
async def list_approvals(principal: CurrentPrincipal, redis: RedisDep) -> StandingApprovals:
    """The caller's standing approvals: the tools whose calls run without asking them."""
    async with redis_budget():
        allowed = await standing(redis, principal.user_id)
    return StandingApprovals(
        approvals=[
            StandingApproval(tool=tool, since=datetime.fromtimestamp(at, UTC))
            for tool, at in sorted(allowed.items(), key=lambda item: item[1])
        ]
    )


@router.delete(
    "/api/v1/agent/approvals/{tool}", status_code=204, response_class=Response, responses=AUTH_ERRORS
)
async def end_approval(tool: str, principal: CurrentPrincipal, redis: RedisDep) -> None:
    """End a standing approval: the caller is asked again for that tool (204 whether or not it existed)."""
    async with redis_budget():
        await end_standing(redis, principal.user_id, tool)
