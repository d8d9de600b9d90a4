"""The queue's sweep takes jobs only from dead workers, never from one that just picked a job up."""

from __future__ import annotations

from typing import Any

from saq import Job, Status
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


async def test_the_jobs_of_dead_workers_wait_for_their_abort_together(
    redis: Any, redis_url: str, monkeypatch: Any
) -> None:
    """After a Redis restart many jobs have lost their heartbeat at once: each gets its wait for a
    live worker to stop it, and the waits overlap (one after another, 20 jobs would hold the sweep 100 s)."""
    queue = make_queue(redis_url, "sweep-test")
    waiting, most = 0, 0
    refresh = Job.refresh

    async def counted(job: Job, until_complete: float | None = None) -> None:
        nonlocal waiting, most
        waiting += 1
        most = max(most, waiting)
        try:
            await refresh(job, until_complete)
        finally:
            waiting -= 1

    monkeypatch.setattr(Job, "refresh", counted)
    try:
        dead = []
        for n in range(4):
            await queue.enqueue("drain_conversation", key=f"dead-{n}", heartbeat=1, retries=3)
            picked = await queue.dequeue()
            assert picked is not None
            picked.attempts += 1
            await picked.update(status=Status.ACTIVE, started=now())
            picked.touched -= 5_000  # its worker went away with Redis
            await queue.redis.set(picked.id, queue.serialize(picked))
            dead.append(picked.id)

        assert sorted(await sweep(queue)) == sorted(dead)
        assert most == len(dead)
        retried = [await queue.dequeue(timeout=1) for _ in dead]
        assert sorted(job.id for job in retried if job is not None) == sorted(dead)
    finally:
        await queue.disconnect()
