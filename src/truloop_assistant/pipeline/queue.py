"""The job queue (saq on Redis): at-least-once delivery, retries with backoff, blocking pickup."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from redis.asyncio import Redis
from saq import Job, Status
from saq.job import TERMINAL_STATUSES
from saq.queue.redis import PubSubMultiplexer, RedisQueue

from ..redis_client import connect
from ..store import keys

log = logging.getLogger(__name__)

_ANNOUNCED = TERMINAL_STATUSES - {Status.COMPLETE}


# saq's own: under a short lock, every job id in the active list with its stored job.
_ACTIVE_JOBS = """
local id_jobs = {}
if redis.call('EXISTS', KEYS[1]) == 0 then
    redis.call('SETEX', KEYS[1], ARGV[1], 1)
    for i, v in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
        id_jobs[i] = {v, redis.call('GET', v)}
    end
end
return id_jobs
"""


class _Notifications(PubSubMultiplexer):
    """saq's job-status listener; one that never listened has nothing to unsubscribe from."""

    async def close(self) -> None:
        if self._daemon_task is not None:
            await super().close()


class TruloopQueue(RedisQueue):
    """saq's Redis queue with a sweep that never takes a job from a live worker.

    saq's own sweep treats every job in the active list whose status is not ACTIVE as abandoned.
    A worker that has just moved a job there (BLMOVE) has not marked it ACTIVE yet, so a sweep in
    that instant aborts a job that is about to run and queues it again: the turn runs twice, or is
    aborted mid-run. Here a job is swept only when its heartbeat stopped, or when it is still
    not ACTIVE at the next sweep, seconds later (its worker died between the two steps).

    Upstream: tobymao/saq#277 ("The task was swept during execution", open) and #124 ("Random
    sweeping of jobs": a QUEUED job found in the active list). Written against saq 0.26.x, which
    pyproject pins: ``sweep`` mirrors that version's ``RedisQueue.sweep`` (its lock script, its
    ``_cleanup_script``, ``_sweep``/``_active``/``_incomplete`` keys); re-read it before a bump.
    """

    def __init__(self, redis: Redis, *, name: str) -> None:
        # Every key of the queue (its lists, its jobs, their abort marks) under the deployment's
        # prefix and in one hash slot, so saq's scripts and transactions work on a Redis Cluster.
        self._space = keys.queue(name)
        super().__init__(redis, name=name)
        self._pubsub = _Notifications(redis.pubsub(), prefix=self.job_id(""))
        self._not_active: set[bytes] = set()

    def namespace(self, key: str) -> str:
        return f"{self._space}:{key}"

    def job_id(self, job_key: str) -> str:
        return f"{self._space}:job:{job_key}"

    def job_key_from_id(self, job_id: str) -> str:
        return job_id[len(self.job_id("")) :]

    async def _enqueue(self, job: Job) -> Job | None:
        # saq names a job's abort mark after its key alone: the key carries the queue's hash tag
        # so that the mark is in the queue's slot too.
        if not job.key.startswith(self._space):
            job.key = f"{self._space}:{job.key}"
        return await super()._enqueue(job)

    async def _finish(
        self, job: Job, status: Status, *, result: Any = None, error: str | None = None
    ) -> None:
        # saq's own, in one round trip without MULTI/EXEC (two commands of a job's dozen): every job
        # here is a drain, which a second run finds with nothing left to do, so a finish cut short
        # by a lost connection (the job still listed as active, then swept) costs that run at most.
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.lrem(self._active, 1, job.id)
            pipe.zrem(self._incomplete, job.id)
            if job.ttl > 0:
                pipe.setex(job.id, job.ttl, self.serialize(job))
            elif job.ttl == 0:
                pipe.set(job.id, self.serialize(job))
            else:
                pipe.delete(job.id)
            await pipe.execute()
        await self.notify(job)

    async def notify(self, job: Job) -> None:
        # Only the end of an aborted job is waited for (``Job.refresh(until_complete)``: the sweep's
        # wait for an abort); that a job started, was queued again or completed nobody listens to, and
        # each would cost a command and a round trip a job. (A swept job that completes anyway is run
        # once more after the sweep's wait: a drain that finds nothing left to do.)
        if job.status in _ANNOUNCED:
            await super().notify(job)

    async def disconnect(self) -> None:
        await self._pubsub.close()
        await self.redis.aclose()  # the client's own pool (a cluster client has one per node)

    async def abort(self, job: Job, error: str, ttl: float = 5) -> None:
        # saq's own, with the status announced after the transaction: a Redis Cluster refuses
        # PUBLISH inside one (it has no key to place it by).
        async with self._op_sem:
            job.status = Status.ABORTING
            job.error = error
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.lrem(self._queued, 0, job.id)
                pipe.zrem(self._incomplete, job.id)
                pipe.set(job.id, self.serialize(job))
                pipe.setex(job.abort_id, int(ttl) or 1, error)
                dequeued, *_ = await pipe.execute()
            await self.redis.publish(job.id, job.status)
        if dequeued:
            await self.finish(job, Status.ABORTED, error=error)
            await self.redis.delete(job.abort_id)
        else:
            await self.redis.lrem(self._active, 0, job.id)

    async def sweep(self, lock: int = 60, abort: float = 5.0) -> list[str]:
        if not self._cleanup_script:
            self._cleanup_script = self.redis.register_script(_ACTIVE_JOBS)
        id_jobs = await self._cleanup_script(keys=[self._sweep, self._active], args=[lock], client=self.redis)
        not_active: set[bytes] = set()
        swept: list[str] = []
        aborted: list[Job] = []
        for job_id, job_bytes in id_jobs:
            job = self.deserialize(job_bytes)
            if job is None:
                async with self.redis.pipeline(transaction=True) as pipe:
                    pipe.lrem(self._active, 0, job_id)
                    pipe.zrem(self._incomplete, job_id)
                    await pipe.execute()
                swept.append(job_id.decode())
                continue
            waiting = job.status != Status.ACTIVE and not job.stuck
            if waiting and job_id not in self._not_active:
                not_active.add(job_id)  # look again next time
                continue
            if not (job.stuck or waiting):
                continue
            log.info("sweeping job %s (%s)", job.key, "no heartbeat" if job.stuck else "never started")
            swept.append(job_id.decode())
            await self.abort(job, error=self.swept_error_message)
            aborted.append(job)
        # Each aborted job gets up to ``abort`` seconds for its worker, if it lives, to stop it; they
        # wait together, so that the many jobs a Redis restart leaves behind cost one wait, not one each.
        await asyncio.gather(*(self._requeue_swept(job, abort) for job in aborted))
        if id_jobs:  # only a sweep that held the lock saw the whole active list
            self._not_active = not_active
        return swept

    async def _requeue_swept(self, job: Job, abort: float) -> None:
        try:
            await job.refresh(abort)
        except TimeoutError:
            log.info("could not abort job %s", job.key)
        if job.retryable:
            await self.retry(job, error=self.swept_error_message)
        else:
            await self.finish(job, Status.ABORTED, error=self.swept_error_message)


def make_queue(redis_url: str, name: str) -> TruloopQueue:
    return TruloopQueue(connect(redis_url), name=name)


class TurnQueue:
    """Hands conversations to workers: one drain job per owner of a conversation's inbox."""

    def __init__(self, queue: TruloopQueue, *, heartbeat_s: int) -> None:
        self.queue = queue
        self.heartbeat_s = heartbeat_s

    async def drain(self, channel_url: str, owner: str) -> None:
        await self.queue.enqueue(
            "drain_conversation",
            key=owner,
            channel_url=channel_url,
            owner=owner,
            # No overall timeout (a conversation may have several turns waiting); a job whose
            # worker stops sending heartbeats is swept and retried by another worker.
            timeout=0,
            heartbeat=self.heartbeat_s,
            retries=20,
            retry_delay=1.0,
            retry_backoff=30.0,
            ttl=600,
        )
