"""The job queue (saq on Redis): at-least-once delivery, retries with backoff, blocking pickup."""

from __future__ import annotations

from saq import Queue

from .agent.runner import InboundMessage

# A turn may wait on a slow model; a job whose worker died is retried after the sweep finds it.
TURN_JOB_OPTIONS = {"timeout": 300, "retries": 4, "retry_delay": 1.0, "retry_backoff": 30.0, "ttl": 600}


def make_queue(redis_url: str, name: str) -> Queue:
    return Queue.from_url(redis_url, name=name)


class TurnQueue:
    """Hands turns to workers. Job keys make a re-enqueue of the same turn a no-op."""

    def __init__(self, queue: Queue) -> None:
        self.queue = queue

    async def message(self, message: InboundMessage) -> None:
        await self.queue.enqueue(
            "handle_message",
            key=f"msg:{message.channel_url}:{message.message_id}",
            message_id=message.message_id,
            channel_url=message.channel_url,
            user_id=message.user_id,
            text=message.text,
            **TURN_JOB_OPTIONS,
        )

    async def resume(self, channel_url: str, turn_id: str) -> None:
        await self.queue.enqueue(
            "resume_turn",
            key=f"resume:{channel_url}:{turn_id}",
            channel_url=channel_url,
            turn_id=turn_id,
            **TURN_JOB_OPTIONS,
        )
