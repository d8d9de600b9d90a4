"""Answers outlast a Sendbird outage: computed once, delivered later, in order, and shown once."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.api.test_tools_gate import LUNCH, events_of, scripted
from truloop_assistant.pipeline.delivery import GIVE_UP_AFTER_S, RETRY_CAP_S, retry_delay
from truloop_assistant.store import keys
from truloop_assistant.store.outbox import TextOut

CALENDAR = {
    "notification_message": "…",
    "start_date": "2026-11-23T00:00:00+09:00",
    "end_date": "2026-11-29T23:59:59+09:00",
}


def counting_echo(prompts: Counter[str]) -> FunctionModel:
    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        prompt = next(str(p.content) for p in last.parts if isinstance(p, UserPromptPart))
        prompts[prompt] += 1
        return ModelResponse(parts=[TextPart(f"echo {prompt}")])

    return FunctionModel(fn)


async def test_an_outage_longer_than_every_send_retry_loses_nothing_and_runs_each_turn_once(
    start_server: Any,
) -> None:
    prompts: Counter[str] = Counter()
    async with start_server(model=counting_echo(prompts)) as h:
        h.sendbird.outage(12)  # longer than a send's own retries and the old three job attempts together
        for i in range(8):
            await h.user_says(f"hello from {i}", user=f"user-{i}", channel=f"c{i}")
        await h.user_says("and a second thing", user="user-0", channel="c0")
        for i in range(8):
            await h.replies(2 if i == 0 else 1, channel=f"c{i}", timeout=60)
        await h.idle(timeout=30)
        assert [m.text for m in h.sendbird.in_channel("c0")] == [
            "echo hello from 0",
            "echo and a second thing",
        ]
        for i in range(1, 8):
            assert [m.text for m in h.sendbird.in_channel(f"c{i}")] == [f"echo hello from {i}"]
        # The model ran once per message: delivery was retried, the turns were not.
        assert prompts == Counter({**{f"hello from {i}": 1 for i in range(8)}, "and a second thing": 1})
        assert h.sendbird.requests > 8 * 5  # every conversation met the outage more than once


def pauses_twice() -> FunctionModel:
    """Ask for the calendar, then for the calendar again, then answer."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        answered = sum(
            1
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if p.part_kind == "tool-return"
        )
        if answered < 2:
            return ModelResponse(parts=[ToolCallPart("get_calendar_events", CALENDAR)])
        return ModelResponse(parts=[TextPart("checked twice")])

    return FunctionModel(fn)


async def test_a_device_request_sent_after_a_resume_is_delivered_once_sendbird_is_back(
    start_server: Any,
) -> None:
    async with start_server(model=pauses_twice()) as h:
        await h.user_says("calendar please")
        [first] = await h.rpc_requests(1)
        h.sendbird.outage(6)
        assert (await h.answer(first["id"], result={"events": []})).json() == {"status": "resuming"}
        second = (await h.rpc_requests(2, timeout=60))[1]
        assert second["id"] != first["id"] and second["method"] == "calendar.getEvents"
        await h.answer(second["id"], result={"events": []})
        [reply] = await h.replies(1)
        assert reply.text == "checked twice"


async def test_a_confirmed_event_is_created_once_when_the_answer_cannot_be_sent(
    start_server: Any, directory: Any
) -> None:
    async with start_server(model=scripted(("create_event", LUNCH))) as h:
        await h.user_says("set up the design lunch")
        [rpc] = await h.rpc_requests(1)
        h.sendbird.outage(8)
        await h.answer(rpc["id"], result={"confirmed": True})
        [reply] = await h.replies(1, timeout=60)
        assert reply.text.startswith("create_event success")
        await h.idle()
        assert len(await events_of(h.redis, "jeff")) == 1


async def test_a_message_sendbird_already_has_counts_as_delivered(start_server: Any) -> None:
    """Sendbird may refuse a ``dedup_id`` it has seen (the first try got through, its answer did not)."""
    prompts: Counter[str] = Counter()
    async with start_server(model=counting_echo(prompts)) as h:
        h.sendbird.refuse_repeats = True
        await h.user_says("hi")
        await h.replies(1)
        # The same answer again, as a retry after a lost response would send it.
        tag = keys.conversation_tag("ch-1")
        again = TextOut(text="echo hi", dedup_id=h.sendbird.messages[0].body["dedup_id"])
        await h.redis.rpush(keys.outbox(tag), again.model_dump_json())
        await h.user_says("next")
        replies = await h.replies(2)
        assert [r.text for r in replies] == ["echo hi", "echo next"]
        await h.idle()
        assert await h.redis.llen(keys.outbox(tag)) == 0


def test_the_retry_schedule_outlasts_long_outages_and_comes_back_fast() -> None:
    assert [retry_delay(n) for n in (1, 2, 3, 4, 5, 6, 20)] == [1, 2, 4, 8, 16, 30, 30]
    assert RETRY_CAP_S <= 30  # a message goes out within about half a minute of the channel's return
    assert GIVE_UP_AFTER_S >= 10 * 60  # a ten-minute outage loses nothing
