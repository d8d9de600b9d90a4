"""Every tool call paired with its result: a call without one is a hallucinated step."""

from __future__ import annotations

import logging
from typing import TypeGuard

from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
)

log = logging.getLogger("truloop_assistant.tools")


def unpaired_tool_calls(
    messages: list[ModelMessage], pending: DeferredToolRequests | None = None
) -> list[ToolCallPart]:
    """Tool calls in ``messages`` with no result, other than those still waiting in ``pending``."""
    calls = [
        part
        for message in messages
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, ToolCallPart)
    ]
    answered = {
        part.tool_call_id
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart | RetryPromptPart)
    }
    waiting = {c.tool_call_id for c in [*pending.calls, *pending.approvals]} if pending else set()
    return [c for c in calls if c.tool_call_id not in answered and c.tool_call_id not in waiting]


def log_invalid_calls(messages: list[ModelMessage], ran: set[str], turn_id: str, channel_url: str) -> int:
    """Log and count the calls that never reached a tool (unknown tool, arguments that failed validation).

    They went back to the model as retry prompts; ``ran`` holds the ids of calls a tool did get.
    """
    invalid = [
        part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if is_retry(part) and part.tool_name and part.tool_call_id not in ran
    ]
    for part in invalid:
        text = part.model_response() if isinstance(part, RetryPromptPart) else part.model_response_str()
        log.info(
            "tool call %s id=%s in turn %s of %s invalid: %s",
            part.tool_name,
            part.tool_call_id,
            turn_id,
            channel_url,
            text[:300],
        )
    return len(invalid)


def is_retry(part: object) -> TypeGuard[RetryPromptPart | ToolReturnPart]:
    """A call sent back to the model to fix: a ``retried`` tool return, or a retry prompt."""
    return isinstance(part, RetryPromptPart) or (
        isinstance(part, ToolReturnPart) and part.outcome == "retried"
    )
