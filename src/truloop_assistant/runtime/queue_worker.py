"""Queue consumer: drains conversations, running their turns and resumes with the agent."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, cast

from saq import Queue, Worker
from saq.types import PartialTimersDict

from .. import tracing
from ..pipeline.conversations import ConversationDrainer

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_S = 25
STOP_TASK_S = 5.0
"""How long a stop waits for a task beside the worker (scanners, liveness) to end."""
# Sweep often: a job whose worker died is found and retried within seconds.
_TIMERS = cast(PartialTimersDict, {"sweep": 2, "schedule": 1})


async def drain_conversation(ctx: dict[str, Any], *, channel_url: str, owner: str) -> None:
    drainer: ConversationDrainer = ctx["drainer"]
    job = ctx.get("job")

    async def touch() -> None:
        if job is not None:
            await job.update()

    await drainer.drain(channel_url, owner, touch=touch)


class QueueWorker(Worker):
    """saq's worker, logging what a job's bookkeeping raises (e.g. marking it for a retry while Redis
    is down) instead of leaving it in a task no one awaits."""

    async def process(self) -> bool:
        try:
            return await super().process()
        except Exception:
            log.exception("the queue could not settle a job; its lease runs out and it is run again")
            return False


class EmbeddedWorker(QueueWorker):
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
            await stop_task(task)

    # A standalone worker lets turns in flight finish on SIGTERM (deploys); the 1 s blocking
    # dequeue is what lets its idle loops notice the stop. The embedded one stops with its server.
    cls: type[Worker] = EmbeddedWorker if embedded else QueueWorker
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


async def stop_task(task: asyncio.Task[Any], *, within_s: float = STOP_TASK_S) -> None:
    """Cancel ``task`` and wait for it to end, cancelling again should a cancel get lost (on Python
    3.11 a timeout racing a cancel can swallow it); after ``within_s`` it is left behind, logged,
    so a stopping process never hangs on it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while not task.done():
        if (remaining := deadline - loop.time()) <= 0:
            log.warning("task %s did not stop within %g s; left behind", task.get_name(), within_s)
            return
        task.cancel()
        await asyncio.wait({task}, timeout=min(1.0, remaining))
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.warning("task %s ended with %r while stopping", task.get_name(), exc)
