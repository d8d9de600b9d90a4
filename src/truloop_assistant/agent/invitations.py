"""Delivering what the assistant itself tells people about events, in their 1:1 channel with it.

Invitations, reminders and cancellations are posted the way relayed messages are: the relay gives
the bot's direct channel with the person (created if missing), the channel carries the text, and a
``dedup_id`` per event and person keeps a repeated send from showing twice. The server hands the
event tools one object that both relays and invites (:class:`Messenger`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic_ai import RunUsage
from pydantic_ai.messages import ModelRequest, UserPromptPart

from ..channels.base import Channel
from ..channels.relay import Relay
from ..i18n import Language, language_of
from ..store.history import History
from ..store.transcript import ASSISTANT, Line, Transcript
from ..tools.deps import AgentDeps, Inviter, Relayed, RelayWriter

if TYPE_CHECKING:
    from ..backends.users import UserProfile

log = logging.getLogger(__name__)


class DirectInviter:
    """The :class:`~truloop_assistant.tools.deps.Inviter` on the bot's direct channels."""

    def __init__(
        self, *, relay: Relay, channel: Channel, history: History, transcript: Transcript | None = None
    ) -> None:
        self.relay = relay
        self.channel = channel
        self.history = history
        self.transcript = transcript

    async def known_language(self, user_id: str) -> Language | None:
        """The language of the person's last message to the assistant in their direct channel."""
        messages = await self.history.load(await self.relay.direct_channel(user_id), user_id)
        for message in reversed(messages):
            if not isinstance(message, ModelRequest):
                continue
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return language_of(part.content)
        return None

    async def deliver(self, user_id: str, text: str, *, dedup_id: str) -> None:
        channel_url = await self.relay.direct_channel(user_id)
        await self.channel.send_text(channel_url, text, dedup_id=dedup_id)
        if self.transcript is not None:  # so the person's next turn there knows what they answer
            await self.transcript.add_once(channel_url, Line(user_id=ASSISTANT, text=text))
        log.info("told %s about an event in %s (%s)", user_id, channel_url, dedup_id.split(":", 1)[0])


@dataclass(frozen=True)
class Messenger:
    """The relay writer and the inviter in one: what the server gives the tools to reach other people."""

    writer: RelayWriter
    inviter: Inviter

    async def send(
        self,
        *,
        sender_id: str,
        sender_name: str,
        recipient: UserProfile,
        request: str,
        dedup_id: str,
        deps: AgentDeps,
        usage: RunUsage,
    ) -> Relayed:
        return await self.writer.send(
            sender_id=sender_id,
            sender_name=sender_name,
            recipient=recipient,
            request=request,
            dedup_id=dedup_id,
            deps=deps,
            usage=usage,
        )

    async def known_language(self, user_id: str) -> Language | None:
        return await self.inviter.known_language(user_id)

    async def deliver(self, user_id: str, text: str, *, dedup_id: str) -> None:
        await self.inviter.deliver(user_id, text, dedup_id=dedup_id)
