"""Delivering a conversation's outbox, in order, for as long as the channel is down.

Each message was written by a step that already ran: delivering it never runs the model again. A
failed send leaves it at the head of the outbox and the drain schedules the next try (backoff from
``RETRY_BASE_S`` to ``RETRY_CAP_S``, so a message goes out within about half a minute of the
channel's return); the conversation's later events wait behind it. A message the channel refuses
for good (a 4xx other than 429) is logged and dropped; so is one still undelivered after
``GIVE_UP_AFTER_S``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable

from ..channels.base import Channel, ChannelSendError
from ..i18n import texts
from ..store.outbox import Outbox, RpcOut, SettleOut, TextOut

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

    async def _send(self, channel_url: str, item: TextOut | RpcOut | SettleOut) -> None:
        match item:
            case TextOut(text=text, dedup_id=dedup_id):
                await self.channel.send_text(channel_url, text, dedup_id=dedup_id)
            case RpcOut(request=request, notification=notification, dedup_id=dedup_id, recipient=recipient):
                message_id = await self.channel.send_rpc(
                    channel_url, request, notification=notification, dedup_id=dedup_id, recipient=recipient
                )
                if message_id is not None:
                    await self.outbox.delivered_rpc(channel_url, request.id, message_id)
            case SettleOut():
                await self._settle(channel_url, item)

    async def _settle(self, channel_url: str, item: SettleOut) -> None:
        """Update the call's request message; one that was never delivered (or noted) has none to update."""
        message_id = await self.outbox.rpc_message(channel_url, item.call_id)
        if message_id is None:
            log.info("no message to update for %s in %s (%s)", item.call_id, channel_url, item.state)
            return
        data = json.dumps({"id": item.call_id, "state": item.state, "method": item.method})
        await self.channel.settle_rpc(channel_url, message_id, data=data, text=settled_text(item))
        await self.outbox.forget_rpc(channel_url, item.call_id)


_SETTLED_TEXTS = {
    "answered": texts.CALL_ANSWERED,
    "expired": texts.CALL_EXPIRED,
    "superseded": texts.CALL_SUPERSEDED,
    "cancelled": texts.CALL_CANCELLED,
}


def settled_text(item: SettleOut) -> str:
    """What a settled request's message says, in the language of the turn that asked."""
    return _SETTLED_TEXTS[item.state](item.lang)
