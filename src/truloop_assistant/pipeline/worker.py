"""Queue consumer: drains conversations, running their turns and resumes with the agent."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from contextlib import suppress
from typing import Any, cast

from saq import Queue, Worker
from saq.types import PartialTimersDict

from .. import tracing
from .conversations import ConversationDrainer

SHUTDOWN_GRACE_S = 25
# Sweep often: a job whose worker died is found and retried within seconds.
_TIMERS = cast(PartialTimersDict, {"sweep": 2, "schedule": 1})


async def drain_conversation(ctx: dict[str, Any], *, channel_url: str, owner: str) -> None:
    drainer: ConversationDrainer = ctx["drainer"]
    job = ctx.get("job")

    async def touch() -> None:
        if job is not None:
            await job.update()

    await drainer.drain(channel_url, owner, touch=touch)


class EmbeddedWorker(Worker):
    """A worker sharing its process with the API server, which owns the signal handlers."""

    SIGNALS: list[Any] = []  # noqa: RUF012


def build_worker(
    queue: Queue,
    drainer: ConversationDrainer,
    *,
    concurrency: int,
    embedded: bool = False,
    background: Callable[[], Coroutine[Any, Any, None]] | None = None,
) -> Worker:
    """A saq worker for conversations; ``background`` runs beside it (the expiry scanner)."""
    if not embedded:  # an embedded worker's server has set tracing up already
        tracing.configure("truloop-assistant-worker")

    async def startup(ctx: dict[str, Any]) -> None:
        ctx["drainer"] = drainer
        if background is not None:
            ctx["background"] = asyncio.create_task(background(), name="worker-background")

    async def shutdown(ctx: dict[str, Any]) -> None:
        if task := ctx.get("background"):
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task

    # A standalone worker lets turns in flight finish on SIGTERM (deploys); the 1 s blocking
    # dequeue is what lets its idle loops notice the stop. The embedded one stops with its server.
    cls: type[Worker] = EmbeddedWorker if embedded else Worker
    return cls(
        queue,
        functions=[drain_conversation],
        concurrency=concurrency,
        startup=startup,
        shutdown=shutdown,
        timers=_TIMERS,
        dequeue_timeout=0.0 if embedded else 1.0,
        shutdown_grace_period_s=None if embedded else SHUTDOWN_GRACE_S,
    )
