"""``GET /api/v1/agent/calls``: the caller's open device requests, and one request's state.

An app that starts again, or another device of the same user, shows from here what still waits
for an answer (the chat history alone does not say which requests are still open).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from ..errors import Forbidden, NotFound
from ..store.records import CallState, CallView
from .budget import redis_budget
from .deps import CurrentPrincipal, RateLimit, TurnStoreDep
from .openapi import AUTH_ERRORS, ErrorBody

SCOPE = "calls"
router = APIRouter(tags=["agent"], dependencies=[Depends(RateLimit(SCOPE))])


class Call(BaseModel):
    """A device request: what the ``agent-rpc`` message asked, and what became of it."""

    id: str = Field(description="the JSON-RPC id (answer it at POST /api/v1/agent/tool-message)")
    method: str
    params: dict[str, Any]
    message: str = Field(description="the text the agent-rpc message shows with the request")
    channel_url: str
    state: CallState
    created_at: datetime
    expires_at: datetime
    settled_at: datetime | None = Field(
        default=None, description="when it left pending (absent while pending)"
    )


class OpenCalls(BaseModel):
    calls: list[Call] = Field(description="newest first, at most 100; only state pending")


@router.get("/api/v1/agent/calls", response_model_exclude_none=True, responses=AUTH_ERRORS)
async def open_calls(principal: CurrentPrincipal, store: TurnStoreDep) -> OpenCalls:
    """The caller's pending device requests (of every channel), newest first."""
    async with redis_budget():
        views = await store.open_calls(principal.user_id)
    return OpenCalls(calls=[_call(v) for v in views])


@router.get(
    "/api/v1/agent/calls/{call_id}",
    response_model_exclude_none=True,
    responses={
        **AUTH_ERRORS,
        403: {"model": ErrorBody, "description": "not_your_call: another user's request"},
        404: {"model": ErrorBody, "description": "unknown_call: never issued, or settled over 24 h ago"},
    },
)
async def one_call(call_id: str, principal: CurrentPrincipal, store: TurnStoreDep) -> Call:
    """One device request's state: pending, answered, expired, superseded or cancelled."""
    async with redis_budget():
        view = await store.get_call(call_id)
    if view is None:
        raise NotFound(f"no call with id {call_id!r} is known", code="unknown_call")
    if view.user_id != principal.user_id:
        raise Forbidden("this call belongs to another user", code="not_your_call")
    return _call(view)


def _call(view: CallView) -> Call:
    return Call(
        id=view.call_id,
        method=view.method,
        params=view.request.params,
        message=view.request.message,
        channel_url=view.request.channel_url or view.channel_url,
        state=view.state,
        created_at=_utc(view.created_at),
        expires_at=_utc(view.expires_at),
        settled_at=None if view.state == "pending" or view.settled_at is None else _utc(view.settled_at),
    )


def _utc(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp, UTC)
