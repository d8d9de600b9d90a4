"""Delivering a relayed message: the notification agent writes it, the relay channel carries it.

The message is written before the confirmation dialog and sent as written after the user's yes.
The writer is a model run of its own, inside a tool call of the turn: it has its own time bound
and request cap, and its requests count in the turn's budget. When it cannot write in time or
within budget, the user's request goes out as it was written (and the tool result says so).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from pydantic_ai import DeferredToolRequests, RunUsage, UsageLimitExceeded, UsageLimits

from ..channels.base import Channel
from ..channels.pacing import background
from ..channels.relay import Relay
from ..store.transcript import ASSISTANT, Line, Transcript
from ..tools.agent_deps import AgentDeps, Relayed, as_requested
from .answering import AnsweredBy, ModelChain

if TYPE_CHECKING:
    from ..backends.users import UserProfile
    from .agents import MemberAgent

log = logging.getLogger(__name__)

COMPOSE_REQUEST_LIMIT = 4
"""Model requests the writer may make for one message (it may look something up first)."""


class Notifier:
    """The :class:`~truloop_assistant.tools.agent_deps.RelayWriter` the server gives the relay tool."""

    def __init__(
        self,
        *,
        agent: MemberAgent,
        relay: Relay,
        channel: Channel,
        timeout_s: float,
        turn_request_limit: int,
        transcript: Transcript | None = None,
        models: ModelChain | None = None,
    ) -> None:
        self.agent = agent
        self.answered_by = AnsweredBy(models)
        """Counts the writer's requests, in the step of the turn whose tool call runs it."""
        self.transcript = transcript
        self.relay = relay
        self.channel = channel
        self.timeout_s = timeout_s
        self.turn_request_limit = turn_request_limit

    async def send(self, *, sender_id: str, recipient: UserProfile, text: str, dedup_id: str) -> None:
        """Post ``text`` as it is in the bot's direct channel with the recipient."""
        with background():  # after what people in a conversation wait for
            channel_url = await self.relay.direct_channel(recipient.user_id)
            await self.channel.send_text(channel_url, text, dedup_id=dedup_id)
        if self.transcript is not None:  # the recipient's reply there is read with it
            line = Line(user_id=ASSISTANT, text=text, on_behalf_of=sender_id)
            await self.transcript.add_once(channel_url, line)
        log.info("relayed a message from %s to %s in %s", sender_id, recipient.user_id, channel_url)

    async def write(
        self, *, sender_name: str, recipient: UserProfile, request: str, deps: AgentDeps, usage: RunUsage
    ) -> Relayed:
        """The message the notification agent writes; the request as written when it cannot."""
        prompt = (
            f"From: {sender_name}\nTo: {recipient.name or recipient.user_id}\nWhat to tell them: {request}"
        )
        limit = min(self.turn_request_limit, usage.requests + COMPOSE_REQUEST_LIMIT)
        as_written = as_requested(sender_name, request)
        try:
            async with asyncio.timeout(self.timeout_s):
                result = await self.agent.run(
                    prompt,
                    deps=replace(deps),
                    usage=usage,
                    usage_limits=UsageLimits(request_limit=limit),
                    capabilities=[self.answered_by],
                )
        except (TimeoutError, UsageLimitExceeded) as exc:
            reason = f"no answer within {self.timeout_s:g} s" if isinstance(exc, TimeoutError) else str(exc)
            log.warning("the relay writer gave up (%s); sending the request as written", reason)
            return as_written
        if isinstance(result.output, DeferredToolRequests):
            # The writer cannot wait for anyone's phone: fall back to the request itself.
            return as_written
        return Relayed(text=result.output, written=True)
