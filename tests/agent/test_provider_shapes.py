"""A run paused for the device and resumed later, by another worker, from what Redis holds, sends
each provider API a history it accepts.

Every family pydantic-ai speaks here (OpenAI Chat Completions, OpenAI Responses, Anthropic
Messages) sits behind a local fake that refuses, with the API's own 400, what the real API refuses.
A refused request would reach the user as the server-error apology instead of the model's answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from pydantic_ai import Agent, models
from pydantic_ai.messages import INTERRUPTED_TOOL_RETURN_CONTENT, AgentStreamEvent

from tests.fakes.providers import (
    FAMILIES,
    FakeAnthropic,
    FakeChatCompletions,
    FakeResponses,
    Prompt,
    Reply,
    Script,
    ScriptedProvider,
    ToolCall,
)
from tests.support import CALENDAR_ARGS, Harness, served

Family = type[ScriptedProvider]
StartServer = Callable[..., Any]

CALENDAR = ToolCall("get_calendar_events", CALENDAR_ARGS)
PERMISSION = ToolCall(
    "get_permission_status",
    {"notification_message": "Checking calendar access", "permission": "calendar.read"},
)
LUNCH = ToolCall(
    "create_event",
    {"title": "Lunch", "start_time": "2026-12-02T12:00:00+09:00", "end_time": "2026-12-02T13:00:00+09:00"},
)
EVENTS = {
    "events": [
        {
            "id": "e1",
            "title": "Lunch with Mina",
            "start": {"dateTime": "2026-11-26T12:00:00+09:00"},
            "end": {"dateTime": "2026-11-26T13:00:00+09:00"},
        }
    ]
}
PERMISSION_REQUIRED = {
    "code": -32010,
    "message": "PermissionRequired",
    "data": {"requiredPermission": "calendar.read", "canPromptAgain": False},
}
THANKS = "thanks!"
WELCOME = "You're welcome."
SERVER_ERROR_TEXTS = ("Something went wrong on our side", "서버 오류가 발생했습니다")


@pytest.fixture(autouse=True)
def _model_requests_to_the_local_fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)


@pytest.fixture(params=FAMILIES, ids=["chat-completions", "responses", "anthropic"])
def family(request: pytest.FixtureRequest) -> Family:
    family: Family = request.param
    return family


def calls_then_report(*calls: ToolCall) -> Script:
    """Answer a question with ``calls`` (in one response); once results came in, say what each returned."""

    def script(prompt: Prompt) -> Reply:
        if prompt.results:
            return "\n".join(f"{r.name}: {r.output}" for r in prompt.results)
        if prompt.user_text == THANKS:
            return WELCOME
        return list(calls)

    return script


@asynccontextmanager
async def provider(family: Family, script: Script) -> AsyncIterator[ScriptedProvider]:
    async with served(family(script)) as llm:
        yield llm


async def pause(
    start_server: StartServer, llm: ScriptedProvider, text: str, *, calls: int, **settings: Any
) -> list[dict[str, Any]]:
    """Run a turn until it waits for the device, on a server that then stops; its JSON-RPC requests."""
    async with start_server(model=llm.model(), **settings) as h:
        await h.user_says(text, message_id=1)
        rpcs = await h.rpc_requests(calls)
        await h.idle()
    return rpcs


def assert_accepted(llm: ScriptedProvider) -> None:
    assert llm.requests, "the model was never asked"
    assert not llm.rejections, "the provider API refused a request: " + " | ".join(
        r.message for r in llm.rejections
    )
    # pydantic-ai closes a call left without a result with a placeholder; every result here is real.
    assert not [r for p in llm.prompts for r in p.results if INTERRUPTED_TOOL_RETURN_CONTENT in r.output]


async def final_answer(h: Harness, llm: ScriptedProvider, n: int = 1) -> str:
    """The n-th answer in the channel, which must be what the model said last."""
    replies = await h.replies(n)
    text = replies[n - 1].text
    assert_accepted(llm)
    assert not any(apology in text for apology in SERVER_ERROR_TEXTS)
    assert text == llm.answers[-1]
    return text


async def later_message_is_answered(h: Harness, llm: ScriptedProvider, n: int) -> None:
    """The next turn replays the conversation's stored history, the resumed turn included."""
    await h.user_says(THANKS, message_id=n + 100)
    assert await final_answer(h, llm, n) == WELCOME


async def test_parallel_device_calls_answered_after_a_pause(
    start_server: StartServer, family: Family
) -> None:
    async with provider(family, calls_then_report(CALENDAR, PERMISSION)) as llm:
        rpcs = await pause(start_server, llm, "what's on this week, and may you read my calendar?", calls=2)
        by_method = {rpc["method"]: rpc["id"] for rpc in rpcs}
        async with start_server(model=llm.model()) as h:
            await h.answer(
                by_method["permissions.getStatus"], result={"status": "granted", "canPromptAgain": False}
            )
            await h.answer(by_method["calendar.getEvents"], result=EVENTS)
            answer = await final_answer(h, llm)
            assert "get_calendar_events: " in answer and "Lunch with Mina" in answer
            assert "get_permission_status: " in answer and "granted" in answer
            await later_message_is_answered(h, llm, 2)


