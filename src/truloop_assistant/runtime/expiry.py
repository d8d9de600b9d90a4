"""Pending calls that reach their deadline are not silent: the run resumes and the user is answered.

Deadlines live in Redis (a sorted set), so nothing depends on a timer in one process: every
worker scans once a second, and whichever sees a due turn first cuts it short and queues its resume.
"""

from __future__ import annotations

import logging
import time

from ..deferred.resumes import resume_if_due
from ..pipeline.intake import Intake
from ..store.turns import TurnStore

log = logging.getLogger(__name__)


async def expire_due(store: TurnStore, intake: Intake, *, now: float | None = None) -> int:
    """Resume every paused turn whose calls are past their deadline; returns how many were expired."""
    expired = 0
    for channel_url, turn_id in await store.due(time.time() if now is None else now):
        snapshot = await store.load_turn(channel_url, turn_id)
        if snapshot is not None and snapshot.state == "paused" and await store.expire(snapshot.turn):
            expired += 1
            log.info("calls of turn %s in %s expired; resuming without them", turn_id, channel_url)
        # Also a turn that was resuming already: its resume may have been lost.
        await resume_if_due(store, intake, channel_url, turn_id)
        await store.forget_deadline(channel_url, turn_id)
    return expired


async def end_unhandled_due(store: TurnStore, intake: Intake, *, now: float | None = None) -> int:
    """End every call a device could not run (-32601) that no other device answered in time.

    Each ends with that error (the model is told no device could do it); how many were ended. A
    scan that dies midway leaves the entry due: the next one finishes the job.
    """
    ended = 0
    for tag, call_id in await store.unhandled_due(time.time() if now is None else now):
        outcome, view = await store.end_unhandled(tag, call_id)
        if view is not None:
            if outcome in ("accepted", "resume"):
                ended += 1
                log.info("no device could run %s (%s); it ends with method not found", call_id, view.method)
            resumed = await resume_if_due(store, intake, view.channel_url, view.turn_id)
            if not resumed and outcome == "accepted":
                await intake.deliver(view.channel_url)  # the request's update
        await store.forget_unhandled(tag, call_id)
    return ended
