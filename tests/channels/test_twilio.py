"""The SMS channel against the fake Twilio over real HTTP, with a real Redis: what a guest receives."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import pytest
from redis.asyncio import Redis

from tests.fakes.twilio import ACCOUNT_SID, AUTH_TOKEN, FROM_NUMBER, FakeTwilio
from tests.support import make_settings, served
from truloop_assistant.channels.base import ChannelSendError
from truloop_assistant.channels.twilio import TwilioChannel, open_sms
from truloop_assistant.protocol.jsonrpc import JsonRpcRequest

GUEST = "+821055501234"
CONVERSATION = f"sms:{GUEST}"
PUBLIC = "https://assistant.example.com"
SERVICE = "MG" + "fedcba9876543210" * 2

Open = Callable[..., Any]


@pytest.fixture
async def twilio() -> AsyncIterator[FakeTwilio]:
    async with served(FakeTwilio()) as fake:
        yield fake


@pytest.fixture
def sms(redis: Redis, redis_url: str, twilio: FakeTwilio) -> Open:
    """``async with sms(**settings) as channel``: the channel ``open_sms`` makes, quick to retry."""

    @asynccontextmanager
    async def open_(**overrides: Any) -> AsyncIterator[TwilioChannel]:
        values: dict[str, Any] = {
            "sms": "twilio",
            "twilio_account_sid": ACCOUNT_SID,
            "twilio_auth_token": AUTH_TOKEN,
            "twilio_from": FROM_NUMBER,
            "twilio_api_url": twilio.url,
            "twilio_rate": 100,
            "public_url": PUBLIC + "/",
        } | overrides
        settings = make_settings(redis_url, "http://127.0.0.1:9", **values)
        async with AsyncExitStack() as stack:
            channel = open_sms(settings, redis, stack)
            assert channel is not None
            channel.backoff_base_s, channel.backoff_cap_s = 0.01, 0.05
            yield channel

    return open_


async def test_an_answer_goes_to_twilio_as_one_text_with_its_status_callback(
    sms: Open, twilio: FakeTwilio
) -> None:
    async with sms() as channel:
        await channel.send_text(CONVERSATION, "금요일 저녁 7시에 만나요!", dedup_id="d1")
    [message] = twilio.messages
    assert (message["to"], message["from"], message["body"]) == (
        GUEST,
        FROM_NUMBER,
        "금요일 저녁 7시에 만나요!",
    )
    assert message["status_callback"] == f"{PUBLIC}/api/v1/webhooks/twilio/status"
    assert message["num_segments"] == "1" and message["status"] == "queued"
    assert await channel.numbers.sent_sid(GUEST, "d1") == message["sid"]


async def test_a_messaging_service_sends_in_place_of_a_number(sms: Open, twilio: FakeTwilio) -> None:
    async with sms(twilio_from=SERVICE) as channel:
        await channel.send_text(CONVERSATION, "See you Friday.", dedup_id="d1")
    [arrival] = twilio.arrivals
    assert arrival.form["MessagingServiceSid"] == SERVICE and "From" not in arrival.form
    assert twilio.messages[0]["status"] == "accepted"


async def test_a_long_korean_answer_is_cut_to_the_segments_allowed(sms: Open, twilio: FakeTwilio) -> None:
    text = "금요일 저녁 7시에 강남역에서 만나요. " * 30
    async with sms(sms_max_segments=2) as channel:
        assert channel.capabilities(CONVERSATION).max_segments == 2
        await channel.send_text(CONVERSATION, text, dedup_id="d1")
    [message] = twilio.messages
    assert message["num_segments"] == "2"  # as Twilio counts them: 67 a segment for Korean
    assert message["body"].endswith("만나요. …")


async def test_once_per_dedup_id_across_a_retry(sms: Open, twilio: FakeTwilio) -> None:
    twilio.failures = [(503, 0)] * 5  # the whole first send fails: the outbox tries it again later
    async with sms() as channel:
        with pytest.raises(ChannelSendError) as failed:
            await channel.send_text(CONVERSATION, "Hello", dedup_id="d1")
        assert failed.value.retryable and failed.value.status == 503 and failed.value.code == 20503
        twilio.failures = [(500, 0)]  # the retry meets one more 500, then goes out
        await channel.send_text(CONVERSATION, "Hello", dedup_id="d1")
        with pytest.raises(ChannelSendError) as again:
            await channel.send_text(CONVERSATION, "Hello", dedup_id="d1")
        assert again.value.already_delivered and not again.value.retryable
        await channel.send_text(CONVERSATION, "Another answer", dedup_id="d2")
    assert [m["body"] for m in twilio.messages] == ["Hello", "Another answer"]
    assert [a.status for a in twilio.arrivals] == [503] * 5 + [500, 201, 201]


async def test_two_processes_sending_the_same_message_send_it_once(sms: Open, twilio: FakeTwilio) -> None:
    async with sms() as one, sms() as other:
        results = await asyncio.gather(
            one.send_text(CONVERSATION, "Hello", dedup_id="d1"),
            other.send_text(CONVERSATION, "Hello", dedup_id="d1"),
            return_exceptions=True,
        )
    assert len(twilio.messages) == 1
    [refused] = [r for r in results if isinstance(r, ChannelSendError)]
    # "Being sent" (tried later, it finds the message went), or, when the first send was done before
    # the second asked (a loaded machine), "sent before": either way not sent twice.
    assert refused.retryable or refused.already_delivered


async def test_a_429_is_waited_out_as_twilio_asks(sms: Open, twilio: FakeTwilio) -> None:
    twilio.failures = [(429, 1)]
    async with sms() as channel:
        await channel.send_text(CONVERSATION, "Hello", dedup_id="d1")
    limited, created = twilio.arrivals
    assert (limited.status, created.status) == (429, 201)
    assert created.at - limited.at >= 0.95  # Retry-After: 1
    assert len(twilio.messages) == 1


async def test_a_number_that_texted_stop_is_refused_for_good(sms: Open, twilio: FakeTwilio) -> None:
    twilio.opted_out.add(GUEST)  # Twilio's block, from a STOP this server never saw
    async with sms() as channel:
        with pytest.raises(ChannelSendError) as refused:
            await channel.send_text(CONVERSATION, "Hello", dedup_id="d1")
        assert not refused.value.retryable
        assert (refused.value.status, refused.value.code) == (400, 21610)
        assert await channel.numbers.opted_out(GUEST)  # noted: the next answer is not even tried
        with pytest.raises(ChannelSendError) as again:
            await channel.send_text(CONVERSATION, "Hello again", dedup_id="d2")
        assert not again.value.retryable and "opted out" in str(again.value)
    assert len(twilio.arrivals) == 1 and twilio.messages == []


async def test_an_opted_out_number_is_never_sent_to(sms: Open, twilio: FakeTwilio) -> None:
    async with sms() as channel:
        await channel.numbers.opt_out(GUEST)
        with pytest.raises(ChannelSendError) as refused:
            await channel.send_text(CONVERSATION, "Hello", dedup_id="d1")
        assert not refused.value.retryable and "opted out" in str(refused.value)
        assert await channel.numbers.opt_in(GUEST)
        await channel.send_text(CONVERSATION, "Hello", dedup_id="d1")
    assert [m["body"] for m in twilio.messages] == ["Hello"]


async def test_twilios_refusals_are_final(sms: Open, twilio: FakeTwilio) -> None:
    async with sms() as channel:
        with pytest.raises(ChannelSendError) as invalid:
            await channel.send_text("sms:+12", "Hello", dedup_id="d1")
        assert (invalid.value.retryable, invalid.value.status, invalid.value.code) == (False, 400, 21211)
    async with sms(twilio_auth_token="not-the-token") as channel:
        with pytest.raises(ChannelSendError) as denied:
            await channel.send_text(CONVERSATION, "Hello", dedup_id="d2")
        assert (denied.value.retryable, denied.value.status, denied.value.code) == (False, 401, 20003)
        # a refused send lets its dedup id go: once the cause is fixed it can be sent
        assert await channel.numbers.claim(GUEST, "d2") == "claimed"
    assert twilio.messages == []


async def test_sends_are_paced_app_wide(sms: Open, twilio: FakeTwilio) -> None:
    rate, burst = 10.0, 12
    async with sms(twilio_rate=rate) as one, sms(twilio_rate=rate) as other:  # two processes' channels
        await asyncio.gather(
            *(
                (one if i % 2 else other).send_text(f"sms:+8210555{i:05d}", f"Hello {i}", dedup_id=f"d{i}")
                for i in range(burst)
            )
        )
    times = sorted(a.at for a in twilio.arrivals)
    assert len(times) == burst
    interval, tolerance = 1 / rate, 0.03  # a request's own latency varies a little
    for i in range(burst):
        for j in range(i + 1, burst):
            assert times[j] - times[i] >= (j - i) * interval - tolerance, (i, j, times)
    assert times[-1] - times[0] < (burst - 1) * interval + 1.0  # paced, not stalled


async def test_sms_has_no_devices_streams_updates_or_typing(sms: Open, twilio: FakeTwilio) -> None:
    async with sms() as channel:
        can = channel.capabilities(CONVERSATION)
        assert (can.devices, can.streams, can.updates, can.typing) == (False, False, False, False)
        assert can.max_segments == 3 and can.max_chars == 3 * 67
        request = JsonRpcRequest(id="call_1", method="calendar.getEvents", params={})
        with pytest.raises(ChannelSendError) as refused:
            await channel.send_rpc(CONVERSATION, request, notification="…", dedup_id="d1")
        assert not refused.value.retryable
        await channel.settle_rpc(CONVERSATION, 1, data="{}", text="")
        assert await channel.typing_started(CONVERSATION) is False
        assert await channel.typing_stopped(CONVERSATION) is False
    assert twilio.arrivals == []


async def test_no_channel_while_sms_is_off(redis: Redis, redis_url: str) -> None:
    settings = make_settings(redis_url, "http://127.0.0.1:9")
    async with AsyncExitStack() as stack:
        assert open_sms(settings, redis, stack) is None
