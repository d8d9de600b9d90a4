"""A step's tool calls as ledger entries: server calls that ran, invalid calls, device and approval calls.

Server calls come from the records the tool wrappers keep (how each ran, how long, what it
returned); invalid calls (an unknown tool, arguments that failed validation) from the retry prompts
the model got; device and approval calls from the paused turn (pending, under the JSON-RPC id the
phone saw) and from the answers the resume or the cut found (the device's result; for an approval,
whether the user said yes).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, RetryPromptPart, ToolCallPart

from ..deferred.decisions import decision_of
from ..protocol.methods import ConfirmResult
from ..store.answers import Answer, DeviceError, DeviceResult, ServerFailure
from ..store.ledger import ERROR_CHARS, CallStatus, LedgerCall, LedgerTurn, redact
from ..store.records import CallRef, PausedTurn
from ..tools.agent_deps import ToolRun
from .verify import is_retry


def server_calls(runs: dict[str, ToolRun]) -> list[LedgerCall]:
    """The server tools that ran (deferred and gated calls are recorded as device/approval calls)."""
    return [
        run.record(call_id)
        for call_id, run in runs.items()
        if run.outcome not in ("deferred", "needs_approval")
    ]


def invalid_calls(messages: list[ModelMessage], ran: set[str], now: float) -> list[LedgerCall]:
    """Calls that never reached a tool: the model was asked to fix them."""
    asked = _calls_by_id(messages)
    calls = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if not (is_retry(part) and part.tool_name and part.tool_call_id not in ran):
                continue
            made = asked.get(part.tool_call_id)
            text = part.model_response() if isinstance(part, RetryPromptPart) else part.model_response_str()
            call = LedgerCall(
                call_id=part.tool_call_id,
                tool=part.tool_name,
                kind="server",
                status="failed",
                args=redact(made.args_as_dict()) if made else {},
                error=("invalid call: " + text)[:ERROR_CHARS],
                started_at=now,
                ended_at=now,
                duration_ms=0.0,
                flag="invalid",
            )
            calls.append(call)
    return calls


def without_result(unpaired: Iterable[ToolCallPart], now: float) -> list[LedgerCall]:
    """Calls the run ended without a result for (the verifier's first check)."""
    return [
        LedgerCall(
            call_id=part.tool_call_id,
            tool=part.tool_name,
            kind="server",
            status="failed",
            args=redact(part.args_as_dict()),
            error="the run ended without a result for this call",
            started_at=now,
            ended_at=now,
            duration_ms=0.0,
            flag="no_result",
        )
        for part in unpaired
    ]


def sent_calls(
    refs: list[CallRef], requests: DeferredToolRequests, failed: dict[str, ServerFailure], now: float
) -> list[LedgerCall]:
    """A pause's device and approval calls, pending under their JSON-RPC ids (or failed by the server)."""
    args = {part.tool_call_id: part.args_as_dict() for part in [*requests.calls, *requests.approvals]}
    calls = []
    for ref in refs:
        call = LedgerCall(
            call_id=ref.call_id,
            tool=ref.tool_name,
            kind="device" if ref.bucket == "call" else "approval",
            status="pending",
            args=redact(args.get(ref.tool_call_id, {})),
            started_at=now,
        )
        if (failure := failed.get(ref.call_id)) is not None:
            call = call.ended("failed", now, error=failure.failed[:ERROR_CHARS])
        calls.append(call)
    return calls


def settled_calls(
    paused: PausedTurn,
    answers: dict[str, Answer],
    record: LedgerTurn | None,
    *,
    missing: CallStatus,
    now: float,
) -> list[LedgerCall]:
    """The paused calls as the resume (or the cut) found them: answered, or ``missing``."""
    calls = []
    for ref in paused.calls:
        before = record.call(ref.call_id) if record else None
        if before is not None and before.status != "pending":
            continue
        call = before or LedgerCall(
            call_id=ref.call_id,
            tool=ref.tool_name,
            kind="device" if ref.bucket == "call" else "approval",
            status="pending",
            started_at=paused.created_at,
        )
        answer = answers.get(ref.call_id)
        status, error = _answer_status(ref, answer, missing)
        ended = call.ended(status, now, error=error)
        if isinstance(answer, DeviceResult):
            ended = ended.with_result(_result(ref, answer))
            if ref.bucket == "approval":
                ended = ended.model_copy(update={"decision": decision_of(answer.result)[0]})
        elif ref.bucket == "approval" and isinstance(answer, DeviceError):
            ended = ended.model_copy(update={"decision": "refused"})
        calls.append(ended)
    return calls


def _answer_status(ref: CallRef, answer: Answer | None, missing: CallStatus) -> tuple[CallStatus, str | None]:
    match answer:
        case None:
            return missing, None
        case ServerFailure(failed=reason):
            return "failed", reason[:ERROR_CHARS]
        case DeviceError(error=error):
            text = f"{error.message} ({error.code})"
            return ("denied" if ref.bucket == "approval" else "failed"), text
        case DeviceResult() if ref.bucket == "approval":
            return ("success", None) if _confirmed(answer) else ("denied", "the user declined")
        case _:
            return "success", None


def _result(ref: CallRef, answer: DeviceResult) -> Any:
    """What the device answered, as the ledger keeps it: for an approval, only the person's decision
    (yes or no, what they changed, their reason, whether they allow the tool for good)."""
    if ref.bucket != "approval":
        return answer.result
    return decision_of(answer.result)[1].model_dump(
        include={"confirmed", "edited", "reason", "remember"}, exclude_none=True
    )


def _confirmed(answer: DeviceResult) -> bool:
    return isinstance(answer.result, dict) and ConfirmResult.model_validate(answer.result).confirmed


def _calls_by_id(messages: list[ModelMessage]) -> dict[str, ToolCallPart]:
    return {
        part.tool_call_id: part
        for message in messages
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, ToolCallPart)
    }
