"""Delivering what the assistant itself tells people about events, in their 1:1 channel with it.

Invitations, reminders and cancellations are posted the way relayed messages are: the relay gives
the bot's direct channel with the person (created if missing), the channel carries the text, and a
``dedup_id`` per event and person keeps a repeated send from showing twice. What the channel cannot take
yet (a 429, a 5xx, no answer, even after the channel's own retries) waits in Redis for the delivery
scan (:mod:`~truloop_assistant.runtime.deliveries`), behind anything already waiting for that person.
"""

from __future__ import annotations

import logging
import time

from pydantic_ai.messages import ModelRequest, UserPromptPart

from ..channels.base import Channel, ChannelSendError
from ..channels.pacing import background
from ..channels.relay import ChannelJoinLimit, NoSuchUser, Relay, RelayError
from ..i18n import Language, language_of
from ..store import keys
from ..store.history import History
from ..store.invitation_counts import InvitationCounts
from ..store.pending_deliveries import PendingDeliveries, PendingDelivery
from ..store.transcript import ASSISTANT, Line, Transcript

log = logging.getLogger(__name__)


def worth_retrying(exc: BaseException) -> bool:
    """Whether a failed delivery may go through later: the channel was busy (429), failing (5xx) or silent.
    A refusal (no such user, the channel-join limit, any other 4xx) is final."""
    if isinstance(exc, NoSuchUser | ChannelJoinLimit):
        return False
    if isinstance(exc, RelayError):
        return exc.status is None or exc.status == 429 or exc.status >= 500
    return isinstance(exc, ChannelSendError) and exc.retryable


class DirectInviter:
    """The :class:`~truloop_assistant.tools.agent_deps.Inviter` on the bot's direct channels."""

    def __init__(
        self,
        *,
        relay: Relay,
        channel: Channel,
        history: History,
        transcript: Transcript | None = None,
        pending: PendingDeliveries | None = None,
        counts: InvitationCounts | None = None,
    ) -> None:
        self.relay = relay
        self.counts = counts
        """How many people each organizer invited lately (None: not counted)."""
        self.pending = pending
        """Where deliveries the channel cannot take yet wait; without it they fail at once."""
        self.channel = channel
        self.history = history
        self.transcript = transcript

    async def known_language(self, user_id: str) -> Language | None:
        """The language of the person's last message to the assistant in their direct channel, when
        that channel is known: nothing is looked up or made to learn it (an event with many people
        must not cost a channel each before it is even stored)."""
        channel_url = await self.relay.known_channel(user_id)
        if channel_url is None:
            return None
        messages = await self.history.load(channel_url, user_id)
        for message in reversed(messages):
            if not isinstance(message, ModelRequest):
                continue
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return language_of(part.content)
        return None

    async def deliver(
        self, user_id: str, text: str, *, dedup_id: str, on_behalf_of: str | None = None
    ) -> None:
        with background():  # after what people in a conversation wait for
            channel_url = await self.relay.direct_channel(user_id)
            await self.channel.send_text(channel_url, text, dedup_id=dedup_id)
        if self.transcript is not None:  # so the person's next turn there knows what they answer
            line = Line(user_id=ASSISTANT, text=text, on_behalf_of=on_behalf_of)
            await self.transcript.add_once(channel_url, line)
        log.info("told %s about an event in %s (%s)", user_id, channel_url, dedup_id.split(":", 1)[0])

    async def invited_lately(self, organizer: str) -> int:
        """People the organizer's events invited in the last hour or so."""
        return 0 if self.counts is None else await self.counts.lately(organizer)

    async def note_invited(self, organizer: str, people: int) -> None:
        if self.counts is not None and people > 0:
            await self.counts.add(organizer, people)

    async def exists(self, user_id: str) -> bool:
        """Whether the person is a user of the channel (a read; nothing is made)."""
        return await self.relay.exists(user_id)

    async def queue(self, user_id: str, text: str, *, dedup_id: str, on_behalf_of: str | None = None) -> bool:
        """Keep it for the delivery scan to send, due now, behind what already waits for the person
        (False); delivered at once (True) where nothing can wait."""
        if self.pending is None:
            await self.deliver(user_id, text, dedup_id=dedup_id, on_behalf_of=on_behalf_of)
            return True
        now = time.time()
        await self.pending.add(PendingDelivery(user_id, text, dedup_id, on_behalf_of, queued_at=now), due=now)
        return False

    async def deliver_or_queue(
        self, user_id: str, text: str, *, dedup_id: str, on_behalf_of: str | None = None
    ) -> bool:
        """Deliver now (True), or queue it for the delivery scan (False): behind what already waits for
        the person, or when the channel is busy or failing. A final refusal is raised as :meth:`deliver`'s."""
        if self.pending is None:
            await self.deliver(user_id, text, dedup_id=dedup_id, on_behalf_of=on_behalf_of)
            return True
        now = time.time()
        due = now
        if not await self.pending.waiting(user_id):
            try:
                await self.deliver(user_id, text, dedup_id=dedup_id, on_behalf_of=on_behalf_of)
                return True
            except Exception as exc:
                if not worth_retrying(exc):
                    raise
                log.warning("queued %s for %s: %s", dedup_id.split(":", 1)[0], user_id, exc)
                due = now + keys.PENDING_DELIVERY_RETRY_S
        delivery = PendingDelivery(user_id, text, dedup_id, on_behalf_of, queued_at=now)
        await self.pending.add(delivery, due=due)
        return False
