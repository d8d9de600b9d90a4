"""Conversations under real traffic: order, parallelism, superseded calls, flaky Sendbird."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel


def last_prompt(messages: list[ModelMessage]) -> str:
    return next(str(p.content) for p in reversed(messages[-1].parts) if isinstance(p, UserPromptPart))


class SlowEcho:
    """Echoes the prompt after a delay; records how many runs overlap, per conversation and overall."""

    def __init__(self, delays: dict[str, float] | None = None, default_delay: float = 0.0) -> None:
        self.delays = delays or {}
        self.default_delay = default_delay
        self.in_flight: dict[str, int] = defaultdict(int)
        self.max_per_conversation = 0
        self.max_overall = 0
        self.prompts: list[str] = []
        self.started = asyncio.Event()
        """Set once a run has begun."""

    def model(self) -> FunctionModel:
        async def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            prompt = last_prompt(messages)
            conversation = prompt.split(":")[0]
            self.in_flight[conversation] += 1
            self.max_per_conversation = max(self.max_per_conversation, self.in_flight[conversation])
            self.max_overall = max(self.max_overall, sum(self.in_flight.values()))
            self.started.set()
            try:
                await asyncio.sleep(self.delays.get(prompt, self.default_delay))
            finally:
                self.in_flight[conversation] -= 1
            self.prompts.append(prompt)
            return ModelResponse(parts=[TextPart(f"echo {prompt}")])

        return FunctionModel(fn)


async def test_messages_typed_in_a_row_are_answered_one_turn_at_a_time_in_order(start_server: Any) -> None:
    echo = SlowEcho(delays={"a:one": 0.4})
    async with start_server(model=echo.model()) as h:
        assert (await h.user_says("a:one", channel="a")).json() == {"status": "queued"}
        await asyncio.wait_for(echo.started.wait(), 10)
        for text in ("a:two", "a:three"):  # written while the first runs: they wait, then go together
            assert (await h.user_says(text, channel="a")).json() == {"status": "queued"}
        replies = await h.replies(2, channel="a")
        assert [r.text for r in replies] == ["echo a:one", "echo a:two\na:three"]
        assert echo.max_per_conversation == 1
        assert (await h.user_says("a:four", channel="a")).json() == {"status": "queued"}
        replies = await h.replies(3, channel="a")
        assert [r.text for r in replies][2:] == ["echo a:four"]
        assert echo.max_per_conversation == 1


async def test_forty_conversations_at_once_are_each_answered_exactly_once(start_server: Any) -> None:
    echo = SlowEcho(default_delay=0.05)
    async with start_server(model=echo.model()) as h:
        responses = await asyncio.gather(
            *(h.user_says(f"c{i}:hi", channel=f"c{i}", user=f"user-{i}") for i in range(40))
        )
        assert all(r.json() == {"status": "queued"} for r in responses)
        await h.sendbird.wait_for(lambda msgs: len(msgs) >= 40)
        await h.idle()  # any duplicate would have run by now
        by_channel: dict[str, list[str]] = defaultdict(list)
        for m in h.sendbird.messages:
            by_channel[m.channel_url].append(m.text)
        assert by_channel == {f"c{i}": [f"echo c{i}:hi"] for i in range(40)}
        assert echo.max_per_conversation == 1
        assert echo.max_overall > 1  # different conversations ran in parallel


async def test_sendbird_429_then_200_shows_one_message(start_server: Any) -> None:
    async with start_server(model=SlowEcho().model()) as h:
        h.sendbird.failures = [(429, {"X-RateLimit-RetryAfter": "0.2"}), (503, {}), (502, {})]
        await h.user_says("x:hello", channel="x")
        [reply] = await h.replies(1, channel="x")
        assert reply.text == "echo x:hello"
        assert h.sendbird.requests == 4
        await h.idle()
        assert len(h.sendbird.messages) == 1


def calendar_then_text() -> tuple[FunctionModel, list[list[ModelMessage]]]:
    seen: list[list[ModelMessage]] = []

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        prompts = [p for p in messages[-1].parts if isinstance(p, UserPromptPart)]
        if prompts and "calendar" in str(prompts[-1].content):
            args = {
                "notification_message": "…",
                "start_date": "2026-11-23T00:00:00+09:00",
                "end_date": "2026-11-29T00:00:00+09:00",
            }
            return ModelResponse(parts=[ToolCallPart("get_calendar_events", args)])
        told = "; ".join(f"{p.tool_name} {p.outcome}: {p.content}" for p in returns)
        return ModelResponse(parts=[TextPart(f"re {prompts[-1].content if prompts else ''} | {told}")])

    return FunctionModel(fn), seen


async def test_a_new_message_supersedes_pending_calls(start_server: Any) -> None:
    model, seen = calendar_then_text()
    async with start_server(model=model) as h:
        await h.user_says("show my calendar")
        [rpc] = await h.rpc_requests(1)

        await h.user_says("never mind, hi")
        [reply] = await h.replies(1)
        # The model was told the old call was superseded, and answered the new message.
        assert reply.text.startswith("re never mind, hi | get_calendar_events failed: Superseded")

        r = await h.answer(rpc["id"], result={"events": []})  # the phone answers late
        assert r.status_code == 410 and r.json()["error"]["code"] == "call_superseded"
        await h.idle()
        assert len(await h.replies(1)) == 1  # nothing resumed

        # The conversation carries on with the whole story in its history.
        await h.user_says("and now?")
        await h.replies(2)
        assert any(isinstance(p, ToolReturnPart) and p.outcome == "failed" for m in seen[-1] for p in m.parts)


async def test_answers_that_arrived_before_the_new_message_still_count(start_server: Any) -> None:
    model, _ = calendar_then_text()
    async with start_server(model=model) as h:
        await h.user_says("show my calendar")
        [rpc] = await h.rpc_requests(1)
        assert (await h.answer(rpc["id"], result={"events": []})).status_code == 202
        await h.user_says("thanks")
        replies = await h.replies(2)
        # Both get answered, in order: the resumed calendar turn first, then the new message.
        assert replies[0].text.startswith("re  | get_calendar_events success")
        assert replies[1].text.startswith("re thanks")
