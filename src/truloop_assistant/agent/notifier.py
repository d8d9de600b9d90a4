"""Delivering a relayed message: the notification agent writes it, the relay channel carries it."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from pydantic_ai import DeferredToolRequests, UsageLimits

from ..channels.base import Channel
from ..channels.relay import Relay
from ..tools.deps import AgentDeps

if TYPE_CHECKING:
    from ..backends.users import UserProfile
    from .agents import MemberAgent

log = logging.getLogger(__name__)

COMPOSE_REQUEST_LIMIT = 4
"""Model requests the writer may make for one message (it may look something up first)."""


class Notifier:
    """The :class:`~truloop_assistant.tools.deps.RelayWriter` the server gives the relay tool."""

    def __init__(self, *, agent: MemberAgent, relay: Relay, channel: Channel) -> None:
        self.agent = agent
        self.relay = relay
        self.channel = channel

    async def send(
        self,
        *,
        sender_id: str,
        sender_name: str,
        recipient: UserProfile,
        request: str,
        dedup_id: str,
        deps: AgentDeps,
    ) -> str:
        """Write the message, post it in the bot's direct channel with the recipient; return its text."""
        text = await self.compose(sender_name=sender_name, recipient=recipient, request=request, deps=deps)
        channel_url = await self.relay.direct_channel(recipient.user_id)
        await self.channel.send_text(channel_url, text, dedup_id=dedup_id)
        log.info("relayed a message from %s to %s in %s", sender_id, recipient.user_id, channel_url)
        return text

    async def compose(
        self, *, sender_name: str, recipient: UserProfile, request: str, deps: AgentDeps
    ) -> str:
        prompt = (
            f"From: {sender_name}\nTo: {recipient.name or recipient.user_id}\nWhat to tell them: {request}"
        )
        result = await self.agent.run(
            prompt, deps=replace(deps), usage_limits=UsageLimits(request_limit=COMPOSE_REQUEST_LIMIT)
        )
        if isinstance(result.output, DeferredToolRequests):
            # The writer cannot wait for anyone's phone: fall back to the request itself.
            return f"{sender_name}: {request}"
        return result.output
