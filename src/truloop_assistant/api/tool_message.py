"""``POST /api/v1/agent/tool-message``: the device's JSON-RPC response to a deferred call.

The checks run in this order: 413 size, 401 token, 400 parse, 429 rate, then what the call's
state says (:class:`~truloop_assistant.deferred.device_answers.DeviceAnswers`).
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field

from ..deferred import device_answers as outcomes
from ..deferred.device_answers import AnswerOutcome, DeviceAnswers
from ..errors import AppError, Conflict, Forbidden, Gone, NotFound, Unprocessable
from ..logs import log_context
from ..metrics import TOOL_MESSAGES
from ..protocol.jsonrpc import parse_response
from ..store.reads import Batch
from . import openapi
from .body import read_body
from .budget import redis_budget
from .deps import authenticated, services_of, within_rate

log = logging.getLogger(__name__)
router = APIRouter()

MAX_TOOL_MESSAGE_BYTES = 256 * 1024

_REFUSALS: dict[str, type[AppError]] = {
    "unknown_call": NotFound,
    "not_your_call": Forbidden,
    "call_expired": Gone,
    "call_superseded": Gone,
    "call_cancelled": Gone,
    "already_answered": Conflict,
    "invalid_result": Unprocessable,
}


class Accepted(BaseModel):
    """The answer is recorded."""

    status: Literal["accepted", "resuming"] = Field(
        description="accepted: other calls of the turn still wait (remaining); resuming: the run goes on"
    )
    remaining: int | None = Field(default=None, description="unanswered calls and approvals of the turn")


class AlreadyAnswered(BaseModel):
    """The same answer again: nothing to do."""

    status: Literal["duplicate"]


@router.post(
    "/api/v1/agent/tool-message",
    tags=["agent"],
    status_code=202,
    # Two successes with two bodies: each status names its model (one response_model cannot).
    response_model=None,
    responses={
        200: {
            "model": AlreadyAnswered,
            "description": "the same response again: nothing to do",
            "headers": openapi.RATE_HEADERS,
        },
        202: {"model": Accepted, "description": "recorded", "headers": openapi.RATE_HEADERS},
        **openapi.TOOL_MESSAGE_ERRORS,
    },
    openapi_extra=openapi.TOOL_MESSAGE_REQUEST,
)
async def tool_message(request: Request, response: Response) -> dict[str, Any]:
    """Record a device's answer; when the turn's last call is answered the run resumes."""
    # The checks one after the other, in their order, rather than as dependencies: the busiest
    # route is spared the cost of solving a dependency graph on every request.
    try:
        body = await _answered(request, response)
    except AppError as exc:
        TOOL_MESSAGES.labels(str(exc.status)).inc()  # every tool message, by the status it got
        raise
    TOOL_MESSAGES.labels(str(response.status_code or 202)).inc()
    return body


async def _answered(request: Request, response: Response) -> dict[str, Any]:
    services = services_of(request)
    raw = await read_body(request, MAX_TOOL_MESSAGE_BYTES)  # 413
    principal = await authenticated(services, request.headers.get("authorization"))  # 401
    answer = parse_response(raw)  # 400
    # Counted once it parsed, in one round trip with the lookup of the call's conversation.
    batch = Batch(services.redis)
    counted = batch.add(
        services.limiter.hit_read(principal.user_id, scope="tool-message", admin=principal.is_admin)
    )
    tag = batch.add(services.store.call_tag_read(answer.call_id))
    async with redis_budget():
        await batch.run()
    rate = within_rate(counted.value, response)  # 429
    answers = DeviceAnswers(
        services.store, services.intake, unhandled_wait_s=services.settings.unhandled_call_wait_s
    )
    try:
        with log_context(call_id=answer.call_id, user=principal.user_id):
            async with redis_budget():
                outcome = await answers.record_in(tag.value, principal.user_id, answer)
            body = _body_of(answer.call_id, outcome)  # 404, 403, 410, 409, 422
    except AppError as exc:
        exc.headers.update(rate.headers())
        raise
    if isinstance(body, AlreadyAnswered):
        response.status_code = 200
    return body.model_dump(exclude_none=True)


def _body_of(call_id: str, outcome: AnswerOutcome) -> Accepted | AlreadyAnswered:
    match outcome:
        case outcomes.Accepted(remaining=remaining):
            return Accepted(status="accepted", remaining=remaining)
        case outcomes.Resuming():
            return Accepted(status="resuming")
        case outcomes.Duplicate():
            return AlreadyAnswered(status="duplicate")
        case outcomes.Refused(reason=reason, message=message):
            error = _REFUSALS[reason](message, code=reason)
            if error.status in (404, 410):  # the phone answered something it should not have
                log.info("tool message for %s refused: %s (%s)", call_id, reason, message)
            raise error
