"""Delivering a conversation's outbox, in order, for as long as the channel is down.

Each message was written by a step that already ran: delivering it never runs the model again. A
failed send leaves it at the head of the outbox and the drain schedules the next try (backoff from
``RETRY_BASE_S`` to ``RETRY_CAP_S``, so a message goes out within about half a minute of the
channel's return); the conversation's later events wait behind it. A message the channel refuses
for good (a 4xx other than 429) is logged and dropped; so is one still undelivered after
``GIVE_UP_AFTER_S``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from ..channels.base import Channel, ChannelSendError
from ..store.outbox import Outbox, RpcOut, TextOut

log = logging.getLogger(__name__)

RETRY_BASE_S = 1.0
RETRY_CAP_S = 30.0
GIVE_UP_AFTER_S = 6 * 3600
"""A channel outage longer than this loses the answer (logged); shorter ones lose nothing."""


def retry_delay(failures: int) -> float:
    """Seconds before the next try after ``failures`` failed deliveries in a row."""
    return min(RETRY_CAP_S, RETRY_BASE_S * 2 ** max(0, failures - 1))


class Deliverer:
    def __init__(self, outbox: Outbox, channel: Channel, *, clock: Callable[[], float] = time.time) -> None:
        self.outbox = outbox
        self.channel = channel
        self.clock = clock

    async def deliver(self, channel_url: str) -> float | None:
        """Send the outbox, oldest first: None once it is empty, else the seconds until the next try."""
        head = await self.outbox.head(channel_url)
        while head is not None:
            raw, item = head
            try:
                await self._send(channel_url, item)
            except ChannelSendError as exc:
                age = self.clock() - item.created_at
                if exc.already_delivered:
                    log.info(
                        "%s in %s was delivered before (dedup_id=%s)", item.kind, channel_url, item.dedup_id
                    )
                elif exc.retryable and age < GIVE_UP_AFTER_S:
                    delay = retry_delay(await self.outbox.failed(channel_url))
                    log.warning(
                        "could not deliver to %s for %.0f s (%s); next try in %.0f s (dedup_id=%s)",
                        channel_url,
                        age,
                        exc,
                        delay,
                        item.dedup_id,
                    )
                    return delay
                else:
                    log.error(
                        "dropping %s for %s after %.0f s: %s (dedup_id=%s)",
                        item.kind,
                        channel_url,
                        age,
                        exc,
                        item.dedup_id,
                    )
            head = await self.outbox.pop(channel_url, raw)
        return None

    async def _send(self, channel_url: str, item: TextOut | RpcOut) -> None:
        match item:
            case TextOut(text=text, dedup_id=dedup_id):
                await self.channel.send_text(channel_url, text, dedup_id=dedup_id)
            case RpcOut(request=request, notification=notification, dedup_id=dedup_id, recipient=recipient):
                await self.channel.send_rpc(
                    channel_url, request, notification=notification, dedup_id=dedup_id, recipient=recipient
                )
