"""The bot shows as typing while a turn works, and the typing indicator never holds a turn up."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.fakes.sendbird import FakeSendbird, TypingCall
from tests.support import BOT, CALENDAR_ARGS, Harness
from truloop_assistant.pipeline.conversations import WAIT_FOR_DEVICE_S
from truloop_assistant.pipeline.typing_indicator import SHOW_AFTER_S, Typing
from truloop_assistant.protocol.device_methods import DEVICE_METHODS
from truloop_assistant.protocol.jsonrpc import JsonRpcRequest


def answered_calls(messages: list[ModelMessage]) -> int:
    return sum(
        1
        for m in messages
        if isinstance(m, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in m.parts)
    )


def shown_when_thinking(
    sendbird: FakeSendbird,
    respond: Callable[[list[ModelMessage]], ModelResponse],
    seen: list[bool],
    channel: str = "ch-1",
    *,
    each_step: bool = True,
) -> FunctionModel:
    """A model that answers once the bot shows as typing (or after 5 s), noting which; ``each_step``:
    typing started anew for this step (not kept on from the last one)."""

    async def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = answered_calls(messages) + 1

        def typing_for_this_step(calls: list[TypingCall]) -> bool:
            started = sum(c.started for c in calls) >= (step if each_step else 1)
            return started and calls[-1].started

        try:
            await sendbird.wait_typing(typing_for_this_step, channel, timeout=5)
            seen.append(True)
        except AssertionError:
            seen.append(False)
        return respond(messages)

    return FunctionModel(fn)


def says(text: str) -> Callable[[list[ModelMessage]], ModelResponse]:
    return lambda messages: ModelResponse(parts=[TextPart(text)])


def asks_the_calendar_then_says(text: str) -> Callable[[list[ModelMessage]], ModelResponse]:
    def respond(messages: list[ModelMessage]) -> ModelResponse:
        if answered_calls(messages):
            return ModelResponse(parts=[TextPart(text)])
        return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR_ARGS)])

    return respond


def timeline(h: Harness, channel: str) -> list[str]:
    """What the channel's members saw, in order: messages and the typing indicator going on and off."""
    events = [(c.at, "typing" if c.started else "stopped") for c in h.sendbird.typing_in(channel)]
    events += [(m.at, "rpc" if m.is_rpc else "answer") for m in h.sendbird.in_channel(channel)]
    return [what for _, what in sorted(events)]


async def test_the_bot_types_while_the_model_thinks_and_stops_once_the_answer_is_sent(
    start_server: Any, sendbird: FakeSendbird
) -> None:
    channel = "team/ch 1"
    seen: list[bool] = []
    async with start_server(model=shown_when_thinking(sendbird, says("hi there"), seen, channel)) as h:
        await h.user_says("hello", channel=channel)
        [reply] = await h.replies(1, channel=channel)
        start, stop = await h.sendbird.wait_typing(lambda calls: len(calls) >= 2, channel)
        assert seen == [True]  # the model was asked while the bot showed as typing
        assert reply.text == "hi there"
        assert timeline(h, channel) == ["typing", "answer", "stopped"]
        assert start.user_ids == stop.user_ids == [BOT]
        assert start.raw_path == stop.raw_path == "/v3/group_channels/team%2Fch%201/typing"
        await h.idle()
        assert len(h.sendbird.typing_in(channel)) == 2


async def test_a_phone_that_answers_at_once_keeps_the_bot_typing_through_the_turn(
    start_server: Any, sendbird: FakeSendbird
) -> None:
    seen: list[bool] = []
    model = shown_when_thinking(sendbird, asks_the_calendar_then_says("a quiet week"), seen, each_step=False)
    async with start_server(model=model) as h:
        await h.user_says("what's on this week?")
        [rpc] = await h.rpc_requests(1)
        assert h.sendbird.is_typing("ch-1")  # the phone answers a calendar request by itself
        await h.answer(rpc["id"], result={"events": []})
        [reply] = await h.replies(1)
        await h.sendbird.wait_typing(lambda calls: len(calls) >= 2)
        assert reply.text == "a quiet week" and seen == [True, True]
        assert timeline(h, "ch-1") == ["typing", "rpc", "answer", "stopped"]
        await h.idle()
        assert len(h.sendbird.typing_in("ch-1")) == 2  # one indicator for the whole turn


