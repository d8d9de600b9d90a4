"""Invitations and event notices their channel could not take when the event tool ran go out later.

They wait in Redis (:mod:`~truloop_assistant.store.pending_deliveries`), so nothing depends on one
process: every worker scans once a second. A scanner claims a due person (one scanner wins), delivers
what waits for them oldest first, and removes each once delivered. When the channel is still busy or
failing it stops there and tries the person again ``keys.PENDING_DELIVERY_RETRY_S`` later; if its
worker dies, the person comes due again after the lease. A retry carries the same ``dedup_id``, so a
message is shown once. A final refusal, or a delivery still refused after
``keys.PENDING_DELIVERY_MAX_AGE_S``, is given up and logged as an error; one whose organizer had
their data erased since it was queued is dropped (an erasure drops those it finds; this catches one
a scan held meanwhile).
"""

from __future__ import annotations

import logging
import time

from ..agent.inviter import DirectInviter, worth_retrying
from ..store import keys
from ..store.pending_deliveries import PendingDeliveries, PendingDelivery

log = logging.getLogger(__name__)

SCAN_LIMIT = 20
"""People one scan delivers to at most; the rest wait for the next scan."""


class PendingDeliveryScan:
    """The delivery scan: claim the people whose deliveries are due, deliver them in order."""

    def __init__(self, pending: PendingDeliveries, inviter: DirectInviter) -> None:
        self.pending = pending
        self.inviter = inviter

    async def send_due(self, *, now: float | None = None) -> int:
        """Deliver what is due by ``now`` (default: the current time); how many were delivered."""
        at = time.time() if now is None else now
        sent = 0
        for person in await self.pending.due(at, limit=SCAN_LIMIT):
            lease = await self.pending.claim(person, at=at)
            if lease is None:
                continue  # another scanner has them
            delivered, busy = await self._deliver(person, at)
            sent += delivered
            retry_at = at + keys.PENDING_DELIVERY_RETRY_S if busy else at
            await self.pending.release(person, lease=lease, retry_at=retry_at)
        return sent

    async def _deliver(self, person: str, at: float) -> tuple[int, bool]:
        """Deliver a claimed person's queue in order: (how many, whether the channel stopped it)."""
        sent = 0
        for _ in range(keys.PENDING_DELIVERIES_MAX):
            delivery = await self.pending.first(person)
            if delivery is None:
                break
            if not delivery.dedup_id or at - delivery.queued_at > keys.PENDING_DELIVERY_MAX_AGE_S:
                log.error("gave up delivering %s to %s: still refused", delivery.dedup_id, person)
                await self.pending.done(delivery)
                continue
            if await self.pending.behalf_erased(delivery):
                log.info("dropped %s to %s: its sender's data was erased", delivery.dedup_id, person)
                await self.pending.done(delivery)
                continue
            try:
                await self._send(delivery)
            except Exception as exc:
                if worth_retrying(exc):
                    log.warning("delivering %s to %s: %s; trying again later", delivery.dedup_id, person, exc)
                    return sent, True
                log.error("gave up delivering %s to %s: %s", delivery.dedup_id, person, exc)
            else:
                sent += 1
            await self.pending.done(delivery)
        return sent, False

    async def _send(self, delivery: PendingDelivery) -> None:
        await self.inviter.deliver(
            delivery.user_id, delivery.text, dedup_id=delivery.dedup_id, on_behalf_of=delivery.on_behalf_of
        )
