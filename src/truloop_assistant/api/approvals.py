"""``/api/v1/agent/approvals``: what a person allows without asking ("always"), and ending it.

A yes with ``"remember": "always"`` in a confirmation dialog that offered it (``params.always``)
makes one: for 30 days that person's calls of that tool within its scope (the people and
description that dialog showed, or the message's recipient) run without a dialog in their own 1:1
chat with the assistant, never in a group, until they end it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends, Response
from pydantic import BaseModel, Field

from ..store.standing_approvals import end_standing, standing
from .budget import redis_budget
from .deps import CurrentPrincipal, RateLimit, RedisDep
from .openapi import AUTH_ERRORS

router = APIRouter(tags=["agent"], dependencies=[Depends(RateLimit("me"))])


class StandingApproval(BaseModel):
    tool: str = Field(description="the tool's name, e.g. create_event")
    since: datetime = Field(description="when the person said always to it (UTC)")
    until: datetime = Field(description="when it ends (UTC): 30 days after it was given")
    scope: dict[str, Any] = Field(
        description="which of the tool's calls it covers: for events, invitees (no one else may be "
        "invited) and description (none other may be written; null: none); for messages, user_id "
        "(the one recipient); {} for save_memory"
    )


class StandingApprovals(BaseModel):
    approvals: list[StandingApproval] = Field(description="oldest first; only those in force")


@router.get("/api/v1/agent/approvals", responses=AUTH_ERRORS)
async def list_approvals(principal: CurrentPrincipal, redis: RedisDep) -> StandingApprovals:
    """The caller's standing approvals: the calls that run without asking them, and until when."""
    async with redis_budget():
        allowed = await standing(redis, principal.user_id)
    return StandingApprovals(
        approvals=[
            StandingApproval(
                tool=approval.tool,
                since=datetime.fromtimestamp(approval.since, UTC),
                until=datetime.fromtimestamp(approval.until, UTC),
                scope=approval.scope,
            )
            for approval in allowed
        ]
    )


@router.delete(
    "/api/v1/agent/approvals/{tool}", status_code=204, response_class=Response, responses=AUTH_ERRORS
)
async def end_approval(tool: str, principal: CurrentPrincipal, redis: RedisDep) -> None:
    """End the caller's standing approvals of a tool, whatever their scope: they are asked again for
    it (204 whether or not there were any)."""
    async with redis_budget():
        await end_standing(redis, principal.user_id, tool)