async def test_a_phone_that_does_not_answer_at_once_stops_the_typing_until_the_turn_resumes(
    start_server: Any, sendbird: FakeSendbird
) -> None:
    seen: list[bool] = []
    model = shown_when_thinking(sendbird, asks_the_calendar_then_says("a quiet week"), seen)
    async with start_server(model=model) as h:
        await h.user_says("what's on this week?")
        [rpc] = await h.rpc_requests(1)
        # Once the drain stops waiting for the answer, the phone works (or not), not the bot.
        await h.sendbird.wait_typing(lambda calls: len(calls) >= 2, timeout=WAIT_FOR_DEVICE_S + 5)
        assert not h.sendbird.is_typing("ch-1")
        assert timeline(h, "ch-1") == ["typing", "rpc", "stopped"]

        await h.answer(rpc["id"], result={"events": []})
        [reply] = await h.replies(1)
        await h.sendbird.wait_typing(lambda calls: len(calls) >= 4)
        assert reply.text == "a quiet week" and seen == [True, True]
        assert timeline(h, "ch-1") == ["typing", "rpc", "stopped", "typing", "answer", "stopped"]


async def test_a_quick_answer_comes_without_a_typing_indicator(start_server: Any) -> None:
    def instant(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("right away")])

    async with start_server(model=FunctionModel(instant)) as h:
        await h.user_says("hello", channel="quick")
        [reply] = await h.replies(1, channel="quick")
        await h.idle()
        await asyncio.sleep(SHOW_AFTER_S + 0.2)  # past the moment a start would have gone out
        assert reply.text == "right away"
        assert h.sendbird.typing_in("quick") == []  # neither a start nor a stop for Sendbird to show


