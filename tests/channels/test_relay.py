"""Direct channels between the bot and a user: found, else created, on Sendbird (the fake), and locally."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from redis.asyncio import Redis

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
from truloop_assistant.store.direct_channels import DirectChannels

BOT = "truloop-assistant"


@asynccontextmanager
async def relay(url: str, redis: Redis, *, token: str = API_TOKEN) -> AsyncIterator[SendbirdRelay]:
    async with platform_client(url, token) as client:
        yield SendbirdRelay(client, DirectChannels(redis, bot_user_id=BOT))


async def test_same_user_gets_the_same_channel(sendbird: FakeSendbird, redis: Redis) -> None:
    async with relay(sendbird.url, redis) as r:
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


async def test_wrong_token_is_a_relay_error(sendbird: FakeSendbird, redis: Redis) -> None:
    async with relay(sendbird.url, redis, token="not-the-token") as r:
        with pytest.raises(RelayError, match="HTTP 401") as info:
            await r.direct_channel("jeff")
    assert info.value.status == 401
    assert info.value.code == 400401
    assert "Api-Token" in str(info.value)
    assert sendbird.channels_created == 0


async def test_4xx_carries_sendbirds_message(sendbird: FakeSendbird, redis: Redis) -> None:
    sendbird.channel_failures.append((400, {"error": True, "code": 400201, "message": '"User" not found.'}))
    async with relay(sendbird.url, redis) as r:
        with pytest.raises(RelayError, match='"User" not found') as info:
            await r.direct_channel("ghost")
    assert (info.value.status, info.value.code) == (400, 400201)


async def test_a_user_sendbird_does_not_know_gets_no_channel(sendbird: FakeSendbird, redis: Redis) -> None:
    sendbird.application.known_users = {BOT, "jeff"}
    async with relay(sendbird.url, redis) as r:
        with pytest.raises(RelayError, match=r"^no such user: Sendbird has no user 'ghost'") as info:
            await r.direct_channel("ghost")
        assert await r.direct_channel("jeff")

    assert (info.value.status, info.value.code) == (400, 400201)
    assert [{m["user_id"] for m in c["members"]} for c in sendbird.channels.values()] == [{BOT, "jeff"}]


async def test_the_bots_channel_join_limit_is_named_and_logged(
    sendbird: FakeSendbird, redis: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    sendbird.application.channel_join_limit = 1
    async with relay(sendbird.url, redis) as r:
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


async def test_unreachable_is_a_relay_error(redis: Redis) -> None:
    async with relay(f"http://127.0.0.1:{free_port()}", redis) as r:
        with pytest.raises(RelayError, match="could not reach Sendbird"):
            await r.direct_channel("jeff")


async def test_a_one_to_one_channel_the_app_made_is_used_whatever_its_custom_type(
    sendbird: FakeSendbird, redis: Redis
) -> None:
    sendbird.add_app_direct_channel("app-chat-jeff", "jeff", custom_type="support", bot=BOT)
    async with relay(sendbird.url, redis) as r:
        assert await r.direct_channel("jeff") == "app-chat-jeff"
        assert await r.direct_channel("jeff") == "app-chat-jeff"

    assert sendbird.channels_created == 0
    [listing] = sendbird.user_channels.listings  # the second time, Redis knew it
    assert (listing.user_id, listing.params["members_exactly_in"]) == (BOT, "jeff")


async def test_channels_the_bot_cannot_use_as_the_persons_own_are_passed_over(
    sendbird: FakeSendbird, redis: Redis
) -> None:
    sendbird.add_supergroup("big", ["jeff", BOT])
    sendbird.add_channel("team", ["jeff", "mina", BOT])
    sendbird.add_app_direct_channel("frozen", "jeff", bot=BOT)
    sendbird.channels["frozen"]["freeze"] = True
    sendbird.add_app_direct_channel("invited-only", "jeff", bot=BOT)
    sendbird.channels["invited-only"]["members"][1]["state"] = "invited"  # the bot has not joined it
    assert sendbird.channels["invited-only"]["members"][1]["user_id"] == BOT
    async with relay(sendbird.url, redis) as r:
        made = await r.direct_channel("jeff")

    assert made not in {"big", "team", "frozen", "invited-only"}
    assert sendbird.channels_created == 1 and sendbird.channels[made]["custom_type"] == RELAY_CUSTOM_TYPE


async def test_every_process_reuses_the_channel_one_of_them_found(
    sendbird: FakeSendbird, redis: Redis
) -> None:
    async with relay(sendbird.url, redis) as first, relay(sendbird.url, redis) as second:
        made = await first.direct_channel("jeff")
        assert await second.direct_channel("jeff") == made

    assert sendbird.channels_created == 1
    assert (len(sendbird.user_channels.listings), sendbird.calls["creation"]) == (1, 1)


async def test_a_failing_lookup_is_tried_again_and_one_never_answered_still_gets_the_channel(
    sendbird: FakeSendbird, redis: Redis
) -> None:
    sendbird.add_app_direct_channel("app-chat-jeff", "jeff", bot=BOT)
    sendbird.user_channels.failures = [503, 429]
    async with relay(sendbird.url, redis) as r:
        assert await r.direct_channel("jeff") == "app-chat-jeff"
        assert len(sendbird.user_channels.listings) == 3

        sendbird.user_channels.failures = [503] * 100  # Sendbird lists nothing for mina, ever
        made = await r.direct_channel("mina")

    assert {m["user_id"] for m in sendbird.channels[made]["members"]} == {BOT, "mina"}
    assert sendbird.channels_created == 1


async def test_a_listing_that_ignores_the_member_filter_never_gives_someone_elses_channel(
    sendbird: FakeSendbird, redis: Redis
) -> None:
    # Sendbird uses only ids of users it knows to filter: for one it does not, every channel of the
    # bot is listed, page after page.
    sendbird.application.known_users = {BOT, *(f"person-{i}" for i in range(25))}
    for i in range(25):
        sendbird.add_app_direct_channel(f"dm-{i}", f"person-{i}", bot=BOT)
    sendbird.add_app_direct_channel("dm-jeff", "jeff", bot=BOT)
    async with relay(sendbird.url, redis) as r:
        assert await r.direct_channel("jeff") == "dm-jeff"

    assert [bool(listing.params.get("token")) for listing in sendbird.user_channels.listings] == [False, True]


async def test_local_relay_is_deterministic() -> None:
    r = LocalRelay(bot_user_id=BOT)
    assert await r.direct_channel("jeff") == "relay-truloop-assistant-jeff"
    assert await r.direct_channel("jeff") == local_direct_channel_url(BOT, "jeff")
    assert await r.direct_channel("mina") != await r.direct_channel("jeff")
    with pytest.raises(ValueError):
        await r.direct_channel("")
