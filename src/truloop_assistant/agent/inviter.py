"""Delivering what the assistant itself tells people about events, in their 1:1 channel with it.

Invitations, reminders and cancellations are posted the way relayed messages are: the relay gives
the bot's direct channel with the person (created if missing), the channel carries the text, and a
``dedup_id`` per event and person keeps a repeated send from showing twice.
"""

from __future__ import annotations

import logging

from pydantic_ai.messages import ModelRequest, UserPromptPart

from ..channels.base import Channel
from ..channels.relay import Relay
from ..i18n import Language, language_of
from ..store.history import History
from ..store.transcript import ASSISTANT, Line, Transcript

log = logging.getLogger(__name__)


class DirectInviter:
    """The :class:`~truloop_assistant.tools.agent_deps.Inviter` on the bot's direct channels."""

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

    async def deliver(
        self, user_id: str, text: str, *, dedup_id: str, on_behalf_of: str | None = None
    ) -> None:
        channel_url = await self.relay.direct_channel(user_id)
        await self.channel.send_text(channel_url, text, dedup_id=dedup_id)
        if self.transcript is not None:  # so the person's next turn there knows what they answer
            line = Line(user_id=ASSISTANT, text=text, on_behalf_of=on_behalf_of)
            await self.transcript.add_once(channel_url, line)
        log.info("told %s about an event in %s (%s)", user_id, channel_url, dedup_id.split(":", 1)[0])
