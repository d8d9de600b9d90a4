"""The job queue (saq on Redis): at-least-once delivery, retries with backoff, blocking pickup."""

from __future__ import annotations

from saq import Queue


def make_queue(redis_url: str, name: str) -> Queue:
    return Queue.from_url(redis_url, name=name)


class TurnQueue:
    """Hands conversations to workers: one drain job per owner of a conversation's inbox."""

    def __init__(self, queue: Queue, *, heartbeat_s: int) -> None:
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
