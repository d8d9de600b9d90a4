"""Guests reached by phone leave an event a while after it ends: nothing of them outlives it for long.

The event store notes, with every write to an event that has guests reached by phone, when they are
due to go (``keys.PHONE_GUEST_RETENTION_S`` after its end); every worker scans the due ones once a
second, and each due event is claimed by the one worker whose ZREM removed it. The event stays its
organizer's, without those guests' numbers, dates and invitation languages.
"""

from __future__ import annotations

import logging
import time
from typing import cast

from redis.asyncio import Redis

from ..backends.events import EventNotFoundError, EventStore
from ..protocol.addresses import phone_of
from ..store import keys

log = logging.getLogger(__name__)

FORGET_BATCH = 100
"""Events one scan takes their phone guests off (the rest on the next)."""


async def forget_phone_guests_due(redis: Redis, events: EventStore, *, now: float | None = None) -> int:
    """Take the guests reached by phone off each event that ended ``PHONE_GUEST_RETENTION_S`` ago;
    how many events. Each due event is claimed by the one worker whose ZREM removed it."""
    due = cast(
        list[bytes],
        await redis.zrangebyscore(
            keys.phone_guests_due(), "-inf", time.time() if now is None else now, start=0, num=FORGET_BATCH
        ),
    )
    done = 0
    for raw in due:
        if not await redis.zrem(keys.phone_guests_due(), raw):
            continue  # another worker took it
        event_id = raw.decode()
        event = await events.get(event_id)
        if event is None:
            continue
        phoned = [g for g in event.guest_user_ids if phone_of(g) is not None]
        try:
            await events.forget_guests(event_id, phoned)
        except EventNotFoundError:
            continue
        log.info("took %d guests reached by phone off event %s, ended a while ago", len(phoned), event_id)
        done += 1
    return done
