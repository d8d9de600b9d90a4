"""What the agents make once per process, and what stays each run's own.

Made once: the server's tool list, each declared tool's definition, each tool schema in its
provider's form. Each run's own: its deps (the calls kept for the ledger), its user's declared
tools and what their app can serve.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pydantic_ai import AbstractToolset, CombinedToolset, FunctionToolset, RunContext, models
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models import ModelRequestParameters, infer_model
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import ToolDefinition

from tests.support import LOCATION_TOOL
from tests.tools.support import fixed
from truloop_assistant.agent.agents import build_guest_agent, build_member_agent, build_notification_agent
from truloop_assistant.agent.models import resolve_model, with_objects_open_unless_strict
from truloop_assistant.protocol.declarations import Declaration, DeclaredTool
from truloop_assistant.tools import all_toolsets, guest_toolsets, notification_safe_toolsets
from truloop_assistant.tools.agent_deps import AgentDeps
from truloop_assistant.tools.marks import is_destructive
from truloop_assistant.tools.server_tools import as_sent

models.ALLOW_MODEL_REQUESTS = False
SEOUL = ZoneInfo("Asia/Seoul")


def deps(user: str = "jeff", declaration: Declaration | None = None) -> AgentDeps:
    return AgentDeps(user_id=user, channel_url="c", timezone=SEOUL, clock=fixed, declaration=declaration)


Call = tuple[str, dict[str, Any]]


def offered(seen: list[list[ToolDefinition]], call: Call | None = None) -> FunctionModel:
    """Keeps the tools each request offers; calls ``call`` (once) if given, then answers."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(info.function_tools))
        answered = any(isinstance(p, ToolReturnPart) for p in messages[-1].parts)
        if call is not None and not answered:
            return ModelResponse(parts=[ToolCallPart(*call)])
        return ModelResponse(parts=[TextPart("ok")])

    return FunctionModel(fn)


def defined(toolsets: Sequence[AbstractToolset[AgentDeps]]) -> dict[str, ToolDefinition]:
    """Each tool of ``toolsets`` as its function toolset defines it, written as it is sent."""
    found: dict[str, ToolDefinition] = {}

    def walk(toolset: AbstractToolset[AgentDeps]) -> None:
        if isinstance(toolset, FunctionToolset):
            found.update({name: as_sent(tool.tool_def) for name, tool in toolset.tools.items()})
        elif isinstance(toolset, CombinedToolset):
            for inner in toolset.toolsets:
                walk(inner)

    for toolset in toolsets:
        walk(toolset)
    return found


def shape(tool_def: ToolDefinition) -> tuple[Any, ...]:
    """What the model is told of a tool, and what the wrappers read."""
    return (
        tool_def.description,
        tool_def.parameters_json_schema,
        tool_def.metadata,
        tool_def.kind,
        tool_def.strict,
        tool_def.sequential,
    )


LOCATION = DeclaredTool.model_validate(LOCATION_TOOL)
SHADOWED = DeclaredTool.model_validate({**LOCATION_TOOL, "name": "create_event"})


@pytest.mark.parametrize(
    ("build", "toolsets", "keep"),
    [
        (build_member_agent, all_toolsets, lambda d: True),
        (build_guest_agent, guest_toolsets, lambda d: True),
        (build_notification_agent, notification_safe_toolsets, lambda d: not is_destructive(d)),
    ],
)
async def test_every_run_is_offered_each_server_tool_as_its_toolset_defines_it(
    build: Any, toolsets: Sequence[AbstractToolset[AgentDeps]], keep: Any
) -> None:
    seen: list[list[ToolDefinition]] = []
    agent = build(offered(seen), tool_timeout_s=10)
    await agent.run("hi", deps=deps())
    await agent.run("hi again", deps=deps("mina"))
    first, second = seen
    expected = {name: shape(d) for name, d in defined(toolsets).items() if keep(d)}
    assert {d.name: shape(d) for d in first} == expected
    assert [d.name for d in second] == [d.name for d in first]
    assert all(a is b for a, b in zip(first, second, strict=True))  # listed once, not per run
    assert all(d.return_schema is None for d in first)  # as pydantic-ai would send them


