"""What the tool tests share: a model that calls one tool and reports the result, and a fixed clock."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from pydantic_ai import Agent, DeferredToolRequests, FunctionToolset
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from truloop_assistant.backends import Backends
from truloop_assistant.tools.deps import AgentDeps


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


async def run_tool(
    toolset: FunctionToolset[AgentDeps], backends: Backends | None, tool: str, *, user: str, **args: Any
) -> str:
    """Have an agent with ``toolset`` call ``tool`` once as ``user``; its answer reports the result."""
    agent = Agent(
        calls(tool, args), deps_type=AgentDeps, output_type=[str, DeferredToolRequests], toolsets=[toolset]
    )
    deps = AgentDeps(
        user_id=user, channel_url="c", timezone=ZoneInfo("Asia/Seoul"), clock=fixed, backends=backends
    )
    result = await agent.run("hi", deps=deps)
    assert isinstance(result.output, str)
    return result.output


def content(answer: str) -> Any:
    """The JSON a successful tool returned, from a ``run_tool`` answer."""
    outcome, _, body = answer.partition(": ")
    assert outcome == "success", answer
    return json.loads(body)


def retried(answer: str) -> dict[str, str]:
    """What the model was told to fix, from the answer of a retried call: argument -> message.

    Arguments that broke their own limits are named by their path (``available_dates.0`` for an
    item); a check in the tool's body (several arguments, or stored data) is under ``""``.
    """
    outcome, _, body = answer.partition(": ")
    assert outcome == "retried", answer
    try:
        errors = json.loads(body)
    except ValueError:
        return {"": body}
    assert isinstance(errors, list), answer
    return {".".join(str(p) for p in error["loc"]): error["msg"] for error in errors}
