"""The messaging channel a deployment talks through (``TRULOOP_CHANNEL``), opened as one: where the
assistant writes, how it reaches a person directly, and who is in a channel."""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass

from redis.asyncio import Redis

from ..config import Settings
from ..store.direct_channels import DirectChannels
from .base import Channel
from .local import LocalChannel
from .members import LocalMembers, Members, SendbirdMembers
from .pacing import Pacer
from .relay import LocalRelay, Relay, SendbirdRelay
from .sendbird import SendbirdChannel, platform_client


@dataclass(frozen=True)
class MessagingChannel:
    channel: Channel
    relay: Relay
    members: Members


def open_channel(settings: Settings, redis: Redis, stack: AsyncExitStack) -> MessagingChannel:
    """The local dev channel, or Sendbird's Platform API paced to the plan's budgets (its client closed
    with ``stack``)."""
    bot = settings.sendbird_bot_user_id
    if settings.channel == "local":
        return MessagingChannel(
            LocalChannel(redis, bot_user_id=bot, max_message_chars=settings.sendbird_max_message_chars),
            LocalRelay(bot_user_id=bot),
            LocalMembers(redis, bot_user_id=bot),
        )
    assert settings.sendbird_api_token is not None  # checked by Settings
    pacer = Pacer(redis, settings.sendbird_budgets)
    sendbird = platform_client(settings.sendbird_base_url, settings.sendbird_api_token, pacer=pacer)
    stack.push_async_callback(sendbird.aclose)
    return MessagingChannel(
        SendbirdChannel(sendbird, bot_user_id=bot, max_message_chars=settings.sendbird_max_message_chars),
        SendbirdRelay(sendbird, DirectChannels(redis, bot_user_id=bot)),
        SendbirdMembers(sendbird, redis),
    )
