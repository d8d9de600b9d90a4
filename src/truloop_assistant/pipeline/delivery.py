"""Delivering a conversation's outbox, in order, for as long as the channel is down.

Each message was written by a step that already ran: delivering it never runs the model again. A
failed send leaves it at the head of the outbox and the drain schedules the next try (backoff from
``RETRY_BASE_S`` to ``RETRY_CAP_S``, so a message goes out within about half a minute of the
channel's return); the conversation's later events wait behind it — except behind an update of a
request's message, which is only a courtesy to the devices: it waits at the back instead. A text
longer than the channel takes goes out as consecutive messages, one part at a time (the outbox keeps
what is left, so a part is neither lost nor sent twice when a send fails between parts). A message
the channel refuses for good (a 4xx other than 429), or one still undelivered after
``GIVE_UP_AFTER_S``, leaves the outbox as a dead letter with the channel's reason (``inspect`` and
``dead-letters list`` show it); the conversation goes on. The end of a streamed answer updates the
messages it grew in (each update safe to repeat), no sooner than its interval after the last one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..channels.base import Channel, ChannelSendError, StreamingChannel
from ..channels.parts import DEFAULT_MAX_CHARS, first_part, part_dedup_id, split_text
from ..i18n import texts
from ..protocol.device_methods import answered_by_person
from ..store.conversation_failures import ConversationFailures
from ..store.outbox import (
    DeliveryFailure,
    Item,
    Outbox,
    Peeked,
    RpcMessage,
    RpcOut,
    SettleOut,
    StreamOut,
    TextOut,
)
from ..store.streamed import StreamedMessages

log = logging.getLogger(__name__)

RETRY_BASE_S = 1.0
RETRY_CAP_S = 30.0
MAX_FINAL_WAIT_S = 60.0
"""The longest a streamed answer's final update waits for its interval (the setting's own bound)."""
GIVE_UP_AFTER_S = 6 * 3600
"""A channel outage longer than this loses the answer (logged); shorter ones lose nothing."""


def retry_delay(failures: int) -> float:
    """Seconds before the next try after ``failures`` failed deliveries in a row."""
    return min(RETRY_CAP_S, RETRY_BASE_S * 2 ** max(0, failures - 1))


@dataclass(frozen=True)
class Delivery:
    """How a delivery went: ``retry_in`` seconds until the next try (None: the outbox is empty), and
    whether what is left holds up the conversation (an answer or a request) or not (only updates);
    ``asked``: it sent a device a request the device answers by itself (any but a person's dialog)."""

    retry_in: float | None
    blocking: bool
    asked: bool = False


class Deliverer:
    def __init__(
        self,
        outbox: Outbox,
        channel: Channel,
        *,
        max_message_chars: int = DEFAULT_MAX_CHARS,
        failures: ConversationFailures | None = None,
        streamed: StreamedMessages | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.outbox = outbox
        self.channel = channel
        self.max_message_chars = max_message_chars
        self.failures = failures
        """Where a message given up is kept as a dead letter (None: only logged)."""
        self.streamed = streamed
        """Where the ids of streamed messages are kept: forgotten once their step's end is delivered."""
        self.clock = clock
        self._updates_wait: dict[str, float] = {}
        """Channel -> until when its updates are not tried (one just failed): answers go first."""

    async def deliver(self, channel_url: str, *, peeked: Peeked | None = None) -> Delivery:
        """Send the outbox, oldest first, until it is empty or the channel fails (``peeked``: its oldest
        message, when the caller read it just before).

        An update of a request's message that cannot go out now waits at the back: the messages
        behind it (and the conversation's next events) do not wait for it.
        """
        if self._updates_wait.get(channel_url, float("inf")) <= self.clock():
            del self._updates_wait[channel_url]  # its wait is over (and the map stays small)
        head = await self.outbox.head(channel_url) if peeked is None else peeked.item
        held: set[bytes] = set()
        asked = False
        while head is not None:
            raw, item = head
            if raw in held:  # what is left are updates that cannot go out now: try them later
                wait = self._updates_wait.get(channel_url, 0.0) - self.clock()
                return Delivery(retry_in=max(wait, RETRY_BASE_S), blocking=False)
            if isinstance(item, SettleOut) and self._updates_wait.get(channel_url, 0.0) > self.clock():
                held.add(raw)
                head = await self.outbox.to_back(channel_url, raw)
                continue
            if isinstance(item, TextOut):
                first, rest = first_part(item.text, self.max_message_chars)
                if rest:  # too long for one message: its first part goes now, the rest behind it
                    index = item.part or 0
                    head = await self.outbox.split(
                        channel_url,
                        raw,
                        item.model_copy(update={"text": first, "part": index}),
                        item.model_copy(update={"text": rest, "part": index + 1}),
                    )
                    continue
            note: RpcMessage | None = None
            try:
                note = await self._send(channel_url, item)
            except ChannelSendError as exc:
                age = self.clock() - item.created_at
                if exc.already_delivered:
                    log.info(
                        "%s in %s was delivered before (dedup_id=%s)", item.kind, channel_url, item.dedup_id
                    )
                elif exc.retryable and age < GIVE_UP_AFTER_S:
                    failure = DeliveryFailure(
                        _sent_as(item), str(exc), status=exc.status, code=exc.code, at=self.clock()
                    )
                    delay = retry_delay(await self.outbox.failed(channel_url, failure))
                    log.warning(
                        "could not deliver to %s for %.0f s (%s); next try in %.0f s (dedup_id=%s)",
                        channel_url,
                        age,
                        exc,
                        delay,
                        item.dedup_id,
                    )
                    if not isinstance(item, SettleOut):
                        return Delivery(retry_in=delay, blocking=True)
                    self._updates_wait[channel_url] = self.clock() + delay
                    continue  # the same update is at the head: held and moved back above
                else:
                    log.error(
                        "dropping %s for %s after %.0f s, kept as a dead letter: %s (dedup_id=%s)",
                        item.kind,
                        channel_url,
                        age,
                        exc,
                        item.dedup_id,
                    )
                    await self._keep(channel_url, raw, item, exc)
            if isinstance(item, SettleOut):
                self._updates_wait.pop(channel_url, None)
            elif isinstance(item, RpcOut) and not answered_by_person(item.request.method):
                asked = True
            head = await self.outbox.pop(channel_url, raw, note=note)
        return Delivery(retry_in=None, blocking=False, asked=asked)

    async def _send(self, channel_url: str, item: Item) -> RpcMessage | None:
        """Send one message; what to note of a request's message id as it leaves the outbox."""
        match item:
            case TextOut(text=text, dedup_id=dedup_id, part=part):
                sent_as = dedup_id if part is None else part_dedup_id(dedup_id, part)
                await self.channel.send_text(channel_url, text, dedup_id=sent_as)
            case RpcOut(request=request, notification=notification, dedup_id=dedup_id, recipient=recipient):
                message_id = await self.channel.send_rpc(
                    item.channel_url or channel_url,
                    request,
                    notification=notification,
                    dedup_id=dedup_id,
                    recipient=recipient,
                )
                if message_id is not None:  # the update of its request names it (and its channel)
                    return RpcMessage(request.id, message_id, item.channel_url)
            case StreamOut():
                await self._finish_stream(channel_url, item)
            case SettleOut():
                return await self._settle(channel_url, item)
        return None

    async def _finish_stream(self, channel_url: str, item: StreamOut) -> None:
        """Give a streamed answer's messages their final text (``data`` streaming false), in parts as a
        long text is sent: each streamed message updated in place, parts past them posted, streamed
        messages past the parts (left by an earlier run of the step) deleted. Every call is safe to
        repeat, so a delivery cut short is simply done again."""
        channel = self.channel
        if not isinstance(channel, StreamingChannel):
            raise ChannelSendError(f"{type(channel).__name__} cannot update messages", retryable=False)
        if (wait := item.not_before - self.clock()) > 0:  # one update per interval, the last one too
            await asyncio.sleep(min(wait, MAX_FINAL_WAIT_S))
        parts = split_text(item.text, self.max_message_chars) if item.text else []
        for index, part in enumerate(parts):
            stopped = item.stopped and index == len(parts) - 1  # the last message says where it stopped
            if index < len(item.message_ids):
                try:
                    await channel.update_streamed(
                        channel_url, item.message_ids[index], part, streaming=False, stopped=stopped
                    )
                    continue
                except ChannelSendError as exc:
                    if exc.retryable:
                        raise
                    log.warning(
                        "streamed message %s in %s is gone (%s): posted anew",
                        item.message_ids[index],
                        channel_url,
                        exc,
                    )
            try:
                sent_as = part_dedup_id(item.dedup_id, index)
                await channel.post_streamed(
                    channel_url, part, dedup_id=sent_as, streaming=False, stopped=stopped
                )
            except ChannelSendError as exc:
                if not exc.already_delivered:
                    raise
        for message_id in item.message_ids[len(parts) :]:
            await channel.delete_message(channel_url, message_id)
        if self.streamed is not None and item.turn_id:
            await self.streamed.finished(channel_url, item.turn_id, item.step)

    async def _keep(self, channel_url: str, raw: bytes, item: Item, exc: ChannelSendError) -> None:
        """Keep a message given up as a dead letter, with the channel's code and text."""
        if self.failures is None:
            return
        error = f"{item.kind} not delivered: {exc}"
        await self.failures.add_dead_letter(
            channel_url, raw.decode(), error, eid=f"out:{_sent_as(item)}", code=exc.code
        )

    async def _settle(self, channel_url: str, item: SettleOut) -> RpcMessage | None:
        """Update the call's request message; one that was never delivered (or noted) has none to update."""
        posted = await self.outbox.rpc_message(channel_url, item.call_id)
        if posted is None:
            log.info("no message to update for %s in %s (%s)", item.call_id, channel_url, item.state)
            return None
        data = json.dumps({"id": item.call_id, "state": item.state, "method": item.method})
        await self.channel.settle_rpc(
            posted.channel_url, posted.message_id, data=data, text=settled_text(item)
        )
        return RpcMessage(item.call_id, None)  # updated for good: its id is no longer needed


def _sent_as(item: Item) -> str:
    """The ``dedup_id`` the message is sent under (a part's own)."""
    if isinstance(item, TextOut) and item.part is not None:
        return part_dedup_id(item.dedup_id, item.part)
    return item.dedup_id


_SETTLED_TEXTS = {
    "answered": texts.CALL_ANSWERED,
    "expired": texts.CALL_EXPIRED,
    "superseded": texts.CALL_SUPERSEDED,
    "cancelled": texts.CALL_CANCELLED,
}


def settled_text(item: SettleOut) -> str:
    """What a settled request's message says, in the language of the turn that asked."""
    return _SETTLED_TEXTS[item.state](item.lang)