async def test_each_run_is_offered_its_own_users_declared_tools_and_what_their_app_serves() -> None:
    seen: list[list[ToolDefinition]] = []
    agent = build_member_agent(offered(seen), tool_timeout_s=10)
    old_app = Declaration(tools=[LOCATION, SHADOWED], builtin=["calendar.getEvents"])
    await agent.run("hi", deps=deps(declaration=old_app))
    await agent.run("hi", deps=deps("mina"))
    await agent.run("hi", deps=deps(declaration=old_app))
    with_app, without, again = ({d.name: d for d in tools} for tools in seen)
    assert set(without) == set(defined(all_toolsets))
    assert "get_current_location" in with_app and "get_current_location" not in without
    assert with_app["get_current_location"].metadata == {"declared": True}
    assert with_app["get_current_location"].parameters_json_schema == LOCATION.model_parameters()
    # The app lists no confirmation dialog: nothing that needs one, nor the dialog itself.
    assert "create_event" not in with_app and "confirm_interaction" not in with_app
    assert "get_calendar_events" in with_app
    assert again == with_app
    assert again["get_current_location"] is with_app["get_current_location"]  # made once


async def test_a_declared_tool_named_like_an_added_tool_leaves_the_added_one_in_place() -> None:
    extra: FunctionToolset[AgentDeps] = FunctionToolset()

    @extra.tool
    async def get_current_location(ctx: RunContext[AgentDeps]) -> str:
        """Where the server thinks the user is."""
        return "the office"

    seen: list[list[ToolDefinition]] = []
    model = offered(seen, ("get_current_location", {}))
    agent = build_member_agent(model, tool_timeout_s=10, extra_toolsets=[extra])
    given = deps(declaration=Declaration(tools=[LOCATION]))
    result = await agent.run("where am I?", deps=given)
    assert result.output == "ok"
    [run] = given.tool_runs.values()
    assert (run.tool, run.outcome, run.result) == ("get_current_location", "ok", "the office")
    [location] = [d for d in seen[0] if d.name == "get_current_location"]
    assert location.description == "Where the server thinks the user is."


async def test_the_calls_a_run_makes_are_kept_on_its_own_deps_only() -> None:
    seen: list[list[ToolDefinition]] = []
    agent = build_member_agent(offered(seen, ("get_day_of_week", {"date": "2026-11-27"})), tool_timeout_s=10)
    first, second = deps(), deps("mina")
    await agent.run("friday?", deps=first)
    await agent.run("friday?", deps=second)
    [one] = first.tool_runs.values()
    [other] = second.tool_runs.values()
    assert one is not other
    assert (one.tool, one.outcome, other.outcome) == ("get_day_of_week", "ok", "ok")
    assert first.calls_run == set(first.tool_runs) and second.calls_run == set(second.tool_runs)


def test_a_provider_is_sent_each_tool_schema_in_the_form_its_transformer_gives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    kept = resolve_model("openai-chat:gpt-4o", timezone=SEOUL)
    plain = with_objects_open_unless_strict(infer_model("openai-chat:gpt-4o"))
    tools = [
        *defined(all_toolsets).values(),
        ToolDefinition(name="strict_one", parameters_json_schema=LOCATION.model_parameters(), strict=True),
    ]
    params = ModelRequestParameters(function_tools=tools)
    first = kept.customize_request_parameters(params).function_tools
    second = kept.customize_request_parameters(params).function_tools
    expected = plain.customize_request_parameters(params).function_tools
    assert first == expected
    assert second == expected
    pairs = zip(first, second, strict=True)
    assert all(a.parameters_json_schema is b.parameters_json_schema for a, b in pairs)  # made once
    assert [d.strict for d in first] == [d.strict for d in expected]
    # Objects are closed for strict tools only: outside strict mode it binds nothing.
    closed = {d.name for d in first if "additionalProperties" in json.dumps(d.parameters_json_schema)}
    assert closed == {d.name for d in first if d.strict} and "strict_one" in closed
