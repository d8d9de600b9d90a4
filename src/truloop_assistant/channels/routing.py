"""One channel, relay and member list for the whole server, routing each conversation by its namespace.

The pipeline, the agent and the stores hold one :class:`~.base.Channel`, one :class:`~.relay.Relay`
and one :class:`~.members.Members`; these route each call to what carries the conversation
(:mod:`.addresses`): the chat service (Sendbird, or the dev channel) for chat users' channels,
SMS for ``sms:`` conversations, the guest page for ``page:`` ones. A conversation whose channel
this deployment does not run (SMS off) fails as a channel that refuses for good: nothing is retried.
"""

from __future__ import annotations

from ..protocol import addresses
from ..protocol.jsonrpc import JsonRpcRequest
from .base import Capabilities, Channel, ChannelSendError, StreamingChannel
from .members import Members, Roster
from .relay import NoSuchUser, Relay


class RoutingChannel:
    """The chat service's channel for chat conversations; ``others`` for the other namespaces."""

    def __init__(self, chat: Channel, others: dict[addresses.Namespace, Channel] | None = None) -> None:
        self.chat = chat
        self.others = dict(others or {})

    def route(self, channel_url: str) -> Channel:
        """What carries the conversation; raises :class:`ChannelSendError` (final) when nothing does."""
        kind = addresses.namespace(channel_url)
        if kind == "chat":
            return self.chat
        if (channel := self.others.get(kind)) is None:
            raise ChannelSendError(f"this server does not run the {kind} channel", retryable=False)
        return channel

    def capabilities(self, channel_url: str) -> Capabilities:
        try:
            return self.route(channel_url).capabilities(channel_url)
        except ChannelSendError:  # nothing carries it: nothing can be done in it either
            return Capabilities(devices=False, streams=False, updates=False, typing=False)

    async def send_text(self, channel_url: str, text: str, *, dedup_id: str) -> None:
        await self.route(channel_url).send_text(channel_url, text, dedup_id=dedup_id)

    async def send_rpc(
        self,
        channel_url: str,
        request: JsonRpcRequest,
        *,
        notification: str,
        dedup_id: str,
        recipient: str = "",
    ) -> int | None:
        return await self.route(channel_url).send_rpc(
            channel_url, request, notification=notification, dedup_id=dedup_id, recipient=recipient
        )

    async def settle_rpc(self, channel_url: str, message_id: int, *, data: str, text: str) -> None:
        await self.route(channel_url).settle_rpc(channel_url, message_id, data=data, text=text)

    async def typing_started(self, channel_url: str) -> bool | None:
        if not self.capabilities(channel_url).typing:
            return False
        return await self.route(channel_url).typing_started(channel_url)

    async def typing_stopped(self, channel_url: str) -> bool | None:
        if not self.capabilities(channel_url).typing:
            return False
        return await self.route(channel_url).typing_stopped(channel_url)

    # Streaming: only where the conversation's channel streams (the step asks ``capabilities`` first).
    def _streaming(self, channel_url: str) -> StreamingChannel:
        channel = self.route(channel_url)
        if not isinstance(channel, StreamingChannel):
            raise ChannelSendError(f"{type(channel).__name__} cannot update messages", retryable=False)
        return channel

    async def post_streamed(
        self, channel_url: str, text: str, *, dedup_id: str, streaming: bool, stopped: bool = False
    ) -> int | None:
        return await self._streaming(channel_url).post_streamed(
            channel_url, text, dedup_id=dedup_id, streaming=streaming, stopped=stopped
        )

    async def update_streamed(
        self, channel_url: str, message_id: int, text: str, *, streaming: bool, stopped: bool = False
    ) -> bool:
        return await self._streaming(channel_url).update_streamed(
            channel_url, message_id, text, streaming=streaming, stopped=stopped
        )

    async def delete_message(self, channel_url: str, message_id: int) -> None:
        await self._streaming(channel_url).delete_message(channel_url, message_id)


class RoutingRelay:
    """A person's direct conversation with the assistant: their SMS for a person reached by phone
    (when this server texts), the chat service's 1:1 channel for everyone else."""

    def __init__(self, chat: Relay, *, sms: bool) -> None:
        self.chat = chat
        self.sms = sms

    async def direct_channel(self, user_id: str) -> str:
        direct = addresses.direct_conversation(user_id)
        if direct is None:
            return await self.chat.direct_channel(user_id)
        if not self.sms:
            raise NoSuchUser(f"{user_id} can be reached only by SMS, which this server does not send")
        return direct

    async def known_channel(self, user_id: str) -> str | None:
        direct = addresses.direct_conversation(user_id)
        if direct is None:
            return await self.chat.known_channel(user_id)
        return direct if self.sms else None

    async def exists(self, user_id: str) -> bool:
        if addresses.phone_of(user_id) is not None:
            return self.sms
        return await self.chat.exists(user_id)


class RoutingMembers:
    """Who is in a conversation: the chat service says for its channels; an SMS or guest-page
    conversation is one person's with the assistant."""

    def __init__(self, chat: Members, *, bot_user_id: str) -> None:
        self.chat = chat
        self.bot_user_id = bot_user_id

    def _alone(self, channel_url: str) -> list[str] | None:
        person = addresses.sms_number(channel_url)
        if person is not None:
            return [addresses.phone_person(person), self.bot_user_id]
        if (page := addresses.page_person(channel_url)) is not None:
            return [page, self.bot_user_id]
        return None

    async def of(self, channel_url: str) -> list[str] | None:
        alone = self._alone(channel_url)
        return alone if alone is not None else await self.chat.of(channel_url)

    async def roster(self, channel_url: str, *, patience_s: float) -> Roster | None:
        alone = self._alone(channel_url)
        if alone is not None:
            return Roster(alone)
        return await self.chat.roster(channel_url, patience_s=patience_s)

    async def listed(self, channel_url: str, ids: list[str], *, supergroup: bool = False) -> None:
        if self._alone(channel_url) is None:
            await self.chat.listed(channel_url, ids, supergroup=supergroup)
