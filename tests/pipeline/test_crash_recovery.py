"""Crashes at the worst moments, with real worker processes: nothing is lost, nothing done twice."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

from tests.fakes.llm import FakeLLM
from tests.fakes.sendbird import FakeSendbird
from tests.pipeline.workers import cluster
from tests.support import ON_STANDALONE_AND_CLUSTER, idle
from truloop_assistant.backends.events import RedisEventStore

pytestmark = ON_STANDALONE_AND_CLUSTER

LUNCH = {
    "title": "Design lunch",
    "start_time": "2026-12-02T12:00:00+09:00",
    "end_time": "2026-12-02T13:00:00+09:00",
}


def create_event_then_answer(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Ask to create the lunch; once the tool has answered, say what came of it."""
    if messages[-1]["role"] == "tool":
        return {"role": "assistant", "content": f"done: {messages[-1]['content'][:60]}"}
    call = {"id": "call_lunch", "type": "function",
            "function": {"name": "create_event", "arguments": json.dumps(LUNCH)}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


async def test_a_worker_killed_after_a_confirmed_tool_ran_does_not_run_it_again(
    redis: Any, redis_url: str, sendbird: FakeSendbird
) -> None:
    held: list[bool] = []

    def hold_once_after_the_tool(messages: list[dict[str, Any]]) -> bool:
        if messages[-1]["role"] == "tool" and not held:
            held.append(True)  # the worker dies here: the event exists, the answer was never written
            return True
        return False

    llm = FakeLLM(script=create_event_then_answer, hold_when=hold_once_after_the_tool)
    async with cluster(redis_url, sendbird, llm, queue="once") as c:
        first = await c.start_worker()
        await c.user_says("set up the design lunch", channel="once-1", message_id=501)
        [confirm] = await sendbird.wait_count(1, "once-1", timeout=30)
        assert confirm.rpc["method"] == "interaction.confirm"
        assert (await c.answer(confirm.rpc["id"], {"confirmed": True})).json() == {"status": "resuming"}

        async with asyncio.timeout(30):
            await llm.holding.wait()
        events = RedisEventStore(redis)
        start, end = datetime(2026, 12, 1, tzinfo=UTC), datetime(2026, 12, 3, tzinfo=UTC)
        assert len(await events.list_events("jeff", start, end)) == 1  # the tool ran in the first worker
        await c.kill(first)
        await c.start_worker()

        messages = await sendbird.wait_count(2, "once-1", timeout=60)
        assert messages[-1].text.startswith("done:")
        await idle(redis, queue="once", timeout=30)
        assert len(await events.list_events("jeff", start, end)) == 1  # replayed, not created again
        assert len(sendbird.in_channel("once-1")) == 2


async def test_a_worker_killed_while_recovering_another_workers_job_loses_nothing(
    redis: Any, redis_url: str, sendbird: FakeSendbird
) -> None:
    llm = FakeLLM(hold=1)  # the first model request hangs: the first worker dies waiting on it
    async with cluster(redis_url, sendbird, llm, queue="rescue") as c:
        first = await c.start_worker()
        await c.user_says("hello after two crashes", channel="rescue-1", message_id=601)
        async with asyncio.timeout(30):
            await llm.holding.wait()
        await c.kill(first)

        second = await c.start_worker()
        await c.logged(second, "sweeping job")  # it found the dead worker's job and is taking it over
        await c.kill(second)
        await c.start_worker()

        [answer] = await sendbird.wait_count(1, "rescue-1", timeout=60)
        assert answer.text == "answer to: hello after two crashes"
        await idle(redis, queue="rescue", timeout=30)
        assert len(sendbird.in_channel("rescue-1")) == 1
