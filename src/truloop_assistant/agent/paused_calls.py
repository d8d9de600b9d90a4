"""The calls of a paused step: the ids the device sees, and the calls the server fails itself."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Literal

from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import ToolCallPart

from ..deferred.approvals import CONFIRM_METHOD
from ..deferred.handlers import device_method
from ..protocol.declarations import DeclaredTool
from ..store.answers import ServerFailure
from ..store.records import CallRef


def new_call_id() -> str:
    """A JSON-RPC id: unique across conversations and not guessable."""
    return "call_" + secrets.token_hex(16)


def call_refs(
    requests: DeferredToolRequests, declared: Mapping[str, DeclaredTool] | None = None
) -> list[CallRef]:
    """One device call per deferred call and per approval, each with a fresh JSON-RPC id.

    ``declared``: the tools the user's app declared (their methods and result schemas).
    """
    calls = [_ref(part, "call", *device_method(part.tool_name, declared or {})) for part in requests.calls]
    return calls + [_ref(part, "approval", CONFIRM_METHOD) for part in requests.approvals]


def _ref(
    part: ToolCallPart, bucket: Literal["call", "approval"], method: str, result_schema: str | None = None
) -> CallRef:
    return CallRef(
        call_id=new_call_id(),
        tool_call_id=part.tool_call_id,
        bucket=bucket,
        tool_name=part.tool_name,
        method=method,
        result_schema=result_schema,
    )


def failed_locally(
    refs: list[CallRef], failures: Mapping[str, int], *, max_calls: int, max_failures: int
) -> dict[str, ServerFailure]:
    """Device calls the server fails instead of sending: over the step's limit, or failing again and again.

    ``failures`` is the person's count of consecutive device failures per tool.
    """
    answers: dict[str, ServerFailure] = {}
    sent = 0
    for ref in refs:
        if ref.bucket != "call":
            continue
        if (count := failures.get(ref.tool_name, 0)) >= max_failures:
            answers[ref.call_id] = ServerFailure(
                failed=f"{ref.tool_name} failed {count} times in a row on the user's device, "
                "so it was not sent again. Do not call it again now; tell the user what went wrong "
                "and what to do."
            )
        elif sent >= max_calls:
            answers[ref.call_id] = ServerFailure(
                failed=f"Too many device calls in one step (at most {max_calls}); this one "
                "was not sent. Ask for less at once."
            )
        else:
            sent += 1
    return answers