async def test_a_call_that_failed_on_the_device(start_server: StartServer, family: Family) -> None:
    async with provider(family, calls_then_report(CALENDAR)) as llm:
        [rpc] = await pause(start_server, llm, "what's on this week?", calls=1)
        async with start_server(model=llm.model()) as h:
            await h.answer(rpc["id"], error=PERMISSION_REQUIRED)
            answer = await final_answer(h, llm)
            assert answer.startswith("get_calendar_events: ")
            assert "PermissionRequired (-32010)" in answer and "calendar.read" in answer
            [result] = llm.prompts[-1].results  # told as a failure, where the API has a way to say so
            assert result.is_error or result.output.startswith('{"error":')
            await later_message_is_answered(h, llm, 2)


async def test_a_denied_confirmation(start_server: StartServer, family: Family, directory: Any) -> None:
    async with provider(family, calls_then_report(LUNCH)) as llm:
        [rpc] = await pause(start_server, llm, "book lunch on Wednesday", calls=1)
        assert rpc["method"] == "interaction.confirm"
        async with start_server(model=llm.model()) as h:
            await h.answer(rpc["id"], result={"confirmed": False})
            answer = await final_answer(h, llm)
            assert answer.startswith("create_event: ") and "declined" in answer
            await later_message_is_answered(h, llm, 2)


async def test_a_call_the_device_never_answered(start_server: StartServer, family: Family) -> None:
    async with provider(family, calls_then_report(CALENDAR)) as llm:
        await pause(start_server, llm, "what's on this week?", calls=1, pending_call_ttl_s=1)
        async with start_server(model=llm.model(), pending_call_ttl_s=1) as h:
            answer = await final_answer(h, llm)  # the expiry scan resumes the run
            assert answer.startswith("get_calendar_events: ") and "did not answer in time" in answer
            await later_message_is_answered(h, llm, 2)


async def test_a_new_message_while_a_call_is_pending(start_server: StartServer, family: Family) -> None:
    async with provider(family, calls_then_report(CALENDAR)) as llm:
        await pause(start_server, llm, "what's on this week?", calls=1)
        async with start_server(model=llm.model()) as h:
            await h.user_says("never mind, what's the time?", message_id=2)
            answer = await final_answer(h, llm)
            assert answer.startswith("get_calendar_events: ") and "Superseded" in answer
            assert llm.prompts[-1].user_text == "never mind, what's the time?"  # in the same request
            await later_message_is_answered(h, llm, 2)


async def test_a_history_window_that_starts_at_the_message_which_cut_a_pause_short(
    start_server: StartServer, family: Family
) -> None:
    # Three messages: the window the next turn replays starts at the request that holds both the
    # new message and the cut call's result.
    async with provider(family, calls_then_report(CALENDAR)) as llm:
        await pause(start_server, llm, "what's on this week?", calls=1, history_max_messages=3)
        async with start_server(model=llm.model(), history_max_messages=3) as h:
            await h.user_says("never mind, what's the time?", message_id=2)
            await final_answer(h, llm)
            await later_message_is_answered(h, llm, 2)


# -- the fakes refuse what the real APIs refuse ------------------------------------------------------

CHAT_HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "what's on this week?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_calendar_events", "arguments": "{}"},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"events": []}'},
]
RESPONSES_INPUT: list[dict[str, Any]] = [
    {"role": "user", "content": "what's on this week?"},
    {"type": "function_call", "call_id": "call_1", "name": "get_calendar_events", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "call_1", "output": '{"events": []}'},
]
ANTHROPIC_MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "what's on this week?"},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_calendar_events", "input": {}}],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"events": []}'}],
    },
]


