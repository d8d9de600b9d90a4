"""``POST /api/v1/agent/turns/stop``: a person stops the answer the assistant is writing them.

Only the caller's own running step in the channel is stopped (another person's turn in a group goes
on); a turn paused for the device is not running, and is left as it is (its dialog is answered,
declined, or cut short by the person's next message). The step runs in a worker: the stop is a mark
in Redis that the step reads within a fraction of a second (``store.turn_stops``).
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import Unprocessable, first_problem
from ..store.turn_stops import TurnStops
from .body import read_body
from .budget import redis_budget
from .deps import CurrentPrincipal, RateLimit, RedisDep
from .openapi import AUTH_ERRORS, ErrorBody

MAX_STOP_BYTES = 4096
"""A stop's body is one channel url."""

router = APIRouter(tags=["agent"], dependencies=[Depends(RateLimit("stop"))])


class StopRequest(BaseModel):
    """Which channel's answer to stop."""

    model_config = ConfigDict(extra="forbid")

    channel_url: str = Field(min_length=1, max_length=400, description="the channel the answer is written in")


class Stopped(BaseModel):
    status: Literal["stopped", "idle"] = Field(
        description="stopped: a turn of the caller ran there and was told to stop (its answer ends "
        "within a second, marked stopped); idle: none of theirs was running there"
    )


@router.post(
    "/api/v1/agent/turns/stop",
    responses={
        **AUTH_ERRORS,
        413: {"model": ErrorBody, "description": "over 4 KiB"},
        422: {"model": ErrorBody, "description": "invalid_body: not a JSON object with just a channel_url"},
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": StopRequest.model_json_schema()}},
        }
    },
)
async def stop_turn(request: Request, principal: CurrentPrincipal, redis: RedisDep) -> Stopped:
    """Stop the caller's running turn in a channel: a streaming answer ends where it is (its message
    keeps the text so far, ``data`` ``{"streaming":false,"stopped":true}``) and the model request is
    cancelled; tools that already ran stay done."""
    raw = await read_body(request, MAX_STOP_BYTES)  # 413
    try:
        body = StopRequest.model_validate_json(raw)
    except ValidationError as exc:
        raise Unprocessable(first_problem(exc.errors()), code="invalid_body") from None
    async with redis_budget():
        stopped = await TurnStops(redis).stop(body.channel_url, principal.user_id)
    return Stopped(status="stopped" if stopped else "idle")
