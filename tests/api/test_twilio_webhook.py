"""A guest's text messages through the running server: Twilio's webhook, signed as Twilio signs it.

Everything goes over HTTP: the fake Twilio builds each webhook (its form and ``X-Twilio-Signature``,
signed over the public URL the server is reached at) and the test posts it to the server; the model
is a FunctionModel that notes what it was asked, so a test can tell that nothing ran.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.conftest import StartServer
from tests.fakes.twilio import (
    ACCOUNT_SID,
    AUTH_TOKEN,
    FROM_NUMBER,
    FakeTwilio,
    Signed,
    count_segments,
    post_signed,
)
from tests.support import Harness, served
from truloop_assistant.backends.events import RedisEventStore
from truloop_assistant.channels.base import ChannelSendError
from truloop_assistant.channels.twilio import open_sms
from truloop_assistant.store.admissions import recent
from truloop_assistant.store.ledger import Ledger
from truloop_assistant.store.sms_numbers import SmsNumbers
from truloop_assistant.tools.device_tools import DEVICE_TOOLS

GUEST = "+821055501234"
PUBLIC = "https://assistant.example.com"
INBOUND = f"{PUBLIC}/api/v1/webhooks/twilio"
EMPTY = '<?xml version="1.0" encoding="UTF-8"?><Response/>'
ANSWER = "좋아요, 금요일로 적어 둘게요."
DEVICE_TOOL_NAMES = set(DEVICE_TOOLS)


class Model:
    """A model that answers ``ANSWER`` and keeps every prompt it was given."""

    def __init__(self, answer: str = ANSWER) -> None:
        self.prompts: list[str] = []
        self.tools: list[list[str]] = []
        self.instructions: list[str] = []
        self.answer = answer
        self.model = FunctionModel(self._answer)

    def _answer(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.tools.append(sorted(t.name for t in info.function_tools))
        self.instructions.append(info.instructions or "")
        self.prompts += [
            str(p.content) for m in messages[-1:] for p in m.parts if isinstance(p, UserPromptPart)
        ]
        return ModelResponse(parts=[TextPart(self.answer)])


@pytest.fixture
async def twilio() -> AsyncIterator[FakeTwilio]:
    async with served(FakeTwilio()) as fake:
        yield fake


Start = Callable[..., Any]


@pytest.fixture
def start_sms(start_server: StartServer, twilio: FakeTwilio) -> Start:
    """``async with start_sms(model) as h``: the server with text messages through the fake Twilio."""

    @asynccontextmanager
    async def start(model: Model, **overrides: Any) -> AsyncIterator[Harness]:
        settings: dict[str, Any] = {
            "sms": "twilio",
            "twilio_account_sid": ACCOUNT_SID,
            "twilio_auth_token": AUTH_TOKEN,
            "twilio_from": FROM_NUMBER,
            "twilio_api_url": twilio.url,
            "twilio_rate": 50,
            "public_url": PUBLIC,
        } | overrides
        async with start_server(model=model.model, **settings) as h:
            yield h

    return start


async def invite(h: Harness, guest: str = GUEST) -> None:
    """An event of jeff's that the number is invited to, written to the server's own event store."""
    start = datetime.now(UTC) + timedelta(days=3)
    await RedisEventStore(h.redis).create(
        "jeff",
        title="저녁 모임",
        start_time=start,
        end_time=start + timedelta(hours=2),
        guests={f"tel:{guest}": "ko"},
    )


def texted_back(response: httpx.Response) -> str | None:
    """The one line TwiML texts back, None for an empty ``<Response/>``."""
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/xml")
    root = ET.fromstring(response.text)
    assert root.tag == "Response"
    messages = [m.text or "" for m in root.findall("Message")]
    assert len(messages) <= 1 and len(root) == len(messages)
    return messages[0] if messages else None


async def text(
    h: Harness, twilio: FakeTwilio, body: str, *, sender: str = GUEST, sid: str | None = None
) -> httpx.Response:
    return await post_signed(h.http, twilio.inbound(INBOUND, sender=sender, body=body, sid=sid))


async def test_a_wrong_or_missing_signature_is_403_and_nothing_runs(
    start_sms: Start, twilio: FakeTwilio
) -> None:
    model = Model()
    async with start_sms(model) as h:
        await invite(h)
        signed = twilio.inbound(INBOUND, sender=GUEST, body="금요일 괜찮아요")
        tampered = await post_signed(h.http, signed, form={"Body": "다른 말"})
        unsigned = await post_signed(h.http, signed, headers={"x-twilio-signature": ""})
        elsewhere = twilio.inbound(f"{PUBLIC}/somewhere-else", sender=GUEST, body="금요일 괜찮아요")
        wrong_url = await h.http.post(
            "/api/v1/webhooks/twilio", data=elsewhere.form, headers=elsewhere.headers
        )
        other = FakeTwilio(auth_token="another-accounts-token")
        wrong_token = await post_signed(h.http, other.inbound(INBOUND, sender=GUEST, body="금요일 괜찮아요"))
        foreign = twilio.sign(INBOUND, {**signed.form, "AccountSid": "AC" + "f" * 32})
        wrong_account = await post_signed(h.http, foreign)
        for response in (tampered, unsigned, wrong_url, wrong_token, wrong_account):
            assert response.status_code == 403, response.text
        assert tampered.json()["error"]["code"] == "bad_signature"
        assert wrong_account.json()["error"]["code"] == "wrong_account"
        await h.idle()
        assert model.prompts == []
        assert await recent(h.redis, f"sms:{GUEST}") == []


async def test_the_webhook_is_not_there_while_sms_is_off(
    start_server: StartServer, twilio: FakeTwilio
) -> None:
    async with start_server() as h:
        response = await post_signed(h.http, twilio.inbound(INBOUND, sender=GUEST, body="hello"))
        assert response.status_code == 404


async def test_an_invited_guests_text_is_queued_once(start_sms: Start, twilio: FakeTwilio) -> None:
    model = Model()
    async with start_sms(model) as h:
        await invite(h)
        signed = twilio.inbound(INBOUND, sender=GUEST, body="  금요일 괜찮아요  ")
        assert texted_back(await post_signed(h.http, signed)) is None
        assert (await post_signed(h.http, signed)).text == EMPTY  # Twilio re-sent it: a duplicate
        await h.idle()
        assert [p for p in model.prompts if "금요일 괜찮아요" in p], model.prompts
        decisions = [d["decision"] for d in await recent(h.redis, f"sms:{GUEST}")]
        assert sorted(decisions) == ["duplicate", "queued"]
        [entry] = [d for d in await recent(h.redis, f"sms:{GUEST}") if d["decision"] == "queued"]
        assert (entry["user_id"], entry["message_id"]) == (f"tel:{GUEST}", signed.form["MessageSid"])


async def test_the_guest_gets_the_answer_by_sms(start_sms: Start, twilio: FakeTwilio) -> None:
    model = Model()
    async with start_sms(model) as h:
        await invite(h)
        await text(h, twilio, "금요일 괜찮아요")
        [reply] = await twilio.wait_for_messages(1, to=GUEST, timeout=15)
        assert reply["body"] == ANSWER and reply["from"] == FROM_NUMBER
    # The guest agent, with no device tool (no app answers over SMS), told to write a short text.
    [offered] = model.tools
    assert "update_guest_availability" in offered and "list_invited_events" in offered
    assert not set(offered) & DEVICE_TOOL_NAMES, offered
    assert "text message (SMS)" in model.instructions[0]


async def test_a_long_answer_goes_within_three_segments(start_sms: Start, twilio: FakeTwilio) -> None:
    long = "금요일 저녁 일곱 시에 강남역 근처에서 만나요. " * 20  # about 540 characters of Korean
    model = Model(long)
    async with start_sms(model) as h:
        await invite(h)
        await text(h, twilio, "언제 어디서 만나요?")
        [reply] = await twilio.wait_for_messages(1, to=GUEST, timeout=15)
        await h.idle()
    assert count_segments(reply["body"]) <= 3 and reply["body"].endswith("…")
    assert len(twilio.messages) == 1  # shortened, not sent as many texts


async def test_a_number_nobody_invited_gets_one_polite_line_and_no_model(
    start_sms: Start, twilio: FakeTwilio
) -> None:
    model = Model()
    async with start_sms(model) as h:
        korean = texted_back(await text(h, twilio, "안녕하세요, 누구세요?"))
        english = texted_back(await text(h, twilio, "Hi, who is this?", sender="+14155550100"))
        await h.idle()
        assert korean is not None and "초대" in korean
        assert english is not None and "no invitation" in english
        assert model.prompts == []
        assert twilio.messages == []


async def test_stop_opts_the_number_out_and_nothing_more_is_sent(
    start_sms: Start, twilio: FakeTwilio
) -> None:
    model = Model()
    async with start_sms(model) as h:
        await invite(h)
        assert texted_back(await text(h, twilio, " stop ")) is None  # Twilio confirms a STOP itself
        assert await SmsNumbers(h.redis).opted_out(GUEST)
        assert texted_back(await text(h, twilio, "금요일 괜찮아요")) is None
        await h.idle()
        assert model.prompts == []  # no answer could reach them: nothing ran
        async with AsyncExitStack() as stack:
            channel = open_sms(h.settings, h.redis, stack)
            assert channel is not None
            with pytest.raises(ChannelSendError) as refused:
                await channel.send_text(f"sms:{GUEST}", ANSWER, dedup_id="late-answer")
            assert not refused.value.retryable and "opted out" in str(refused.value)
        assert twilio.messages == [] and twilio.arrivals == []

        assert texted_back(await text(h, twilio, "START")) is None
        assert not await SmsNumbers(h.redis).opted_out(GUEST)


@pytest.mark.parametrize("word", ["중지", "수신 거부", "UNSUBSCRIBE", "Cancel", "end", "QUIT", "StopAll"])
async def test_every_opt_out_word_opts_out(start_sms: Start, twilio: FakeTwilio, word: str) -> None:
    async with start_sms(Model()) as h:
        assert texted_back(await text(h, twilio, word)) is None
        assert await SmsNumbers(h.redis).opted_out(GUEST)


async def test_yes_is_an_answer_unless_the_number_opted_out(start_sms: Start, twilio: FakeTwilio) -> None:
    model = Model()
    async with start_sms(model) as h:
        await invite(h)
        await text(h, twilio, "YES")
        await h.idle()
        assert [p for p in model.prompts if "YES" in p], model.prompts  # a guest's answer, for the model


async def test_help_gets_one_line_of_help(start_sms: Start, twilio: FakeTwilio) -> None:
    model = Model()
    async with start_sms(model) as h:
        korean = texted_back(await text(h, twilio, "HELP"))
        english = texted_back(await text(h, twilio, "info", sender="+14155550100"))
        await h.idle()
    assert korean is not None and "STOP" in korean and "초대" in korean
    assert english is not None and "STOP" in english and "\n" not in english
    assert model.prompts == []


async def test_a_failed_delivery_is_noted_from_the_status_callback(
    start_sms: Start, twilio: FakeTwilio
) -> None:
    async with start_sms(Model()) as h:
        async with AsyncExitStack() as stack:
            channel = open_sms(h.settings, h.redis, stack)
            assert channel is not None
            await channel.send_text(f"sms:{GUEST}", "초대장이에요", dedup_id="invitation-1")
        [message] = twilio.messages
        delivered = await post_signed(h.http, twilio.status(message, "delivered"))
        assert delivered.status_code == 200
        assert await SmsNumbers(h.redis).last_failure(GUEST) is None
        failed = twilio.status(message, "undelivered", error_code=30003)
        assert (await post_signed(h.http, failed, headers={"x-twilio-signature": "x"})).status_code == 403
        assert await SmsNumbers(h.redis).last_failure(GUEST) is None
        assert (await post_signed(h.http, failed)).status_code == 200
        failure = await SmsNumbers(h.redis).last_failure(GUEST)
        assert failure is not None
        assert (failure.status, failure.error_code, failure.message_sid) == (
            "undelivered",
            30003,
            message["sid"],
        )
        # The organizer's view says so, and so does the conversation's last failure (inspect).
        people = await SmsNumbers(h.redis).unreachable([f"tel:{GUEST}"])
        assert people == {f"tel:{GUEST}": "the last text to them was undelivered (Twilio error 30003)"}
        last = await Ledger(h.redis).last_failure(f"sms:{GUEST}")
        assert last is not None and "undelivered (Twilio error 30003)" in last["error"]
        # A later text delivered: the failure no longer stands.
        assert (await post_signed(h.http, twilio.status(message, "delivered"))).status_code == 200
        assert await SmsNumbers(h.redis).unreachable([f"tel:{GUEST}"]) == {}


@pytest.mark.parametrize(
    ("change", "missing"),
    [({"From": ""}, "From"), ({"MessageSid": ""}, "MessageSid"), ({"From": "010-5550-1234"}, "From")],
)
async def test_a_signed_form_without_what_a_text_has_is_400(
    start_sms: Start, twilio: FakeTwilio, change: dict[str, str], missing: str
) -> None:
    model = Model()
    async with start_sms(model) as h:
        await invite(h)
        good = twilio.inbound(INBOUND, sender=GUEST, body="금요일 괜찮아요")
        bad: Signed = twilio.sign(INBOUND, {**good.form, **change})
        response = await post_signed(h.http, bad)
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == "invalid_webhook"
        assert missing in response.json()["error"]["message"]
        status = twilio.sign(f"{PUBLIC}/api/v1/webhooks/twilio/status", {"AccountSid": ACCOUNT_SID})
        assert (await post_signed(h.http, status)).status_code == 400
        await h.idle()
        assert model.prompts == []
