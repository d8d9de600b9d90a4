"""Queue consumer: runs user turns and resumes with the agent."""

from __future__ import annotations

from typing import Any, cast

from saq import Queue, Worker
from saq.types import PartialTimersDict

from .agent.runner import InboundMessage, TurnRunner


async def handle_message(
    ctx: dict[str, Any], *, message_id: str, channel_url: str, user_id: str, text: str
) -> None:
    runner: TurnRunner = ctx["runner"]
    await runner.handle_message(
        InboundMessage(message_id=message_id, channel_url=channel_url, user_id=user_id, text=text)
    )


async def resume_turn(ctx: dict[str, Any], *, channel_url: str, turn_id: str) -> None:
    runner: TurnRunner = ctx["runner"]
    await runner.resume(channel_url, turn_id)


SHUTDOWN_GRACE_S = 25
# Sweep often: a job whose worker died is found and retried within seconds.
_TIMERS = cast(PartialTimersDict, {"sweep": 5, "schedule": 1})


class EmbeddedWorker(Worker):
    """A worker sharing its process with the API server, which owns the signal handlers."""

    SIGNALS: list[Any] = []  # noqa: RUF012


def build_worker(queue: Queue, runner: TurnRunner, *, concurrency: int, embedded: bool = False) -> Worker:
    async def startup(ctx: dict[str, Any]) -> None:
        ctx["runner"] = runner

    if embedded:
        return EmbeddedWorker(
            queue,
            functions=[handle_message, resume_turn],
            concurrency=concurrency,
            startup=startup,
            timers=_TIMERS,
        )
    # A standalone worker lets turns in flight finish on SIGTERM (deploys); the 1 s blocking
    # dequeue is what lets its idle loops notice the stop.
    return Worker(
        queue,
        functions=[handle_message, resume_turn],
        concurrency=concurrency,
        startup=startup,
        timers=_TIMERS,
        dequeue_timeout=1.0,
        shutdown_grace_period_s=SHUTDOWN_GRACE_S,
    )