async def eventually(condition: Callable[[], bool | Awaitable[bool]], *, timeout: float, what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = condition()
        if await result if isinstance(result, Awaitable) else result:
            return
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting until {what}")
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("failure", ["error", "hang"])
async def test_a_failing_typing_endpoint_does_not_hold_up_the_answer(
    start_server: Any, failure: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="truloop_assistant.channels.sendbird")

    async def echo(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await asyncio.sleep(SHOW_AFTER_S + 0.2)  # long enough to show typing
        return ModelResponse(parts=[TextPart("echo")])

    async with start_server(model=FunctionModel(echo)) as h:
        loop = asyncio.get_running_loop()
        began = loop.time()
        await h.user_says("warm up", channel="fine")
        await h.replies(1, channel="fine")
        usual = loop.time() - began

        if failure == "error":
            h.sendbird.typing_status = 500
        else:
            h.sendbird.typing_hang_s = 10
        for n, text in enumerate(["hello", "and again"], start=1):
            began = loop.time()
            await h.user_says(text)
            await h.replies(n, timeout=2)  # a hanging typing call would take its 2 s
            assert loop.time() - began < usual + 1.0
        assert h.sendbird.typing_in("ch-1")[0].started  # it did try

        def logged() -> bool:
            return any("typing" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)

        await eventually(logged, timeout=5, what="the failing typing call is logged")
        await h.idle()
        h.sendbird.release_typing()


async def test_the_dev_channel_shows_the_assistant_typing_while_the_model_thinks(start_server: Any) -> None:
    release = asyncio.Event()

    async def slow(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await asyncio.wait_for(release.wait(), timeout=10)
        return ModelResponse(parts=[TextPart("done thinking")])

    async with start_server(model=FunctionModel(slow), channel="local") as h:
        page: dict[str, Any] = {}

        async def channel_shows(predicate: Callable[[dict[str, Any]], bool]) -> bool:
            page.update((await h.http.get("/dev/api/channels/demo/messages")).json())
            return predicate(page)

        r = await h.http.post("/dev/api/channels/demo/messages", json={"user_id": "jeff", "message": "hi"})
        assert r.status_code == 202
        await eventually(lambda: channel_shows(lambda p: p["typing"]), timeout=5, what="typing shows")
        assert [m["message"] for m in page["messages"]] == ["hi"]  # thinking, nothing said yet

        release.set()
        await eventually(lambda: channel_shows(lambda p: not p["typing"]), timeout=5, what="typing ends")
        assert [m["message"] for m in page["messages"]] == ["hi", "done thinking"]
        await h.idle()
        assert await channel_shows(lambda p: not p["typing"])


class RecordingChannel:
    """A channel that records typing calls; a start can be held until the test lets it finish."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.hold_starts = asyncio.Event()
        self.hold_starts.set()
        self.fail = False

    async def send_text(self, channel_url: str, text: str, *, dedup_id: str) -> None:
        raise NotImplementedError

    async def send_rpc(
        self,
        channel_url: str,
        request: JsonRpcRequest,
        *,
        notification: str,
        dedup_id: str,
        recipient: str = "",
    ) -> None:
        raise NotImplementedError

    async def typing_started(self, channel_url: str) -> None:
        self.calls.append(("start", channel_url))
        await self.hold_starts.wait()
        if self.fail:
            raise RuntimeError("typing is down")

    async def typing_stopped(self, channel_url: str) -> None:
        self.calls.append(("stop", channel_url))


async def test_a_step_that_ends_before_its_typing_went_out_shows_nothing() -> None:
    channel = RecordingChannel()
    typing = Typing(channel)
    typing.start("c")
    typing.stop("c")
    await typing.settle()
    assert channel.calls == []


async def test_a_stop_never_overtakes_its_start() -> None:
    channel = RecordingChannel()
    channel.hold_starts.clear()
    typing = Typing(channel)
    typing.start("c")
    await eventually(lambda: channel.calls == [("start", "c")], timeout=2, what="the start is sent")
    typing.stop("c")
    typing.start("c")
    typing.stop("c")
    assert channel.calls == [("start", "c")]  # the stop waits for its start
    channel.hold_starts.set()
    await typing.settle()
    assert channel.calls == [("start", "c"), ("stop", "c")]


async def test_a_failing_start_is_still_followed_by_its_stop() -> None:
    channel = RecordingChannel()
    channel.fail = True
    typing = Typing(channel)
    typing.start("c")
    await eventually(lambda: bool(channel.calls), timeout=2, what="the start is sent")
    typing.stop("c")
    await typing.settle()
    assert channel.calls == [("start", "c"), ("stop", "c")]


async def test_beyond_its_bound_conversations_are_not_shown_typing_until_a_place_frees() -> None:
    channel = RecordingChannel()
    channel.hold_starts.clear()  # a hanging endpoint: every start stays in flight
    typing = Typing(channel, max_typing=2)
    for name in ("a", "b", "c"):
        typing.start(name)
    await eventually(lambda: len(channel.calls) == 2, timeout=2, what="two starts are sent")
    typing.stop("c")  # never shown: nothing to stop
    channel.hold_starts.set()
    typing.stop("a")
    await typing.settle()
    typing.start("c")
    await typing.settle()
    assert channel.calls == [("start", "a"), ("start", "b"), ("stop", "a"), ("start", "c")]


async def test_a_start_skipped_for_want_of_budget_is_not_retried_in_its_step_nor_stopped() -> None:
    class NoBudget(RecordingChannel):
        async def typing_started(self, channel_url: str) -> bool:
            self.calls.append(("start", channel_url))
            return False  # skipped: the app-wide budget had nothing to spare

    channel = NoBudget()
    typing = Typing(channel, show_after_s=0)
    typing.start("c")
    await typing.settle()
    typing.stop("c")
    await typing.settle()
    assert channel.calls == [("start", "c")]  # one try in the step, and nothing shown to stop
    typing.start("c")  # the next step tries again
    await typing.settle()
    assert channel.calls == [("start", "c"), ("start", "c")]


async def test_a_request_a_person_must_answer_stops_the_typing_at_once(
    start_server: Any, sendbird: FakeSendbird, monkeypatch: pytest.MonkeyPatch
) -> None:
    calendar = DEVICE_METHODS["get_calendar_events"]
    monkeypatch.setitem(DEVICE_METHODS, calendar.name, replace(calendar, answered_by="person"))
    model = shown_when_thinking(sendbird, asks_the_calendar_then_says("a quiet week"), [])
    async with start_server(model=model) as h:
        await h.user_says("what's on this week?")
        await h.rpc_requests(1)
        # Nobody waits for a person's answer with the bot typing: it stops as the request goes out.
        await h.sendbird.wait_typing(lambda calls: len(calls) >= 2, timeout=WAIT_FOR_DEVICE_S / 2)
        assert timeline(h, "ch-1") == ["typing", "rpc", "stopped"]
