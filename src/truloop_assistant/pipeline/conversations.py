"""Draining a conversation's inbox: its events run one at a time, in arrival order.

A person's messages waiting in a row are handed out together (``store.inbox``): one turn, the first's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import replace

from .. import tracing
from ..agent.runner import TurnRunner
from ..channels.base import InboundMessage
from ..i18n import language_of, texts
from ..logs import log_context
from ..metrics import DEAD_LETTERS
from ..store.drains import Drains
from ..store.inbox import EVENT, WAIT, Consumed, Inbox, MessageEvent, Next, ResumeEvent
from ..store.ledger import Ledger
from ..store.outbox import Peeked, StreamOut
from ..store.streamed import StreamedMessages
from .delivery import Deliverer, Delivery
from .intake import message_of
from .typing_indicator import Typing

log = logging.getLogger(__name__)

MAX_EVENT_ATTEMPTS = 3
"""An event that crashed its worker this many times is dropped, so it cannot block the conversation."""

STOP_WAITING_S = 1.0
"""How long a drain stopped while waiting tries to let go of its conversation (Redis may be down)."""

WAIT_FOR_DEVICE_S = 2.0
"""How long a drain that just sent a device a request it answers by itself (its calendar, a
permission; not a person's dialog) keeps the conversation for the answer: a phone that answers
within it has its turn resumed by the same drain, without a new job. It holds a turn slot, not CPU."""


class ConversationDrainer:
    """Drains conversations with the collaborators it is given (``Services.drainer`` builds them)."""

    def __init__(
        self,
        *,
        inbox: Inbox,
        drains: Drains,
        runner: TurnRunner,
        deliverer: Deliverer,
        typing: Typing,
        ledger: Ledger,
        heartbeat_s: float,
        audience: Callable[[InboundMessage], Awaitable[bool]] | None = None,
        streamed: StreamedMessages | None = None,
    ) -> None:
        """``audience``: whether an undecided message (its delivery did not say) is a turn; without
        it, every message is."""
        self.audience = audience
        self.streamed = streamed
        """The ids of streamed messages: a turn given up finishes its half message (None: no streaming)."""
        self.inbox = inbox
        self.drains = drains
        self.runner = runner
        self.deliverer = deliverer
        self.typing = typing
        self.ledger = ledger
        self.heartbeat_s = heartbeat_s
        self._early: dict[str, asyncio.Task[Delivery | None]] = {}
        """Deliveries beside a step, by channel: a request's update that was next to go out when the
        step began, or one that arose in the middle of it (a superseded request's)."""
        runner.calls_settled = self._deliver_soon
        runner.text_shown = typing.stop  # a streamed answer shows: no more typing

    async def drain(
        self, channel_url: str, owner: str, *, touch: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        """:meth:`_drain`, every line it logs (and the tasks it starts) marked with the channel."""
        with log_context(channel=channel_url):
            await self._drain(channel_url, owner, touch=touch)

    async def _drain(
        self, channel_url: str, owner: str, *, touch: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        """Deliver what earlier steps sent, then run the conversation's events until its inbox is empty
        (after sending a device a request, until the device's answer too, for ``WAIT_FOR_DEVICE_S``).

        Only while ``owner`` holds the claim. When the channel is down, the claim is given up and the
        conversation is watched for the next try; its events wait, in order.
        """
        claim = await self.inbox.claim(channel_url, owner)
        if claim is None or claim.idle:
            return  # another live worker owns it and will run our event too; or nothing is left
        peeked: Peeked | None = claim.outbox  # read with the claim: the first delivery need not read it
        first: Next | None = claim.first  # handed out with the claim when the outbox was empty
        lost, finished = asyncio.Event(), asyncio.Event()
        keeper = asyncio.create_task(self._keep_claim(channel_url, owner, lost, finished, touch))
        step: tracing.Step | None = None  # the step whose sends are delivered next, when traced
        done: Consumed | None = None  # the event run last (its step may not have taken it off)
        back = False  # back from waiting for a device's answer
        wait_until: float | None = None  # while waiting for a device's answer: until when (loop time)
        clock = asyncio.get_running_loop().time
        try:
            while True:
                # The keeper only refreshes; re-taking a lapsed claim happens here, between events.
                if lost.is_set():
                    if done is not None:
                        await self.inbox.pop(channel_url, done.raw, done.eid, more=done.more)
                        done = None
                    if (claim := await self.inbox.claim(channel_url, owner)) is None:
                        log.warning("lost the claim on %s; another worker took over", channel_url)
                        return
                    if claim.idle:
                        return
                    # A delivery beside the last step may have sent what the claim saw since.
                    peeked = None if channel_url in self._early else claim.outbox
                    first = claim.first
                    lost.clear()
                with tracing.within(step, "deliver"):
                    delivery = await self._deliver(channel_url, peeked)
                step, peeked = None, None
                if delivery.retry_in is not None and delivery.blocking:
                    if done is not None:
                        await self.inbox.pop(channel_url, done.raw, done.eid, more=done.more)
                    await self.drains.watch(channel_url, after_s=delivery.retry_in)
                    await self.inbox.release(channel_url, owner)
                    return
                if delivery.asked:
                    wait_until = clock() + WAIT_FOR_DEVICE_S
                wait_s = 0.0 if wait_until is None else max(0.0, wait_until - clock())
                nxt = first or await self.inbox.next(channel_url, owner, done=done, wait_s=wait_s, back=back)
                first, back = None, False
                if nxt is None:
                    return  # nothing left, and the claim is given up
                if nxt == WAIT:  # for the device's answer: a push rings, or the wait ends
                    done = None  # taken off the inbox by that step
                    await self._wait(channel_url, owner, wait_s)
                    back = True
                    continue  # what came meanwhile is delivered first (a request's update), then run
                if isinstance(nxt, str):  # DELIVER: only the outbox has something (a request's update)
                    done = None
                    if delivery.retry_in is not None:  # updates that could not go out: later
                        await self.drains.watch(channel_url, after_s=delivery.retry_in)
                        if await self.inbox.release_if_quiet(channel_url, owner):
                            return
                        # An event came in since (a device's last answer): it does not wait for them.
                    continue
                done, wait_until = Consumed(nxt.raw, nxt.eid, more=nxt.more), None
                if nxt.starts > MAX_EVENT_ATTEMPTS:
                    done.more = ()  # the messages gathered behind it run on, without it
                    await self._give_up(channel_url, nxt.eid, nxt.raw)
                    continue
                event = EVENT.validate_json(nxt.raw)
                try:
                    step = await self._run(channel_url, event, done)
                    peeked = done.outbox  # read by the step's own transaction (None: it had none)
                except Exception as exc:
                    with suppress(Exception):  # for operators; the retry must not depend on it
                        await self.ledger.note_failure(channel_url, event.eid, repr(exc))
                    raise
        finally:
            self.typing.stop(channel_url)  # given up (channel down, claim lost, crash): not typing either
            with suppress(Exception):
                await self._settle_early(channel_url)
            finished.set()
            keeper.cancel()
            with suppress(asyncio.CancelledError):
                await keeper

    async def _wait(self, channel_url: str, owner: str, wait_s: float) -> None:
        """Wait for the device's answer (or anything else for the conversation) up to ``wait_s``. A
        drain stopped meanwhile (a deploy, a shutdown) lets go of the conversation at once, not once
        its claim expires: nothing of it is running."""
        try:
            await self.inbox.wait(channel_url, wait_s)
        except asyncio.CancelledError:
            with suppress(Exception):
                await asyncio.wait_for(self.inbox.stop_waiting(channel_url, owner), STOP_WAITING_S)
            raise

    def _deliver_soon(self, channel_url: str, peeked: Peeked | None = None) -> None:
        """Deliver the outbox beside the running step (it is the drain's, which is ours)."""
        if channel_url not in self._early:
            self._early[channel_url] = asyncio.create_task(self._deliver_early(channel_url, peeked))

    async def _deliver_early(self, channel_url: str, peeked: Peeked | None) -> Delivery | None:
        try:
            return await self.deliverer.deliver(channel_url, peeked=peeked)
        except Exception:  # the drain delivers it after the step, retries and all
            log.warning("could not deliver %s's updates during its step", channel_url, exc_info=True)
            return None

    async def _settle_early(self, channel_url: str) -> Delivery | None:
        """Wait for a delivery started beside the step: the outbox has one sender at a time. What it
        did, or None when there was none (or it failed)."""
        if (early := self._early.pop(channel_url, None)) is None:
            return None
        return await early

    async def _deliver(self, channel_url: str, peeked: Peeked | None) -> Delivery:
        """Send what earlier steps left in the outbox (the typing stops once nothing holds it up).

        When all that waits is requests' updates (a device answered: every device closes the
        request's dialog), nobody waits for them: they go out beside the next step instead of before
        it, so a resumed turn does not wait for the channel's round trips. The step's own messages
        queue behind them, in order, and the next delivery waits for them.
        """
        early, beside = None, True
        if channel_url in self._early:
            early = await self._settle_early(channel_url)
            if peeked is not None and peeked.is_update:
                # Read while that delivery went on: it may have sent it since. Anything else read at
                # the head came after what it sent (it starts with updates only, and keeps the order).
                peeked = None
            if early is not None and early.blocking:
                return early  # an answer or a request could not go out: it holds the conversation up
            # One that failed, or left updates it could not send, is not tried beside the next step
            # again: the rest goes out now, and what still cannot waits for its next try.
            beside = early is not None and early.retry_in is None
        if beside and (peeked is None or peeked.is_update):
            peeked, updates_only = await self.deliverer.outbox.updates_only(channel_url)
            if updates_only:
                self._deliver_soon(channel_url, peeked)
                return Delivery(retry_in=None, blocking=False, asked=early is not None and early.asked)
        delivery = await self.deliverer.deliver(channel_url, peeked=peeked)
        if early is not None and early.asked and not delivery.asked:
            delivery = replace(delivery, asked=True)  # a request the step sent went out beside it
        if not delivery.blocking and not delivery.asked:
            # The last step's answer, or a person's dialog, is out. A request the device answers by
            # itself keeps the bot typing while the drain waits for the answer: the turn shows one
            # typing indicator, and a wait that ends (the drain lets go) stops it.
            self.typing.stop(channel_url)
        return delivery

    async def _give_up(self, channel_url: str, eid: str, raw: bytes) -> None:
        """An event that failed every attempt is kept, with the last error, and counted: not only logged."""
        log.error("dropping event %s of %s after %d attempts", eid, channel_url, MAX_EVENT_ATTEMPTS)
        DEAD_LETTERS.inc()
        last = await self.ledger.last_failure(channel_url)
        error = last["error"] if last and last.get("event") == eid else "unknown (a worker died during it)"
        await self.ledger.add_dead_letter(
            channel_url,
            raw.decode(errors="replace"),
            f"given up after {MAX_EVENT_ATTEMPTS} attempts: {error}",
            eid=eid,
        )
        with suppress(Exception):  # the dead letter is kept: the rest is a courtesy
            await self._finish_streamed(channel_url, EVENT.validate_json(raw))

    async def _finish_streamed(self, channel_url: str, event: MessageEvent | ResumeEvent) -> None:
        """A turn given up mid-answer: the message it was streaming into says the turn failed."""
        if self.streamed is None:
            return
        if isinstance(event, MessageEvent):
            turn_id, language = f"m{event.message_id}", language_of(event.text)
        else:
            turn_id, language = event.turn_id, language_of("")
        steps = await self.streamed.unfinished(channel_url, turn_id)
        items = [
            StreamOut(
                text=texts.SERVER_ERROR(language),
                message_ids=ids,
                dedup_id=f"{turn_id}:{step}:stream-given-up",
                turn_id=turn_id,
                step=step,
            )
            for step, ids in steps.items()
        ]
        if items:
            log.warning("turn %s in %s was given up mid-answer: its message says so", turn_id, channel_url)
            await self.deliverer.outbox.add(channel_url, items)

    async def _run(
        self, channel_url: str, event: MessageEvent | ResumeEvent, consumed: Consumed
    ) -> tracing.Step | None:
        """Run one event in its ``turn`` span; returns the span's context, for delivering its sends.

        An undecided message is run only once its channel's look-up says it is a turn.
        """
        if isinstance(event, MessageEvent) and event.undecided and self.audience is not None:
            if not await self.audience(message_of(channel_url, event)):
                return None  # taken off the inbox by the next step of the drain
        with await self._turn_step(channel_url, event) as step:
            self.typing.start(channel_url)  # in the background: the step does not wait for it
            match event:
                case ResumeEvent(turn_id=turn_id):
                    await self.runner.resume(channel_url, turn_id, consumed)
                case MessageEvent():
                    follow_ups = _follow_ups(channel_url, consumed)
                    await self.runner.handle_message(
                        message_of(channel_url, event), consumed, follow_ups=follow_ups
                    )
        return step

    async def _turn_step(
        self, channel_url: str, event: MessageEvent | ResumeEvent
    ) -> AbstractContextManager[tracing.Step | None]:
        """The step's span: a message continues the webhook's trace, a resume its paused turn's."""
        if not tracing.enabled():
            return nullcontext()
        user_id: str | None
        if isinstance(event, MessageEvent):
            message = InboundMessage(
                message_id=event.message_id, channel_url=channel_url, user_id=event.user_id, text=""
            )
            turn_id, user_id = message.turn_id, event.user_id
            parent, link = event.trace, None
        else:
            turn_id, link = event.turn_id, event.trace
            parent, user_id = await self.runner.store.trace_of(channel_url, turn_id)
        return tracing.turn_step(
            event.kind, channel_url=channel_url, turn_id=turn_id, user_id=user_id, parent=parent, link=link
        )

    async def _keep_claim(
        self,
        channel_url: str,
        owner: str,
        lost: asyncio.Event,
        finished: asyncio.Event,
        touch: Callable[[], Awaitable[None]] | None,
    ) -> None:
        # Ends on ``finished`` as well as on cancellation: a cancel that lands inside a Redis call can be
        # swallowed by the client, and a keeper that went on would hold its drain (and job) forever.
        while not finished.is_set():
            await asyncio.sleep(self.heartbeat_s / 3)
            try:
                if not await self.inbox.refresh(channel_url, owner):
                    lost.set()
                if touch is not None:
                    await touch()
            except Exception:
                if finished.is_set():
                    return
                log.exception("heartbeat for %s failed", channel_url)


def _follow_ups(channel_url: str, consumed: Consumed) -> list[InboundMessage]:
    """The same person's messages gathered behind the event, in order (only messages are gathered)."""
    events = (EVENT.validate_json(raw) for raw, _ in consumed.more)
    return [message_of(channel_url, e) for e in events if isinstance(e, MessageEvent)]
