"""A worker process killed mid-turn: another worker takes the job and the user gets one answer."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.fakes.llm import FakeLLM
from tests.fakes.sendbird import FakeSendbird
from tests.pipeline.workers import cluster
from tests.support import ON_STANDALONE_AND_CLUSTER, idle

pytestmark = ON_STANDALONE_AND_CLUSTER


async def test_sigkilled_worker_mid_turn_still_gives_exactly_one_answer(
    redis: Any, redis_url: str, sendbird: FakeSendbird
) -> None:
    llm = FakeLLM(hold=1)  # the first model request hangs: the worker dies while waiting on it
    async with cluster(redis_url, sendbird, llm, queue="crash") as c:
        first = await c.start_worker()
        await c.user_says("hello after a crash", channel="crash-1", message_id=4242)
        async with asyncio.timeout(30):
            await llm.holding.wait()  # the first worker is mid-turn
        await c.kill(first)
        await c.start_worker()

        [answer] = await sendbird.wait_count(1, "crash-1", timeout=45)
        assert answer.text == "answer to: hello after a crash"
        await idle(redis, queue="crash", timeout=30)
        assert len(sendbird.messages) == 1
        assert len(llm.requests) == 2  # the dead worker's attempt and the one that answered
