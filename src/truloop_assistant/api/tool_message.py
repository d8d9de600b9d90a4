"""``POST /api/v1/agent/tool-message``: the device's JSON-RPC response to a deferred call."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from ..deferred.answers import Accepted, AnswerOutcome, DeviceAnswers, Duplicate, Refused, Resuming
from ..errors import AppError, Conflict, Forbidden, Gone, NotFound, TooManyRequests, Unprocessable
from ..logs import log_context
from ..metrics import TOOL_MESSAGES
from ..protocol.jsonrpc import parse_response
from . import openapi
from .body import read_body
from .budget import redis_budget
from .deps import ServicesDep

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


@router.post(
    "/api/v1/agent/tool-message",
    tags=["agent"],
    status_code=202,
    response_model=None,
    responses=openapi.TOOL_MESSAGE["responses"],
    openapi_extra=openapi.TOOL_MESSAGE["openapi_extra"],
)
async def tool_message(request: Request, services: ServicesDep) -> JSONResponse:
    """Record a device's answer; when the turn's last call is answered the run resumes."""
    try:
        response = await _handle(request, services)
    except AppError as exc:
        TOOL_MESSAGES.labels(str(exc.status)).inc()
        raise
    TOOL_MESSAGES.labels(str(response.status_code)).inc()
    return response


async def _handle(request: Request, services: ServicesDep) -> JSONResponse:
    body = await read_body(request, MAX_TOOL_MESSAGE_BYTES)
    principal = await services.auth.verify(request.headers.get("authorization"))
    answer = parse_response(body)
    answers = DeviceAnswers(
        services.store, services.intake, unhandled_wait_s=services.settings.unhandled_call_wait_s
    )
    async with redis_budget():
        rate = await services.limiter.hit(principal.user_id, scope="tool-message", admin=principal.is_admin)
        if not rate.allowed:
            raise TooManyRequests(
                f"too many tool messages: at most {rate.limit} per window; try again in {rate.retry_after} s",
                headers=rate.headers(),
            )
        try:
            with log_context(call_id=answer.call_id, user=principal.user_id):
                response = _response(answer.call_id, await answers.record(principal.user_id, answer))
        except AppError as exc:
            exc.headers.update(rate.headers())
            raise
    response.headers.update(rate.headers())
    return response


def _response(call_id: str, outcome: AnswerOutcome) -> JSONResponse:
    match outcome:
        case Accepted(remaining=remaining):
            return JSONResponse({"status": "accepted", "remaining": remaining}, status_code=202)
        case Resuming():
            return JSONResponse({"status": "resuming"}, status_code=202)
        case Duplicate():
            return JSONResponse({"status": "duplicate"}, status_code=200)
        case Refused(reason=reason, message=message):
            error = _REFUSALS[reason](message, code=reason)
            if error.status in (404, 410):  # the phone answered something it should not have
                log.info("tool message for %s refused: %s (%s)", call_id, reason, message)
            raise error
