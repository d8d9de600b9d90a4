"""Turns stay correct with models that loop, err and need fixing: through the server."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.api.test_tools_gate import events_of
from tests.support import CALENDAR_ARGS
from truloop_assistant.i18n import texts

SERVER_ERROR_TEXTS = (texts.SERVER_ERROR("ko"), texts.SERVER_ERROR("en"))


def calendar_every_time(requests: list[int]) -> FunctionModel:
    """A model that asks for the calendar on every request, whatever the phone says."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        requests.append(1)
        return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR_ARGS)])

    return FunctionModel(fn)


async def test_the_model_request_budget_is_per_turn_across_resumes(start_server: Any) -> None:
    requests: list[int] = []
    async with start_server(model=calendar_every_time(requests), max_model_requests=4) as h:
        await h.user_says("what's on this week?")
        answered = 0
        while not [m for m in h.sendbird.in_channel("ch-1") if not m.is_rpc]:
            rpcs = await h.rpc_requests(answered + 1)
            await h.answer(rpcs[-1]["id"], result={"events": []})
            answered += 1
            assert answered <= 4, "a fifth round trip to the phone: the budget started over on resume"
            await h.idle()
        [reply] = await h.replies(1)
        assert reply.text == texts.TURN_LIMIT("en")
        assert sum(requests) == 4 and answered == 4


def retried(part: Any) -> bool:
    return isinstance(part, RetryPromptPart) or (
        isinstance(part, ToolReturnPart) and part.outcome == "retried"
    )


def told(part: Any) -> str:
    """What the model was told about a call (a result, a failure or what to fix)."""
    return part.model_response() if isinstance(part, RetryPromptPart) else part.model_response_str()


