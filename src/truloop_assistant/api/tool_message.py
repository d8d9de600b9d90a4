"""``POST /api/v1/agent/tool-message``: the device's JSON-RPC response to a deferred call."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from ..deferred.handlers import result_problem
from ..errors import (
    AppError,
    Conflict,
    Forbidden,
    Gone,
    NotFound,
    TooManyRequests,
    Unprocessable,
)
from ..logs import log_context
from ..metrics import TOOL_MESSAGES
from ..protocol.jsonrpc import ErrorCode, JsonRpcFailure, JsonRpcSuccess, parse_response
from ..store.answers import DeviceError, answer_of
from ..store.records import CallView
from . import openapi
from .body import read_body
from .budget import redis_budget
from .deps import ServicesDep

log = logging.getLogger(__name__)
router = APIRouter()

MAX_TOOL_MESSAGE_BYTES = 256 * 1024


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
    async with redis_budget():
        rate = await services.limiter.hit(principal.user_id, scope="tool-message", admin=principal.is_admin)
        if not rate.allowed:
            raise TooManyRequests(
                f"too many tool messages: at most {rate.limit} per window; try again in {rate.retry_after} s",
                headers=rate.headers(),
            )
        try:
            with log_context(call_id=answer.call_id, user=principal.user_id):
                response = await _record(services, principal.user_id, answer)
        except AppError as exc:
            if exc.status in (404, 410):  # the phone answered something it should not have
                log.info("tool message for %s refused: %s (%s)", answer.call_id, exc.code, exc.message)
            exc.headers.update(rate.headers())
            raise
    response.headers.update(rate.headers())
    return response


async def _record(
    services: ServicesDep, user_id: str, answer: JsonRpcSuccess | JsonRpcFailure
) -> JSONResponse:
    call = await services.store.get_call(answer.call_id)
    if call is None:
        raise NotFound(f"no call with id {answer.call_id!r} is known", code="unknown_call")
    fingerprint = answer.fingerprint()
    if call.state in ("expired", "superseded") or (
        call.state == "cancelled" and call.fingerprint != fingerprint
    ):
        raise _gone(call)
    if call.user_id != user_id:
        raise Forbidden("this call belongs to another user", code="not_your_call")
    if call.state in ("answered", "cancelled"):
        if call.fingerprint == fingerprint:
            await _make_sure_it_resumes(services, call)
        return _already_answered(same=call.fingerprint == fingerprint)
    _check_result(call, answer)

    if isinstance(answer, JsonRpcFailure) and answer.error.code == ErrorCode.METHOD_NOT_FOUND:
        # This device cannot do it; another of the user's devices may: the call waits a while for it.
        wait_s = services.settings.unhandled_call_wait_s
        outcome, remaining = await services.store.note_unhandled(
            call, fingerprint, DeviceError(error=answer.error), wait_s=wait_s
        )
        settled = False
    else:
        outcome, remaining = await services.store.record_answer(call, fingerprint, answer_of(answer))
        settled = True
    if outcome == "accepted":
        if settled:  # the request's message is updated on every device
            await services.intake.deliver(call.channel_url)
        return JSONResponse({"status": "accepted", "remaining": remaining}, status_code=202)
    if outcome == "resume":
        await services.intake.resume(call.channel_url, call.turn_id)
        return JSONResponse({"status": "resuming"}, status_code=202)
    if outcome in ("duplicate", "conflict"):  # another request answered it a moment ago
        return _already_answered(same=outcome == "duplicate")
    if outcome == "gone":  # its deadline passed, or the user wrote again, since it was read
        raise _gone(await services.store.get_call(call.call_id) or call)
    raise NotFound(f"no call with id {answer.call_id!r} is pending", code="unknown_call")


async def _make_sure_it_resumes(services: ServicesDep, call: CallView) -> None:
    """A retried answer re-queues a resume that may have been lost (the first try failed midway).

    Queuing a resume twice is harmless: the turn runs once.
    """
    snapshot = await services.store.load_turn(call.channel_url, call.turn_id)
    if snapshot is not None and snapshot.state == "resuming":
        await services.intake.resume(call.channel_url, call.turn_id)


def _gone(call: CallView) -> Gone:
    if call.state == "cancelled":
        return Gone(
            f"call {call.call_id} was cancelled: a device could not run {call.method} and no other "
            "device answered in time",
            code="call_cancelled",
        )
    # Only a newer message supersedes a call; any other way out of pending is its deadline.
    how = "superseded" if call.state == "superseded" else "expired"
    return Gone(f"call {call.call_id} has {how}; its result is no longer needed", code=f"call_{how}")


def _already_answered(*, same: bool) -> JSONResponse:
    if same:
        return JSONResponse({"status": "duplicate"}, status_code=200)
    raise Conflict("this call was already answered with a different response", code="already_answered")


def _check_result(call: CallView, answer: JsonRpcSuccess | JsonRpcFailure) -> None:
    if isinstance(answer, JsonRpcFailure):
        return
    problem = result_problem(
        tool_name=call.tool_name, bucket=call.bucket, result_schema=call.result_schema, data=answer.result
    )
    if problem is not None:
        raise Unprocessable(f"the result does not fit {call.method}: {problem}", code="invalid_result")
