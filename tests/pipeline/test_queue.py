"""The queue's sweep takes jobs only from dead workers, never from one that just picked a job up."""

from __future__ import annotations

from typing import Any

from saq import Status
from saq.utils import now

from tests.support import ON_STANDALONE_AND_CLUSTER
from truloop_assistant.pipeline.queue import TruloopQueue, make_queue

pytestmark = ON_STANDALONE_AND_CLUSTER


async def sweep(queue: TruloopQueue) -> list[str]:
    """One sweep now (as if the 2 s between two workers' sweeps had passed)."""
    await queue.redis.delete(queue._sweep)
    return await queue.sweep(lock=1, abort=0.1)


async def test_sweep_spares_a_job_a_worker_just_dequeued(redis: Any, redis_url: str) -> None:
    queue = make_queue(redis_url, "sweep-test")
    try:
        job = await queue.enqueue("drain_conversation", key="j1", heartbeat=5, retries=3)
        assert job is not None
        # A worker has moved it to the active list but not yet marked it ACTIVE (saq's BLMOVE step).
        picked = await queue.dequeue()
        assert picked is not None and picked.status == Status.QUEUED

        assert await sweep(queue) == []  # a live worker is about to start it
        picked.attempts += 1
        await picked.update(status=Status.ACTIVE, started=now())
        assert await sweep(queue) == []  # running, heartbeat fresh
    finally:
        await queue.disconnect()


async def test_sweep_retries_a_job_whose_worker_died(redis: Any, redis_url: str) -> None:
    queue = make_queue(redis_url, "sweep-test")
    try:
        await queue.enqueue("drain_conversation", key="j2", heartbeat=1, retries=3)
        picked = await queue.dequeue()
        assert picked is not None
        # Died between dequeue and start: still not ACTIVE at the next sweep.
        assert await sweep(queue) == []
        assert await sweep(queue) == [picked.id]
        again = await queue.dequeue(timeout=1)
        assert again is not None and again.id == picked.id  # the same job, retried

        # Died while running: the heartbeat stops.
        again.attempts += 1
        await again.update(status=Status.ACTIVE, started=again.touched)
        again.touched -= 5_000
        await queue.redis.set(again.id, queue.serialize(again))
        assert await sweep(queue) == [again.id]
        assert (await queue.dequeue(timeout=1)) is not None
    finally:
        await queue.disconnect()
