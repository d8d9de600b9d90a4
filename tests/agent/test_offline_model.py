"""The offline model, driven through the real member agent."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ToolFailed, models
from pydantic_ai.messages import ModelMessagesTypeAdapter, ToolReturnPart

from truloop_assistant.agent.agents import MemberAgent, build_member_agent
from truloop_assistant.agent.offline import build_offline_model
from truloop_assistant.tools import datetime_toolset
from truloop_assistant.tools.agent_deps import AgentDeps

models.ALLOW_MODEL_REQUESTS = False

SEOUL = ZoneInfo("Asia/Seoul")


def fixed() -> datetime:
    """Thursday 2026-11-26 10:49 in Seoul."""
    return datetime(2026, 11, 26, 1, 49, tzinfo=UTC)


@pytest.fixture
def agent() -> MemberAgent:
    return build_member_agent(build_offline_model(timezone=SEOUL, clock=fixed), tool_timeout_s=10)


@pytest.fixture
def deps() -> AgentDeps:
    return AgentDeps(user_id="u1", channel_url="c1", timezone=SEOUL, clock=fixed)


def _event(event_id: str, title: str, start: str, end: str) -> dict[str, Any]:
    return {"id": event_id, "title": title, "start": {"dateTime": start}, "end": {"dateTime": end}}


EVENTS = {
    "events": [
        _event("2", "점심 약속", "2026-11-25T12:00:00+09:00", "2026-11-25T13:00:00+09:00"),
        _event("1", "팀 미팅", "2026-11-24T01:00:00Z", "2026-11-24T02:00:00Z"),
    ]
}


async def _ask_schedule(agent: MemberAgent, deps: AgentDeps, prompt: str) -> tuple[list[Any], str, dict]:
    """Run a schedule request; return the round-tripped history, the call id and its args."""
    result = await agent.run(prompt, deps=deps)
    assert isinstance(result.output, DeferredToolRequests)
    [call] = result.output.calls
    assert call.tool_name == "get_calendar_events"
    history = ModelMessagesTypeAdapter.validate_json(result.all_messages_json())
    return history, call.tool_call_id, call.args_as_dict()


async def _resume(agent: MemberAgent, deps: AgentDeps, history: list[Any], call_id: str, value: Any) -> Any:
    result = await agent.run(
        message_history=history, deferred_tool_results=DeferredToolResults(calls={call_id: value}), deps=deps
    )
    return result.output


def test_model_name() -> None:
    assert build_offline_model(timezone=SEOUL).model_name == "offline"


async def test_korean_time(agent: MemberAgent, deps: AgentDeps) -> None:
    result = await agent.run("지금 몇 시야?", deps=deps)
    assert result.output == "지금은 2026년 11월 26일 목요일 10:49이에요 (Asia/Seoul)."


async def test_english_time(agent: MemberAgent, deps: AgentDeps) -> None:
    result = await agent.run("What time is it?", deps=deps)
    assert result.output == "It is 10:49 on Thursday, 26 November 2026 (Asia/Seoul)."


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("뉴욕은 지금 몇 시야?", "지금은 2026년 11월 25일 수요일 20:49이에요 (America/New_York)."),
        ("What time is it in New York?", "It is 20:49 on Wednesday, 25 November 2026 (America/New_York)."),
        ("What time is it in LA?", "It is 17:49 on Wednesday, 25 November 2026 (America/Los_Angeles)."),
        ("도쿄 시간 알려줘", "지금은 2026년 11월 26일 목요일 10:49이에요 (Asia/Tokyo)."),
    ],
)
async def test_city_time(agent: MemberAgent, deps: AgentDeps, prompt: str, expected: str) -> None:
    result = await agent.run(prompt, deps=deps)
    assert result.output == expected


async def test_day_of_week_for_date(agent: MemberAgent, deps: AgentDeps) -> None:
    assert (await agent.run("2026-03-10은 무슨 요일이야?", deps=deps)).output == "2026-03-10은 화요일이에요."
    assert (await agent.run("What day is 2026-03-10?", deps=deps)).output == "2026-03-10 is a Tuesday."


async def test_day_of_week_today(agent: MemberAgent, deps: AgentDeps) -> None:
    assert (await agent.run("오늘 무슨 요일이야?", deps=deps)).output == "2026-11-26은 목요일이에요."
    assert (await agent.run("What day of the week is it?", deps=deps)).output == "2026-11-26 is a Thursday."


async def test_invalid_date_gets_an_apology_not_a_loop(agent: MemberAgent, deps: AgentDeps) -> None:
    result = await agent.run("2026-13-40은 무슨 요일이야?", deps=deps)
    assert result.output.startswith("죄송해요")
    outcomes = [
        p.outcome
        for m in result.all_messages()
        for p in getattr(m, "parts", [])
        if isinstance(p, ToolReturnPart)
    ]
    assert outcomes == ["retried"]


async def test_korean_schedule_request(agent: MemberAgent, deps: AgentDeps) -> None:
    _, _, args = await _ask_schedule(agent, deps, "이번 주 일정 알려줘")
    assert args == {
        "notification_message": "캘린더에서 이번 주 일정을 확인하고 있어요…",
        "start_date": "2026-11-23T00:00:00+09:00",
        "end_date": "2026-11-29T23:59:59+09:00",
    }


async def test_schedule_with_events(agent: MemberAgent, deps: AgentDeps) -> None:
    history, call_id, _ = await _ask_schedule(agent, deps, "이번 주 일정 알려줘")
    output = await _resume(agent, deps, history, call_id, EVENTS)
    assert output.splitlines() == [
        "이번 주 일정은 2개예요:",
        "- 11월 24일 (화) 10:00–11:00 팀 미팅",
        "- 11월 25일 (수) 12:00–13:00 점심 약속",
    ]


async def test_schedule_with_events_as_json_string(agent: MemberAgent, deps: AgentDeps) -> None:
    history, call_id, _ = await _ask_schedule(agent, deps, "What's on my calendar this week?")
    output = await _resume(agent, deps, history, call_id, json.dumps(EVENTS))
    assert output.splitlines() == [
        "You have 2 events this week:",
        "- Tue 24 Nov 10:00–11:00 팀 미팅",
        "- Wed 25 Nov 12:00–13:00 점심 약속",
    ]


async def test_schedule_without_events(agent: MemberAgent, deps: AgentDeps) -> None:
    history, call_id, _ = await _ask_schedule(agent, deps, "이번 주 일정 알려줘")
    output = await _resume(agent, deps, history, call_id, {"events": []})
    assert output == "이번 주에는 캘린더에 일정이 없어요."


async def test_schedule_permission_failure(agent: MemberAgent, deps: AgentDeps) -> None:
    history, call_id, _ = await _ask_schedule(agent, deps, "이번 주 일정 알려줘")
    failure = ToolFailed(
        "PermissionRequired (-32010): the app needs an OS permission to do this; "
        "required permission: calendar.read; can prompt again: yes"
    )
    output = await _resume(agent, deps, history, call_id, failure)
    # The error code is for the model; the user reads what it means and what to do.
    assert output == (
        "캘린더를 확인하지 못했어요: 캘린더 권한이 허용되지 않았어요. "
        "설정에서 캘린더 권한을 허용한 뒤 다시 말씀해 주세요."
    )


async def test_english_schedule(agent: MemberAgent, deps: AgentDeps) -> None:
    history, call_id, args = await _ask_schedule(agent, deps, "What's my schedule this week?")
    assert args["notification_message"] == "Checking your calendar for this week…"
    assert (args["start_date"], args["end_date"]) == (
        "2026-11-23T00:00:00+09:00",
        "2026-11-29T23:59:59+09:00",
    )
    assert await _resume(agent, deps, history, call_id, {"events": []}) == (
        "You have nothing in your calendar this week."
    )
    failed = await _resume(
        agent, deps, history, call_id, ToolFailed("PermissionRequired (-32010): no access")
    )
    assert failed == (
        "I couldn't check your calendar: calendar access isn't allowed. "
        "Please allow calendar access in Settings and ask me again."
    )
    assert "-32010" not in failed and "PermissionRequired" not in failed


@pytest.mark.parametrize(
    ("prompt", "marker"),
    [("안녕, 너는 뭘 할 수 있어?", "오프라인 개발용 모델"), ("Tell me a joke", "offline development model")],
)
async def test_unknown_request_gets_capability_reply(
    agent: MemberAgent, deps: AgentDeps, prompt: str, marker: str
) -> None:
    result = await agent.run(prompt, deps=deps)
    assert isinstance(result.output, str)
    assert marker in result.output


async def test_missing_tool_falls_back_to_capability_reply(deps: AgentDeps) -> None:
    agent = Agent(
        build_offline_model(timezone=SEOUL, clock=fixed),
        deps_type=AgentDeps,
        output_type=[str, DeferredToolRequests],
        toolsets=[datetime_toolset],
    )
    result = await agent.run("이번 주 일정 알려줘", deps=deps)
    assert "오프라인 개발용 모델" in result.output


@pytest.mark.parametrize(
    ("prompt", "permission"),
    [
        ("Is the app allowed to use my location?", "location"),
        ("폰에서 캘린더 권한 허용돼 있어?", "calendar.read"),
    ],
)
async def test_a_permission_question_asks_the_phone_for_that_permission(
    agent: MemberAgent, deps: AgentDeps, prompt: str, permission: str
) -> None:
    result = await agent.run(prompt, deps=deps)
    assert isinstance(result.output, DeferredToolRequests)
    [call] = result.output.calls
    assert (call.tool_name, call.args_as_dict()["permission"]) == ("get_permission_status", permission)
    answered = await agent.run(
        message_history=result.all_messages(),
        deferred_tool_results=DeferredToolResults(
            calls={call.tool_call_id: {"status": "denied", "canPromptAgain": True}}
        ),
        deps=deps,
    )
    assert "denied" in answered.output


@pytest.mark.parametrize(
    ("prompt", "tool", "args"),
    [
        ("What's my email address?", "get_user_profile", {}),
        ("내 직함이 뭐였지?", "get_user_profile", {}),
        ("사무실 근처 점심 맛집 찾아줘", "search_memories", {"query": "사무실"}),
        ("find a quiet cafe near the office", "search_memories", {"query": "office"}),
    ],
)
async def test_what_is_the_users_own_is_looked_up_not_guessed(
    agent: MemberAgent, deps: AgentDeps, prompt: str, tool: str, args: dict[str, Any]
) -> None:
    """The user's own profile is not a search for them; "the office" is in their memories, not a place."""
    result = await agent.run(prompt, deps=deps)
    calls = [p for m in result.new_messages() for p in m.parts if getattr(p, "part_kind", "") == "tool-call"]
    assert [(c.tool_name, c.args_as_dict()) for c in calls][:1] == [(tool, args)]


