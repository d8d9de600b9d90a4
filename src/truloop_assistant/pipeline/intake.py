"""Accepting work for a conversation: a user message (de-duplicated on its id) or a resume."""

from __future__ import annotations

import logging
from typing import Literal

from redis.asyncio.cluster import RedisCluster

from ..channels.base import InboundMessage
from ..errors import ServiceUnavailable
from ..logs import log_context
from ..store.drains import Drains
from ..store.inbox import Inbox, MessageEvent, PushStatus, ResumeEvent
from ..store.reads import Batch, run_writes
from ..store.transcript import Line
from ..store.turn_writes import channel_writes
from ..tracing import current_traceparent
from .queue import TurnQueue

log = logging.getLogger(__name__)


def line_of(message: InboundMessage, *, turn: bool = False) -> Line:
    """The person's message as a line of its channel's transcript, with its message id (so that a
    deletion can take it out again); the files it carries are named, never shown."""
    sent = ", ".join(f.name or "a file" for f in message.files)
    text = f"{message.text} (sent {sent})".strip() if sent else message.text
    return Line(user_id=message.user_id, text=text, turn=turn, message_id=message.message_id)


def message_of(channel_url: str, event: MessageEvent) -> InboundMessage:
    """The message a queued event is, with the files it carries."""
    return InboundMessage(
        message_id=event.message_id,
        channel_url=channel_url,
        user_id=event.user_id,
        text=event.text,
        files=tuple(event.files or ()),
        sender_name=event.name,
    )


class Intake:
    def __init__(self, inbox: Inbox, drains: Drains, queue: TurnQueue) -> None:
        self.inbox = inbox
        self.drains = drains
        self.queue = queue

    async def message(
        self, message: InboundMessage, *, undecided: bool = False
    ) -> Literal["queued", "duplicate", "dropped"]:
        """Queue the message's turn; ``undecided``: whether it is one is for the worker to find out."""
        event = MessageEvent(
            message_id=message.message_id,
            user_id=message.user_id,
            text=message.text,
            files=list(message.files) or None,
            name=message.sender_name,
            trace=current_traceparent(),
            undecided=undecided,
        )
        # The turn's own words are part of what the channel said: kept with the event, when queued
        # (an undecided message's, by the worker once it knows whom it was for).
        said = None if undecided else line_of(message, turn=True)
        status = await self._push(
            message.channel_url, event, dedup_id=message.message_id, said=said, sender=message.user_id
        )
        if status == "full":
            with log_context(channel=message.channel_url):
                log.warning(
                    "conversation %s has too many waiting messages; dropped %s",
                    message.channel_url,
                    message.message_id,
                )
            return "dropped"
        return "duplicate" if status == "duplicate" else "queued"

    async def resume(self, channel_url: str, turn_id: str) -> None:
        event = ResumeEvent(turn_id=turn_id, trace=current_traceparent())
        await self._push(channel_url, event, dedup_id=None)

    async def deliver(self, channel_url: str) -> None:
        """Make sure a drain delivers what was just put in the conversation's outbox.

        Best effort: should the job not be queued, the conversation's watch brings a drain later.
        """
        try:
            await self.drains.watch(channel_url, sooner=True)
            owner = await self.drains.take_over(channel_url)
            if owner is not None:
                await self.queue.drain(channel_url, owner)
        except Exception:
            with log_context(channel=channel_url):
                log.warning("could not queue a delivery for %s; it is watched", channel_url, exc_info=True)

    async def _push(
        self,
        channel_url: str,
        event: MessageEvent | ResumeEvent,
        *,
        dedup_id: str | None,
        said: Line | None = None,
        sender: str | None = None,
    ) -> PushStatus:
        """Push ``event``; ``sender``: the person whose message it is, whose list of channels (to
        erase their data on request) names this one from now on."""
        status, owner = await self._watch_and_push(
            channel_url, event, dedup_id=dedup_id, said=said, sender=sender
        )
        if owner is not None:
            try:
                await self.queue.drain(channel_url, owner)
            except Exception as exc:
                # Undo, so that the sender's retry (a service re-sends, a device retries) gets queued.
                await self.inbox.undo_push(channel_url, event, owner, dedup_id=dedup_id, said=said)
                log.exception("could not queue work for %s", channel_url)
                raise ServiceUnavailable("the turn could not be queued; retry later") from exc
        return status

    async def _watch_and_push(
        self,
        channel_url: str,
        event: MessageEvent | ResumeEvent,
        *,
        dedup_id: str | None,
        said: Line | None,
        sender: str | None,
    ) -> tuple[PushStatus, str | None]:
        """Watch the conversation and note it in the sender's channels, then push: should this
        process die before the job is queued, a scanner queues it. On one Redis all go in one round
        trip (a pipeline keeps their order); a Cluster keeps them on different nodes, and the watch
        and the note are awaited first."""
        noted = channel_writes(sender, channel_url) if sender is not None else []
        if isinstance(self.inbox.redis, RedisCluster):
            await self.drains.watch(channel_url, sooner=True)
            if noted:
                await run_writes(self.inbox.redis, noted)
            return await self.inbox.push(channel_url, event, dedup_id=dedup_id, said=said)
        batch = Batch(self.inbox.redis)
        batch.write(self.drains.watch_write(channel_url, sooner=True))
        for write in noted:
            batch.write(write)
        pushed = batch.add(self.inbox.push_read(channel_url, event, dedup_id=dedup_id, said=said))
        await batch.run()
        return pushed.value
