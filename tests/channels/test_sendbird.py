"""The Sendbird channel and its Platform API client over real HTTP, against the fake Sendbird."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from prometheus_client import REGISTRY
from redis.asyncio import Redis

from tests.fakes.sendbird import FakeSendbird
from tests.support import API_TOKEN, BOT, serve
from truloop_assistant.channels.base import ChannelSendError
from truloop_assistant.channels.members import SendbirdMembers
from truloop_assistant.channels.platform_http import PlatformClient, PlatformTransportError
from truloop_assistant.channels.sendbird import SendbirdChannel, platform_client
from truloop_assistant.local.embedded_redis import free_port
from truloop_assistant.protocol.jsonrpc import JsonRpcRequest

ESCAPED = "team/ch 1?x=y#z"
"""A channel URL with characters that must be escaped in a path."""
RAW = "team%2Fch%201%3Fx%3Dy%23z"
"""How it goes in the path: as ``quote(channel_url, safe='')`` has it, not decoded or escaped again."""


def channel(client: PlatformClient, **kwargs: Any) -> SendbirdChannel:
    return SendbirdChannel(client, bot_user_id=BOT, backoff_base_s=0.01, backoff_cap_s=0.05, **kwargs)


def retries(status: str) -> float:
    return REGISTRY.get_sample_value("truloop_sendbird_retries_total", {"status": status}) or 0.0


async def test_a_message_arrives_whole_at_the_escaped_channel_url(sendbird: FakeSendbird) -> None:
    text = '내일 오후 3시에 회의가 있어요 — "quotes", \\ and emoji 🙂'
    async with platform_client(sendbird.url, API_TOKEN) as client:
        sb = channel(client)
        await sb.send_text(ESCAPED, text, dedup_id="d1")
        request = JsonRpcRequest(id="call_1", method="calendar.getEvents", params={"q": "회의"})
        message_id = await sb.send_rpc(ESCAPED, request, notification="확인 중…", dedup_id="d2")
        await sb.settle_rpc(ESCAPED, 2, data='{"state":"answered"}', text="완료")

    first, rpc = sendbird.messages
    assert (first.channel_url, first.raw_path) == (ESCAPED, f"/v3/group_channels/{RAW}/messages")
    assert first.body == {"message_type": "MESG", "user_id": BOT, "message": text, "dedup_id": "d1"}
    assert first.headers["api-token"] == API_TOKEN
    assert first.headers["content-type"] == "application/json; charset=utf8"
    assert message_id == 2
    assert rpc.rpc["params"] == {"q": "회의"} and rpc.text == "확인 중…"
    [update] = sendbird.updates
    assert (update.channel_url, update.message_id, update.body["message"]) == (ESCAPED, 2, "완료")


async def test_typing_goes_to_the_escaped_channel_url(sendbird: FakeSendbird) -> None:
    async with platform_client(sendbird.url, API_TOKEN) as client:
        await channel(client).typing_started(ESCAPED)
        await channel(client).typing_stopped(ESCAPED)
    start, stop = sendbird.typing_in(ESCAPED)
    assert (start.started, stop.started) == (True, False)
    assert start.raw_path == stop.raw_path == f"/v3/group_channels/{RAW}/typing"
    assert start.user_ids == [BOT]


async def test_members_are_looked_up_at_the_escaped_channel_url(sendbird: FakeSendbird, redis: Redis) -> None:
    sendbird.add_channel(ESCAPED, [BOT, "jeff", "mina"])
    async with platform_client(sendbird.url, API_TOKEN) as client:
        members = SendbirdMembers(client, redis)
        assert await members.of(ESCAPED) == [BOT, "jeff", "mina"]
        assert await members.of("no-such-channel") is None
    assert sendbird.channel_views == 2


async def test_429_and_5xx_are_retried_after_the_wait_sendbird_asks_for(sendbird: FakeSendbird) -> None:
    sendbird.failures = [(429, {"X-RateLimit-RetryAfter": "0.3"}), (503, {"Retry-After": "0"})]
    before = retries("429"), retries("503")
    async with platform_client(sendbird.url, API_TOKEN) as client:
        started = asyncio.get_running_loop().time()
        await channel(client).send_text("ch-1", "hello", dedup_id="d1")
        waited = asyncio.get_running_loop().time() - started
    assert waited >= 0.3
    assert [m.text for m in sendbird.messages] == ["hello"]
    assert (retries("429"), retries("503")) == (before[0] + 1, before[1] + 1)


async def test_a_refusal_is_final_and_a_refused_repeat_counts_as_delivered(sendbird: FakeSendbird) -> None:
    sendbird.failures = [(400, {})]
    sendbird.refuse_repeats = True
    async with platform_client(sendbird.url, API_TOKEN) as client:
        sb = channel(client)
        with pytest.raises(ChannelSendError, match="HTTP 400") as refused:
            await sb.send_text("ch-1", "hello", dedup_id="d1")
        await sb.send_text("ch-1", "hello", dedup_id="d1")
        with pytest.raises(ChannelSendError, match="has already been used") as repeat:
            await sb.send_text("ch-1", "hello", dedup_id="d1")
    assert (refused.value.retryable, refused.value.already_delivered) == (False, False)
    assert (repeat.value.retryable, repeat.value.already_delivered) == (False, True)
    assert sendbird.requests == 3 and len(sendbird.messages) == 1


async def test_a_dropped_connection_and_an_unreachable_sendbird_are_retried_until_it_answers() -> None:
    """First a server that closes every connection without an answer, then none, then Sendbird."""
    port, fake = free_port(), FakeSendbird()
    dropped = asyncio.Event()

    async def drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.close()
        dropped.set()

    before = retries("ServerDisconnectedError"), retries("ClientConnectorError")
    async with platform_client(f"http://127.0.0.1:{port}", API_TOKEN) as client:
        sb = channel(client, max_attempts=100)
        sending = asyncio.create_task(sb.send_text("ch-1", "hi", dedup_id="d1"))
        server = await asyncio.start_server(drop, "127.0.0.1", port)
        async with server:
            await asyncio.wait_for(dropped.wait(), 5)
        await asyncio.sleep(0.2)  # refused meanwhile
        async with serve(fake.app(), port):
            await asyncio.wait_for(sending, 10)
    assert [(m.text, m.body["dedup_id"]) for m in fake.messages] == [("hi", "d1")]
    assert retries("ServerDisconnectedError") > before[0]
    assert retries("ClientConnectorError") > before[1]


async def test_an_unreachable_sendbird_fails_the_send_as_retryable(caplog: pytest.LogCaptureFixture) -> None:
    async with platform_client(f"http://127.0.0.1:{free_port()}", API_TOKEN) as client:
        with pytest.raises(ChannelSendError, match="ClientConnectorError") as info:
            await channel(client, max_attempts=3).send_text("ch-1", "hi", dedup_id="d1")
    assert info.value.retryable and not info.value.already_delivered
    assert "failed 3 times" in caplog.text


async def test_a_slow_sendbird_times_out_as_a_transport_error() -> None:
    release = asyncio.Event()

    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        await release.wait()
        writer.close()

    port = free_port()
    async with await asyncio.start_server(hang, "127.0.0.1", port):
        async with platform_client(f"http://127.0.0.1:{port}", API_TOKEN, timeout_s=0.2) as client:
            with pytest.raises(PlatformTransportError, match="TimeoutError"):
                await client.request("POST", "/v3/group_channels", json={})
        release.set()


async def test_typing_never_raises_and_a_closed_client_fails_sends_as_retryable(
    sendbird: FakeSendbird, caplog: pytest.LogCaptureFixture
) -> None:
    sendbird.typing_status = 500
    client = platform_client(sendbird.url, API_TOKEN)
    sb = channel(client, max_attempts=2)
    with caplog.at_level(logging.WARNING):
        await sb.typing_started("ch-1")
        await client.aclose()
        await client.aclose()
        await sb.typing_stopped("ch-1")
        with pytest.raises(ChannelSendError, match="closed") as info:
            await sb.send_text("ch-1", "hi", dedup_id="d1")
    assert info.value.retryable
    assert "typing POST in ch-1 failed: HTTP 500" in caplog.text
    assert "typing DELETE in ch-1 failed" in caplog.text
    assert [t.started for t in sendbird.typing] == [True]


async def test_a_typing_call_that_hangs_is_given_up_at_its_bound(sendbird: FakeSendbird) -> None:
    sendbird.typing_hang_s = 5
    async with platform_client(sendbird.url, API_TOKEN) as client:
        started = asyncio.get_running_loop().time()
        await channel(client, typing_timeout_s=0.2).typing_started("ch-1")
        assert asyncio.get_running_loop().time() - started < 1
        sendbird.release_typing()


async def test_the_environments_proxy_is_used(
    sendbird: FakeSendbird, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``HTTP_PROXY`` names the fake as the proxy of a host that does not exist: it gets the message."""
    for name in ("HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("http_proxy", sendbird.url)
    async with platform_client("http://sendbird.invalid", API_TOKEN) as client:
        await channel(client).send_text(ESCAPED, "via the proxy", dedup_id="d1")
    [message] = sendbird.messages
    assert (message.channel_url, message.text) == (ESCAPED, "via the proxy")
    assert message.raw_path == f"/v3/group_channels/{RAW}/messages"