async def test_a_device_tool_that_failed_is_told_with_the_failure_text_it_is_declared_with(
    agent: MemberAgent, deps: AgentDeps
) -> None:
    result = await agent.run("is the app allowed to use my camera?", deps=deps)
    assert isinstance(result.output, DeferredToolRequests)
    [call] = result.output.calls
    assert call.tool_name == "get_permission_status"
    history = ModelMessagesTypeAdapter.validate_json(result.all_messages_json())
    failed = await _resume(agent, deps, history, call.tool_call_id, ToolFailed("Expired: no answer"))
    assert failed == (
        "I couldn't check the permission: your phone didn't answer in time. "
        "Please try again with the app open."
    )


async def test_streamed_it_writes_a_long_answer_a_word_at_a_time_over_a_moment_as_a_model_would() -> None:
    plain = Agent(build_offline_model(timezone=SEOUL, clock=fixed))
    arrivals: list[tuple[float, str]] = []
    async with plain.run_stream("what can you do?") as result:
        async for piece in result.stream_text(delta=True, debounce_by=None):
            arrivals.append((time.monotonic(), piece))
    text = "".join(piece for _, piece in arrivals)
    assert text.startswith("I'm the offline development model") and len(arrivals) > 20
    took = arrivals[-1][0] - arrivals[0][0]
    assert 0.5 < took < 3.0  # over a moment, so the dev page shows it growing; never a long wait
