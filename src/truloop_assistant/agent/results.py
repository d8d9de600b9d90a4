"""A paused run's results, built only from the calls the server stored and the answers it recorded.

A client cannot move an answer between buckets (call vs approval) or answer a call the server did
not issue: the results are keyed by the stored calls, never by anything the device sent.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied, ToolFailed

from ..deferred.decisions import decision_of
from ..deferred.handlers import HANDLERS, error_to_failure
from ..protocol.jsonrpc import ErrorCode
from ..protocol.methods import ApprovalResult
from ..protocol.schema_checks import schema_problem
from ..store.answers import Answer, DeviceError, DeviceResult, ServerFailure
from ..store.records import CallRef, PausedTurn
from ..tools.marks import EDITED

REQUESTS: TypeAdapter[DeferredToolRequests] = TypeAdapter(DeferredToolRequests)

SUPERSEDED_TEXT = (
    "Superseded: the user sent a new message before their device answered, so this call was "
    "cancelled and did not run. Answer the new message; do not assume this call's result."
)
EXPIRED_TEXT = (
    "Expired: the user's device did not answer in time, so this call did not run. Tell the user and "
    "suggest trying again (for example with the app open)."
)


def deferred_results(paused: PausedTurn, answers: dict[str, Answer], *, missing: str) -> DeferredToolResults:
    """The results to resume ``paused`` with; calls without an answer fail with ``missing``."""
    requests = REQUESTS.validate_json(paused.requests)
    asked = {part.tool_call_id: part for part in requests.approvals}
    calls: dict[str, Any] = {}
    approvals: dict[str, Any] = {}
    # What a tool prepared before asking (a relayed message's text) is handed back to it with the yes:
    # taken from the stored requests, never from the device.
    metadata = {i: dict(m) for i, m in requests.metadata.items() if i in asked}
    for ref in paused.calls:
        answer = answers.get(ref.call_id)
        if ref.bucket == "approval":
            value: bool | ToolApproved | ToolDenied = (
                _approval_value(answer) if answer else ToolDenied(missing)
            )
            if isinstance(answer, DeviceResult) and (edited := _edited(answer)):
                # The tool runs with the arguments it was called with, as the person changed them.
                part = asked[ref.tool_call_id]
                value = ToolApproved(override_args={**part.args_as_dict(), **edited})
                metadata.setdefault(ref.tool_call_id, {})[EDITED] = edited
            approvals[ref.tool_call_id] = value
        else:
            calls[ref.tool_call_id] = _call_value(ref, answer) if answer else ToolFailed(missing)
    return requests.build_results(calls=calls, approvals=approvals, metadata=metadata)


def device_outcomes(paused: PausedTurn, answers: dict[str, Answer]) -> dict[str, bool]:
    """Per tool, whether the device did its part (failures the server recorded itself do not count).

    The user saying no (-32002 UserCanceled) is the device working, not failing.
    """
    outcomes: dict[str, bool] = {}
    for ref in paused.sent_calls:
        answer = answers.get(ref.call_id)
        if ref.bucket == "call" and isinstance(answer, DeviceResult | DeviceError):
            ok = isinstance(answer, DeviceResult) or answer.error.code == ErrorCode.USER_CANCELED
            outcomes[ref.tool_name] = outcomes.get(ref.tool_name, True) and ok
    return outcomes


def _call_value(ref: CallRef, answer: Answer) -> Any:
    match answer:
        case ServerFailure(failed=reason):
            return ToolFailed(reason)
        case DeviceError(error=error):
            return error_to_failure(error)
        case DeviceResult(result=result):
            # Checked at the edge already; stay safe if the schema changed since.
            refused = ToolFailed(f"the device sent a result {ref.method} does not accept")
            if (handler := HANDLERS.get(ref.tool_name)) is None:  # app-declared: taken as the app sent it
                problem = ref.result_schema and schema_problem(ref.result_schema, result)
                return refused if problem else result
            try:
                return handler.transform_result(handler.validate_result(result))
            except ValidationError:
                return refused


REASON_LEAD = "Their reason: "
"""Before the person's reason for a refusal, in the result the model is shown."""


def _edited(answer: DeviceResult) -> dict[str, Any]:
    """What the person changed before saying yes (checked at the edge against the dialog)."""
    decision, result = decision_of(answer.result)
    return dict(result.edited or {}) if decision == "edited" else {}


def _approval_value(answer: Answer) -> bool | ToolDenied:
    match answer:
        case DeviceError(error=error):
            return ToolDenied(f"The user did not confirm: {error_to_failure(error).message}")
        case DeviceResult(result=result) if ApprovalResult.model_validate(result).confirmed:
            return True
        case DeviceResult(result=result):
            declined = "The user declined in the confirmation dialog; the action was not performed."
            if reason := (ApprovalResult.model_validate(result).reason or "").strip():
                return ToolDenied(f"{declined} {REASON_LEAD}“{reason}”")
            return ToolDenied(declined)
        case ServerFailure(failed=reason):
            return ToolDenied(reason)
