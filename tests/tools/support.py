"""What the tool tests share: a model that calls one tool and reports the result, and a fixed clock."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel


def calls(tool: str, args: dict[str, Any]) -> FunctionModel:
    """Call one tool, then answer with its result as the model saw it: ``<outcome>: <content>``."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        if not returns:
            return ModelResponse(parts=[ToolCallPart(tool, args)])
        last = returns[-1]
        return ModelResponse(
            parts=[TextPart(f"{last.outcome}: {last.model_response_str(wrap_if_error=False)}")]
        )

    return FunctionModel(fn)


def fixed() -> datetime:
    """Thursday 2026-11-26 10:49 in Seoul."""
    return datetime(2026, 11, 26, 1, 49, tzinfo=UTC)
