"""One channel, relay and member list route each conversation to what carries it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from truloop_assistant.channels.base import CHAT, Capabilities, ChannelSendError
from truloop_assistant.channels.members import Roster
from truloop_assistant.channels.relay import NoSuchUser
from truloop_assistant.channels.routing import RoutingChannel, RoutingMembers, RoutingRelay
from truloop_assistant.protocol.jsonrpc import JsonRpcRequest

SMS_ONLY = Capabilities(devices=False, streams=False, updates=False, typing=False, max_segments=3)


@dataclass
class Recorded:
    """A channel that records what it was asked to send."""

    reach: Capabilities = CHAT
    sent: list[tuple[str, str]] = field(default_factory=list)
    typing: list[str] = field(default_factory=list)

    def capabilities(self, channel_url: str) -> Capabilities:
        return self.reach

    async def send_text(self, channel_url: str, text: str, *, dedup_id: str) -> None:
        self.sent.append((channel_url, text))

    async def send_rpc(self, channel_url: str, request: JsonRpcRequest, **kwargs: Any) -> int | None:
        self.sent.append((channel_url, request.method))
        return 1

    async def settle_rpc(self, channel_url: str, message_id: int, *, data: str, text: str) -> None:
        self.sent.append((channel_url, text))

    async def typing_started(self, channel_url: str) -> bool | None:
        self.typing.append(channel_url)
        return True

    async def typing_stopped(self, channel_url: str) -> bool | None:
        return True


class ChatRelay:
    async def direct_channel(self, user_id: str) -> str:
        return f"dm-{user_id}"

    async def known_channel(self, user_id: str) -> str | None:
        return None

    async def exists(self, user_id: str) -> bool:
        return user_id == "jeff"


class ChatMembers:
    async def of(self, channel_url: str) -> list[str] | None:
        return ["jeff", "mina", "bot"]

    async def roster(self, channel_url: str, *, patience_s: float) -> Roster | None:
        return Roster(["jeff", "mina", "bot"])

    async def listed(self, channel_url: str, ids: list[str], *, supergroup: bool = False) -> None:
        raise AssertionError("only chat channels are listed")


async def test_each_conversation_goes_to_its_own_channel_and_says_what_it_can_do() -> None:
    chat, sms = Recorded(), Recorded(SMS_ONLY)
    routed = RoutingChannel(chat, {"sms": sms})
    await routed.send_text("ch-1", "hello", dedup_id="a")
    await routed.send_text("sms:+821055501234", "안녕하세요", dedup_id="b")
    assert chat.sent == [("ch-1", "hello")] and sms.sent == [("sms:+821055501234", "안녕하세요")]
    assert routed.capabilities("ch-1").devices and not routed.capabilities("sms:+821055501234").devices
    assert routed.capabilities("sms:+821055501234").max_segments == 3

    # Typing is not asked of a channel that shows none.
    assert await routed.typing_started("sms:+821055501234") is False and sms.typing == []
    assert await routed.typing_started("ch-1") is True and chat.typing == ["ch-1"]


async def test_a_conversation_whose_channel_this_server_does_not_run_fails_for_good() -> None:
    routed = RoutingChannel(Recorded())
    with pytest.raises(ChannelSendError) as refused:
        await routed.send_text("page:tel:+821055501234", "hi", dedup_id="c")
    assert not refused.value.retryable  # the outbox keeps it as a dead letter, it is not retried
    assert not routed.capabilities("page:tel:+821055501234").devices


async def test_a_person_reached_by_phone_is_written_to_by_sms_only_where_the_server_texts() -> None:
    texting, not_texting = RoutingRelay(ChatRelay(), sms=True), RoutingRelay(ChatRelay(), sms=False)
    assert await texting.direct_channel("tel:+821055501234") == "sms:+821055501234"
    assert await texting.known_channel("tel:+821055501234") == "sms:+821055501234"
    assert await texting.exists("tel:+821055501234") and not await not_texting.exists("tel:+821055501234")
    with pytest.raises(NoSuchUser):
        await not_texting.direct_channel("tel:+821055501234")
    assert await texting.direct_channel("jeff") == "dm-jeff"  # chat users: the chat service's 1:1 channel
    assert await texting.exists("jeff") and not await texting.exists("nobody")


async def test_an_sms_or_guest_page_conversation_is_one_persons_with_the_assistant() -> None:
    members = RoutingMembers(ChatMembers(), bot_user_id="bot")
    assert await members.of("sms:+821055501234") == ["tel:+821055501234", "bot"]
    assert (await members.roster("page:tel:+821055501234", patience_s=1)) == Roster(
        ["tel:+821055501234", "bot"]
    )
    assert await members.of("ch-1") == ["jeff", "mina", "bot"]
    await members.listed("sms:+821055501234", ["x"])  # nothing to keep: never the chat service's
