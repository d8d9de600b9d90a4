"""Direct channels between the bot and a user: get-or-create on Sendbird (the fake), and locally."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from tests.fakes.sendbird import FakeSendbird
from tests.support import API_TOKEN
from truloop_assistant.channels.platform_http import PlatformClient
from truloop_assistant.channels.relay import (
    RELAY_CUSTOM_TYPE,
    LocalRelay,
    RelayError,
    SendbirdRelay,
    get_or_create_direct_channel,
    local_direct_channel_url,
)
from truloop_assistant.channels.sendbird import platform_client
from truloop_assistant.local.embedded_redis import free_port

BOT = "truloop-assistant"


@asynccontextmanager
async def relay(url: str, *, token: str = API_TOKEN) -> AsyncIterator[SendbirdRelay]:
    async with platform_client(url, token) as client:
        yield SendbirdRelay(client, bot_user_id=BOT)


async def test_same_user_gets_the_same_channel(sendbird: FakeSendbird) -> None:
    async with relay(sendbird.url) as r:
        first = await r.direct_channel("jeff")
        again = await r.direct_channel("jeff")
        other = await r.direct_channel("mina")

    assert first == again
    assert other != first
    assert sendbird.channels_created == 2
    channel = sendbird.channels[first]
    assert channel["is_distinct"] is True
    assert channel["custom_type"] == RELAY_CUSTOM_TYPE
    assert channel["name"] == "Truloop"
    assert {m["user_id"] for m in channel["members"]} == {BOT, "jeff"}


async def test_function_with_own_client(sendbird: FakeSendbird) -> None:
    async with PlatformClient(sendbird.url, headers={"Api-Token": API_TOKEN}, timeout_s=5) as client:
        url = await get_or_create_direct_channel(client, bot_user_id=BOT, user_id="jeff")
        assert await get_or_create_direct_channel(client, bot_user_id=BOT, user_id="jeff") == url
    assert sendbird.channels_created == 1


async def test_wrong_token_is_a_relay_error(sendbird: FakeSendbird) -> None:
    async with relay(sendbird.url, token="not-the-token") as r:
        with pytest.raises(RelayError, match="HTTP 401") as info:
            await r.direct_channel("jeff")
    assert info.value.status == 401
    assert info.value.code == 400401
    assert "Api-Token" in str(info.value)
    assert sendbird.channels_created == 0


async def test_4xx_carries_sendbirds_message(sendbird: FakeSendbird) -> None:
    sendbird.channel_failures.append((400, {"error": True, "code": 400201, "message": '"User" not found.'}))
    async with relay(sendbird.url) as r:
        with pytest.raises(RelayError, match='"User" not found') as info:
            await r.direct_channel("ghost")
    assert (info.value.status, info.value.code) == (400, 400201)


async def test_a_user_sendbird_does_not_know_gets_no_channel(sendbird: FakeSendbird) -> None:
    sendbird.application.known_users = {BOT, "jeff"}
    async with relay(sendbird.url) as r:
        with pytest.raises(RelayError, match=r"^no such user: Sendbird has no user 'ghost'") as info:
            await r.direct_channel("ghost")
        assert await r.direct_channel("jeff")

    assert (info.value.status, info.value.code) == (400, 400201)
    assert [{m["user_id"] for m in c["members"]} for c in sendbird.channels.values()] == [{BOT, "jeff"}]


async def test_the_bots_channel_join_limit_is_named_and_logged(
    sendbird: FakeSendbird, caplog: pytest.LogCaptureFixture
) -> None:
    sendbird.application.channel_join_limit = 1
    async with relay(sendbird.url) as r:
        first = await r.direct_channel("jeff")
        assert await r.direct_channel("jeff") == first  # the existing channel is still had
        with caplog.at_level(logging.ERROR), pytest.raises(RelayError) as info:
            await r.direct_channel("mina")

    assert str(info.value).startswith(
        f"the assistant's bot user {BOT!r} has reached Sendbird's limit of group channels it may join"
    )
    assert "ask Sendbird to raise it" in str(info.value)
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert '"channel join"' in record.getMessage() and "mina" in record.getMessage()
    assert sendbird.channels_created == 1


async def test_unreachable_is_a_relay_error() -> None:
    async with relay(f"http://127.0.0.1:{free_port()}") as r:
        with pytest.raises(RelayError, match="could not reach Sendbird"):
            await r.direct_channel("jeff")


async def test_local_relay_is_deterministic() -> None:
    r = LocalRelay(bot_user_id=BOT)
    assert await r.direct_channel("jeff") == "relay-truloop-assistant-jeff"
    assert await r.direct_channel("jeff") == local_direct_channel_url(BOT, "jeff")
    assert await r.direct_channel("mina") != await r.direct_channel("jeff")
    with pytest.raises(ValueError):
        await r.direct_channel("")
