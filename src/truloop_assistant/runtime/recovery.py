"""Conversations nobody is draining get a drain: the job queue's bookkeeping is not the only record.

A drain job can be lost without a trace: its worker killed while another worker was sweeping it,
or the API process killed between pushing an event and queuing the job. The conversation itself
says what is waiting (its inbox and outbox, in Redis), and its watch (``store.drains``) says when
to look. Every worker scans the due watches once a second; a conversation with work waiting and no
live owner is taken over (atomically: one scanner wins) and a drain job is queued for it. An
outbox waiting for its next delivery try comes due the same way.
"""

from __future__ import annotations

import logging
import time

from ..logs import log_context
from ..pipeline.queue import TurnQueue
from ..store.drains import Drains

log = logging.getLogger(__name__)


async def rescue_due(drains: Drains, queue: TurnQueue, *, now: float | None = None) -> int:
    """Queue a drain for each due conversation with work waiting and no owner; how many were queued.

    A watch comes due about once per owner lifetime while its conversation is busy, and once more
    when it goes quiet (then it is forgotten), so a scan sees roughly the conversations active in
    the last ``TRULOOP_WORKER_HEARTBEAT_S``; up to 500 a scan, the rest on the next.
    """
    rescued = 0
    for channel_url, due in await drains.due(time.time() if now is None else now):
        backlog = await drains.backlog(channel_url)
        if backlog.owner is not None:
            await drains.watch(channel_url)  # being drained: look again once its claim would have lapsed
            continue
        if backlog.idle:
            await drains.forget(channel_url, due)
            continue
        owner = await drains.take_over(channel_url)
        if owner is not None:
            await queue.drain(channel_url, owner)
            rescued += 1
            with log_context(channel=channel_url):
                log.info(
                    "queued a drain for %s (%d event(s), %d message(s) to deliver, no owner)",
                    channel_url,
                    backlog.events,
                    backlog.outgoing,
                )
        await drains.watch(channel_url)
    return rescued
