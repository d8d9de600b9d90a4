"""A worker keeps many turns waiting on the model at once: turns wait on the model, not on each other."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.fakes.llm import FakeLLM
from tests.fakes.sendbird import FakeSendbird
from tests.pipeline.workers import cluster
from tests.support import idle

CONVERSATIONS = 60


async def test_one_worker_at_its_default_concurrency_runs_sixty_slow_turns_together(
    redis: Any, redis_url: str, sendbird: FakeSendbird
) -> None:
    # A real model takes seconds; here each answer waits until every conversation's request is in.
    # With too few turns at once the requests in flight never reach sixty, and after 30 s go on.
    llm = FakeLLM(delay_s=1.5, gather=CONVERSATIONS, gather_timeout_s=20)
    async with cluster(redis_url, sendbird, llm, queue="wide") as c:
        worker = await c.start_worker(concurrency=None)
        await c.logged(worker, "worker started")
        await asyncio.gather(
            *(
                c.user_says(f"hello {i}", channel=f"wide-{i}", message_id=7000 + i, user=f"user-{i}")
                for i in range(CONVERSATIONS)
            )
        )
        await sendbird.wait_for(lambda msgs: len(msgs) >= CONVERSATIONS, timeout=90)
        await idle(redis, queue="wide", timeout=30)

        assert sorted(m.text for m in sendbird.messages) == sorted(
            f"answer to: hello {i}" for i in range(CONVERSATIONS)
        )
        # Every conversation's turn was waiting on the model at the same moment (10 at a time before).
        assert llm.gathered.is_set(), llm.most_in_flight
        worker.terminate()
        _, errors = await worker.communicate()
        assert b"Too many connections" not in errors, errors.decode(errors="replace")[-2000:]
