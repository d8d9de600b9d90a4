"""A step's model run that the person can stop (``POST /api/v1/agent/turns/stop``).

The run goes on in a task of its own while the step reads its stop mark every ``POLL_S``; when the
person asked, the run's task is cancelled (the model request under way with it: pydantic-ai's stream,
and the provider's HTTP request beneath it) and the step is told :data:`STOPPED`, which it ends as a
normal turn (what was written so far kept as the answer), not as a failure. Whatever the run did before
stays done: tool calls that ran are not undone. A cancellation of the step itself (its time limit, the
worker's shutdown) cancels the run too, and goes on up as before.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Awaitable, Callable, Coroutine
from contextlib import suppress
from typing import Any, Literal, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

POLL_S = 0.2
"""How often a running step reads its stop mark: a stop ends the answer well within a second."""
CANCEL_WAIT_S = 5.0
"""How long a stopped (or cancelled) run is given to unwind its model request before it is let go."""


class Stop(enum.Enum):
    STOPPED = "stopped"


STOPPED: Literal[Stop.STOPPED] = Stop.STOPPED
"""What :func:`until_stopped` returns for a run the person stopped."""


async def until_stopped(
    run: Coroutine[Any, Any, T], asked: Callable[[], Awaitable[bool]], *, poll_s: float = POLL_S
) -> T | Literal[Stop.STOPPED]:
    """The run's result, or :data:`STOPPED` once ``asked()`` says the person asked to stop it."""
    task = asyncio.ensure_future(run)
    watch = asyncio.create_task(_watch(asked, poll_s), name="stop-watch")
    try:
        await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:  # the step's own time limit, or the worker going away
        await _cancelled(task)
        raise
    finally:
        watch.cancel()
    if not task.done():  # the person asked
        await _cancelled(task)
        if task.cancelled():
            return STOPPED
    return task.result()  # the run's own end (or its error), even one reached as the stop came


async def _cancelled(task: asyncio.Future[Any]) -> None:
    """Cancel the run and let its cancellation reach the model request (bounded)."""
    task.cancel()
    with suppress(asyncio.CancelledError):
        await asyncio.wait({task}, timeout=CANCEL_WAIT_S)


async def _watch(asked: Callable[[], Awaitable[bool]], poll_s: float) -> None:
    """Return once the person asked to stop; a failed read (Redis) is tried again at the next poll."""
    while True:
        await asyncio.sleep(poll_s)
        try:
            if await asked():
                return
        except Exception:
            log.warning("could not read the stop mark", exc_info=True)
