"""Every tool call paired with its result (seed 004): a call without one is a hallucinated step."""

from __future__ import annotations

from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
)


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
