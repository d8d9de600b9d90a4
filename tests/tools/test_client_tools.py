"""Device tools: a well-formed call pauses the run with the model's own arguments; a bad one is a retry."""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pydantic_ai import Agent, DeferredToolRequests, models

from tests.tools.support import calls, fixed, retried
from truloop_assistant.agent.agents import gated
from truloop_assistant.tools import member_device_toolset
from truloop_assistant.tools.agent_deps import AgentDeps
from truloop_assistant.tools.device_tools import DEVICE_TOOLS, device_toolset

models.ALLOW_MODEL_REQUESTS = False

WEEK = {
    "notification_message": "캘린더를 확인하고 있어요…",
    "start_date": "2026-11-23T00:00:00+09:00",
    "end_date": "2026-11-29T23:59:59+09:00",
}


async def run(tool: str, args: dict[str, Any]) -> str | DeferredToolRequests:
    agent = Agent(
        calls(tool, args),
        deps_type=AgentDeps,
        output_type=[str, DeferredToolRequests],
        toolsets=[member_device_toolset],
    )
    deps = AgentDeps(user_id="jeff", channel_url="c", timezone=ZoneInfo("Asia/Seoul"), clock=fixed)
    return (await agent.run("hi", deps=deps)).output


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("get_calendar_events", WEEK),
        ("get_calendar_events", {**WEEK, "start_date": " 2026-11-23T00:00Z"}),
        (
            "confirm_interaction",
            {
                "notification_message": "",
                "title": "캘린더",
                "message": "캘린더를 읽어요",
                "permission": "calendar.read",
            },
        ),
        ("get_permission_status", {"notification_message": "확인 중…", "permission": "calendar.read"}),
    ],
)
async def test_a_good_call_goes_to_the_device_with_the_models_arguments(
    tool: str, args: dict[str, Any]
) -> None:
    output = await run(tool, args)
    assert isinstance(output, DeferredToolRequests)
    [call] = output.calls
    assert (call.tool_name, call.args_as_dict()) == (tool, args)


@pytest.mark.parametrize(
    ("tool", "args", "field", "message"),
    [
        (
            "get_calendar_events",
            {**WEEK, "start_date": "2026-11-23T00:00:00"},
            "start_date",
            "has no UTC offset",
        ),
        (
            "get_calendar_events",
            {**WEEK, "end_date": "this sunday"},
            "end_date",
            "is not an ISO 8601 date-time",
        ),
        (
            "get_calendar_events",
            {**WEEK, "start_date": WEEK["end_date"], "end_date": WEEK["start_date"]},
            "",
            "end_date 2026-11-23T00:00:00+09:00 is before start_date 2026-11-29T23:59:59+09:00; swap them",
        ),
        (
            "get_calendar_events",
            {**WEEK, "end_date": "2028-01-01T00:00:00+09:00"},
            "",
            "is longer than 366 days; ask for a shorter one",
        ),
        (
            "get_calendar_events",
            {**WEEK, "notification_message": "x" * 201},
            "notification_message",
            "String should have at most 200 characters",
        ),
        (
            "confirm_interaction",
            {"notification_message": "", "title": " ", "message": "m"},
            "title",
            "String should have at least 1 character",
        ),
        (
            "confirm_interaction",
            {"notification_message": "", "title": "t", "message": "m", "confirm_label": "x" * 41},
            "confirm_label",
            "String should have at most 40 characters",
        ),
        (
            "get_permission_status",
            {"notification_message": "", "permission": "bluetooth"},
            "permission",
            "Input should be 'calendar.read', 'calendar.write', 'contacts.read', 'location', "
            "'notifications', 'camera', 'photos' or 'microphone'",
        ),
    ],
)
async def test_a_bad_call_is_a_retry_and_never_reaches_the_device(
    tool: str, args: dict[str, Any], field: str, message: str
) -> None:
    output = await run(tool, args)
    assert isinstance(output, str)
    problems = retried(output)
    assert list(problems) == [field] and message in problems[field]


async def test_a_device_tool_declared_to_confirm_asks_the_users_yes_before_it_goes_to_the_device(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calendar = DEVICE_TOOLS["get_calendar_events"]
    deps = AgentDeps(user_id="jeff", channel_url="c", timezone=ZoneInfo("Asia/Seoul"), clock=fixed)
    outputs = []
    for confirm in (False, True):
        monkeypatch.setitem(DEVICE_TOOLS, calendar.name, replace(calendar, confirm=confirm))
        toolset = gated(device_toolset("member"), timeout_s=5)
        agent = Agent(
            calls("get_calendar_events", WEEK),
            deps_type=AgentDeps,
            output_type=[str, DeferredToolRequests],
            toolsets=[toolset],
        )
        outputs.append((await agent.run("hi", deps=deps)).output)
    plain, confirmed = outputs
    assert isinstance(plain, DeferredToolRequests) and isinstance(confirmed, DeferredToolRequests)
    assert [c.tool_name for c in plain.calls] == ["get_calendar_events"] and not plain.approvals
    assert [c.tool_name for c in confirmed.approvals] == ["get_calendar_events"] and not confirmed.calls