def bad_dates_then(good_after: int, log: list[list[str]]) -> FunctionModel:
    """Send an invalid ``date`` to get_day_of_week until ``good_after`` tries, then a valid one."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        returns = [p for p in last.parts if isinstance(p, ToolReturnPart) and p.outcome == "success"]
        if returns:
            return ModelResponse(parts=[TextPart(f"it is a {returns[0].model_response_str()}")])
        log.append([told(p) for p in last.parts if retried(p)])
        tries = sum(1 for m in messages if isinstance(m, ModelRequest) for p in m.parts if retried(p))
        date = "2026-11-26" if tries >= good_after else f"the {tries + 1}th of never"
        return ModelResponse(parts=[ToolCallPart("get_day_of_week", {"date": date})])

    return FunctionModel(fn)


async def test_invalid_arguments_go_back_to_the_model_until_it_fixes_them(
    start_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[list[str]] = []
    caplog.set_level(logging.INFO, logger="truloop_assistant.tools")
    async with start_server(model=bad_dates_then(2, seen)) as h:
        await h.user_says("what day is it?")
        [reply] = await h.replies(1)
    assert "Thursday" in reply.text and reply.text not in SERVER_ERROR_TEXTS
    assert any("YYYY-MM-DD" in text for texts_ in seen for text in texts_)  # the model was told the fix
    invalid = [
        r for r in caplog.records if "invalid" in r.getMessage() and "get_day_of_week" in r.getMessage()
    ]
    assert len(invalid) == 2  # each invalid call is logged like any other tool call


async def test_a_model_that_cannot_fix_its_call_gets_an_honest_could_not_not_a_server_error(
    start_server: Any,
) -> None:
    async with start_server(model=bad_dates_then(99, [])) as h:
        await h.user_says("무슨 요일이야?")
        [reply] = await h.replies(1)
    assert reply.text == texts.TURN_LIMIT("ko")


BACKWARDS = {
    "title": "Backwards",
    "start_time": "2026-12-02T12:00:00+09:00",
    "end_time": "2026-12-02T11:00:00+09:00",
    "invitee_user_ids": ["nobody-xyz"],
}


def create_then_report(args: dict[str, Any]) -> FunctionModel:
    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1].parts
        results = [p for p in last if isinstance(p, RetryPromptPart | ToolReturnPart)]
        if results:
            return ModelResponse(parts=[TextPart(" | ".join(told(p) for p in results))])
        return ModelResponse(parts=[ToolCallPart("create_event", args)])

    return FunctionModel(fn)


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (BACKWARDS, "is not after"),
        ({**BACKWARDS, "end_time": "2026-12-02T13:00:00+09:00"}, "nobody-xyz"),
        ({**BACKWARDS, "end_time": "2026-12-02T13:00:00+09:00", "invitee_user_ids": [],
          "availability_deadline": "2026-12-03T00:00:00+09:00"}, "after the event starts"),
    ],
)  # fmt: skip
async def test_an_impossible_event_gets_no_confirmation_dialog(
    start_server: Any, directory: Any, args: dict[str, Any], problem: str
) -> None:
    async with start_server(model=create_then_report(args)) as h:
        await h.user_says("make the backwards event")
        [reply] = await h.replies(1)
        await h.idle()
        assert problem in reply.text  # the model heard what to fix ...
        assert not [m for m in h.sendbird.messages if m.is_rpc]  # ... and the user saw no dialog
        assert await events_of(h.redis, "jeff") == []


async def test_changing_someone_elses_event_gets_no_dialog(start_server: Any, directory: Any) -> None:
    from truloop_assistant.backends.events import RedisEventStore

    async with start_server(model=create_then_report({})) as h:
        mina_event = await RedisEventStore(h.redis).create(
            "mina",
            title="Mina's",
            start_time="2026-12-02T12:00:00+09:00",
            end_time="2026-12-02T13:00:00+09:00",
        )

        def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            results = [p for p in messages[-1].parts if isinstance(p, RetryPromptPart | ToolReturnPart)]
            if results:
                return ModelResponse(parts=[TextPart(told(results[0]))])
            return ModelResponse(parts=[ToolCallPart("update_event", {"event_id": mina_event.event_id,
                                                                      "title": "Mine now"})])  # fmt: skip

        h_model = FunctionModel(fn)
    async with start_server(model=h_model) as h:
        await h.user_says("rename mina's event")
        [reply] = await h.replies(1)
        assert "only the organizer" in reply.text
        assert not [m for m in h.sendbird.messages if m.is_rpc]


def relay_with_a_slow_writer(writer_s: float) -> FunctionModel:
    """Relay a message; the writer (the same model, asked with 'From: …') takes ``writer_s`` to write."""

    async def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = next((p.content for p in messages[0].parts if isinstance(p, UserPromptPart)), "")
        if str(prompt).startswith("From:"):
            await asyncio.sleep(writer_s)
            return ModelResponse(parts=[TextPart("Hi Mina! Jeff says the review moved to 3pm.")])
        told = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        if told:
            return ModelResponse(parts=[TextPart(told[0].model_response_str())])
        args = {"user_id": "mina", "message": "the review moved to 3pm"}
        return ModelResponse(parts=[ToolCallPart("send_message_to_user", args)])

    return FunctionModel(fn)


async def test_the_relay_writer_has_its_own_time_not_the_tool_timeout(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=relay_with_a_slow_writer(1.0), tool_timeout_s=0.3) as h:
        await h.user_says("tell mina the review moved to 3pm")
        [rpc] = await h.rpc_requests(1)
        await h.answer(rpc["id"], result={"confirmed": True})
        [reply] = await h.replies(1)
        assert "Jeff says the review moved to 3pm" in reply.text  # written, not cut off at 0.3 s
        [relayed] = [
            m
            for m in h.sendbird.messages
            if m.channel_url.startswith("sendbird_") or "relay" in m.body.get("dedup_id", "")
        ]
        assert relayed.text == "Hi Mina! Jeff says the review moved to 3pm."


async def test_a_relay_writer_past_its_time_sends_the_request_as_written(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=relay_with_a_slow_writer(5.0), model_timeout_s=0.5) as h:
        await h.user_says("tell mina the review moved to 3pm")
        [rpc] = await h.rpc_requests(1)
        await h.answer(rpc["id"], result={"confirmed": True})
        [reply] = await h.replies(1, timeout=20)
        assert "sent as written" in reply.text
        [relayed] = [m for m in h.sendbird.messages if m.body.get("dedup_id", "").startswith("relay:")]
        assert relayed.text.endswith(": the review moved to 3pm")


async def test_a_new_message_is_answered_even_while_the_phone_owes_an_answer(start_server: Any) -> None:
    """With the offline model: a question asked while the calendar request waits is answered, plainly."""
    async with start_server() as h:
        await h.user_says("이번 주 일정 알려줘")
        await h.rpc_requests(1)
        await h.user_says("오늘 무슨 요일이야?")
        [reply] = await h.replies(1)
        assert reply.text.endswith("요일이에요.")
        assert "Superseded" not in reply.text and "캘린더" not in reply.text


async def test_what_the_user_reads_after_an_expired_call_has_no_internal_names(start_server: Any) -> None:
    async with start_server(pending_call_ttl_s=1) as h:
        await h.user_says("이번 주 일정 알려줘")
        await h.rpc_requests(1)
        [reply] = await h.replies(1, timeout=15)
        assert "Expired" not in reply.text and "휴대폰이 제때 응답하지 않았어요" in reply.text