def chat(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": FakeChatCompletions.model_name, "messages": messages}


def responses(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": FakeResponses.model_name, "input": items}


def anthropic(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": FakeAnthropic.model_name, "max_tokens": 1024, "messages": messages}


THEN_THANKS: dict[str, Any] = {"role": "user", "content": "thanks"}
BROKEN = [
    pytest.param(
        FakeChatCompletions,
        chat([*CHAT_HISTORY[:2], THEN_THANKS]),
        "The following tool_call_ids did not have response messages: call_1",
        id="chat-call-without-result",
    ),
    pytest.param(
        FakeChatCompletions,
        chat([CHAT_HISTORY[0], CHAT_HISTORY[2]]),
        "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'",
        id="chat-result-without-call",
    ),
    pytest.param(
        FakeChatCompletions,
        chat([*CHAT_HISTORY[:2], THEN_THANKS, CHAT_HISTORY[2]]),
        "The following tool_call_ids did not have response messages: call_1",
        id="chat-message-between-call-and-result",
    ),
    pytest.param(
        FakeChatCompletions,
        chat([*CHAT_HISTORY[:2], {"role": "tool", "content": "{}"}]),
        "Missing required parameter: 'messages[2].tool_call_id'.",
        id="chat-result-without-id",
    ),
    pytest.param(
        FakeResponses,
        responses([*RESPONSES_INPUT[:2], THEN_THANKS]),
        "No tool output found for function call call_1.",
        id="responses-call-without-output",
    ),
    pytest.param(
        FakeResponses,
        responses([RESPONSES_INPUT[0], RESPONSES_INPUT[2]]),
        "No tool call found for function call output with call_id call_1.",
        id="responses-output-without-call",
    ),
    pytest.param(
        FakeResponses,
        responses([RESPONSES_INPUT[0], {**RESPONSES_INPUT[1], "arguments": {}}, RESPONSES_INPUT[2]]),
        "Invalid type for 'input[1].arguments': expected a string, but got an object instead.",
        id="responses-arguments-not-a-string",
    ),
    pytest.param(
        FakeAnthropic,
        anthropic([*ANTHROPIC_MESSAGES[:2], THEN_THANKS]),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1.",
        id="anthropic-tool-use-without-result",
    ),
    pytest.param(
        FakeAnthropic,
        anthropic(
            [
                *ANTHROPIC_MESSAGES[:2],
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "here:"}, *ANTHROPIC_MESSAGES[2]["content"]],
                },
            ]
        ),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1.",
        id="anthropic-result-after-text",
    ),
    pytest.param(
        FakeAnthropic,
        anthropic([ANTHROPIC_MESSAGES[0], {"role": "assistant", "content": "ok"}, ANTHROPIC_MESSAGES[2]]),
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1.",
        id="anthropic-result-without-tool-use",
    ),
    pytest.param(
        FakeAnthropic,
        anthropic([*ANTHROPIC_MESSAGES, THEN_THANKS]),
        'roles must alternate between "user" and "assistant", but found multiple "user" roles in a row',
        id="anthropic-two-user-turns-in-a-row",
    ),
    pytest.param(
        FakeAnthropic,
        {"model": FakeAnthropic.model_name, "messages": ANTHROPIC_MESSAGES},
        "max_tokens: Field required",
        id="anthropic-without-max-tokens",
    ),
]
VALID = [
    pytest.param(FakeChatCompletions, chat(CHAT_HISTORY), id="chat"),
    pytest.param(FakeResponses, responses(RESPONSES_INPUT), id="responses"),
    pytest.param(FakeAnthropic, anthropic(ANTHROPIC_MESSAGES), id="anthropic"),
]
HEADERS = {"authorization": "Bearer sk-test", "anthropic-version": "2023-06-01"}


async def post(llm: ScriptedProvider, body: dict[str, Any]) -> httpx.Response:
    async with httpx.AsyncClient(base_url=llm.url) as client:
        return await client.post(llm.path, json=body, headers=HEADERS)


@pytest.mark.parametrize(("family", "body", "says"), BROKEN)
async def test_the_fake_refuses_a_broken_history_like_the_api(
    family: Family, body: dict[str, Any], says: str
) -> None:
    async with provider(family, calls_then_report()) as llm:
        r = await post(llm, body)
        assert r.status_code == 400
        error = r.json()
        if family is FakeAnthropic:
            assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
        else:
            assert error["error"]["type"] == "invalid_request_error" and "param" in error["error"]
        assert says in error["error"]["message"]
        assert [rejection.message for rejection in llm.rejections] == [error["error"]["message"]]


@pytest.mark.parametrize(("family", "body"), VALID)
async def test_the_fake_answers_a_complete_history(family: Family, body: dict[str, Any]) -> None:
    async with provider(family, calls_then_report()) as llm:
        r = await post(llm, body)
        assert r.status_code == 200, r.text
        assert llm.rejections == [] and llm.answers == ['get_calendar_events: {"events": []}']


async def test_a_streamed_request_gets_the_same_answer(family: Family) -> None:
    async with provider(family, calls_then_report(ToolCall("get_day_of_week", {}))) as llm:
        agent = Agent(llm.model())

        @agent.tool_plain
        def get_day_of_week() -> str:
            return "Thursday"

        async def handler(ctx: Any, events: AsyncIterable[AgentStreamEvent]) -> None:
            async for _ in events:
                pass

        result = await agent.run("what day is it?", event_stream_handler=handler)
        assert result.output == "get_day_of_week: Thursday"
        assert len(llm.requests) == 2 and all(r["stream"] is True for r in llm.requests)
        assert llm.rejections == []
