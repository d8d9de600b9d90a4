"""The channels a deployment talks through, opened as one: the chat service (``TRULOOP_CHANNEL``) and,
beside it, SMS (``TRULOOP_SMS``) and the guest page; where the assistant writes, how it reaches a
person directly, and who is in a conversation, each routed by the conversation's namespace."""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass

from redis.asyncio import Redis

from ..config import Settings
from ..protocol.addresses import Namespace
from ..store.direct_channels import DirectChannels
from .base import Channel
from .local import LocalChannel
from .members import LocalMembers, Members, SendbirdMembers
from .pacing import Pacer
from .page import PageChannel
from .relay import LocalRelay, Relay, SendbirdRelay
from .routing import RoutingChannel, RoutingMembers, RoutingRelay
from .sendbird import SendbirdChannel, platform_client
from .twilio import open_sms


@dataclass(frozen=True)
class MessagingChannel:
    channel: RoutingChannel
    relay: RoutingRelay
    members: RoutingMembers


def open_channel(settings: Settings, redis: Redis, stack: AsyncExitStack) -> MessagingChannel:
    """The chat service's channel with the others beside it, each conversation routed to its own."""
    chat = open_chat(settings, redis, stack)
    others: dict[Namespace, Channel] = {"page": PageChannel(redis)}
    if (sms := open_sms(settings, redis, stack)) is not None:
        others["sms"] = sms
    return MessagingChannel(
        RoutingChannel(chat.channel, others),
        RoutingRelay(chat.relay, sms="sms" in others),
        RoutingMembers(chat.members, bot_user_id=settings.sendbird_bot_user_id),
    )


@dataclass(frozen=True)
class ChatService:
    channel: Channel
    relay: Relay
    members: Members


def open_chat(settings: Settings, redis: Redis, stack: AsyncExitStack) -> ChatService:
    """The local dev channel, or Sendbird's Platform API paced to the plan's budgets (its client closed
    with ``stack``)."""
    bot = settings.sendbird_bot_user_id
    if settings.channel == "local":
        return ChatService(
            LocalChannel(redis, bot_user_id=bot, max_message_chars=settings.sendbird_max_message_chars),
            LocalRelay(bot_user_id=bot),
            LocalMembers(redis, bot_user_id=bot),
        )
    assert settings.sendbird_api_token is not None  # checked by Settings
    pacer = Pacer(redis, settings.sendbird_budgets)
    sendbird = platform_client(settings.sendbird_base_url, settings.sendbird_api_token, pacer=pacer)
    stack.push_async_callback(sendbird.aclose)
    return ChatService(
        SendbirdChannel(sendbird, bot_user_id=bot, max_message_chars=settings.sendbird_max_message_chars),
        SendbirdRelay(sendbird, DirectChannels(redis, bot_user_id=bot)),
        SendbirdMembers(sendbird, redis),
    )
