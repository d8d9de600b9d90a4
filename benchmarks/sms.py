"""Guests by text message: how long from Twilio's webhook to the answer at Twilio, and how many SMS
segments an invitation takes.

The server (API and an embedded worker), a fake Twilio and a model that answers at once run in this
process, on a throwaway Redis, with the defaults a newcomer gets for SMS (``TRULOOP_TWILIO_RATE=1``,
``TRULOOP_SMS_MAX_SEGMENTS=3``) beside a tuned rate (``--rate``). Each guest is invited to an event;
their texts come in one after another (``--spacing`` apart), then all at once (``--burst`` guests),
and each answer is timed from the webhook's POST to its arrival at the fake Twilio.

    .venv/bin/python -m benchmarks.sms [--texts 10] [--spacing 1.1] [--burst 5] [--rate 10]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from benchmarks.harness import median, percentile, redis_under_test
from tests.fakes.sendbird import FakeSendbird
from tests.fakes.twilio import ACCOUNT_SID, AUTH_TOKEN, FROM_NUMBER, FakeTwilio, count_segments, post_signed
from tests.support import make_settings, serve, served
from truloop_assistant.app import create_app
from truloop_assistant.backends.events import Event, RedisEventStore
from truloop_assistant.channels.sms_segments import encoding
from truloop_assistant.local.embedded_redis import free_port
from truloop_assistant.tools.event_messages import sms_invitation

PUBLIC = "https://assistant.example.com"
ANSWER = "좋아요, 금요일 저녁으로 적어 둘게요. 다른 날도 괜찮으면 알려 주세요."
TARGET_S = 1.0
"""What a guest should wait for an answer on an idle server, beyond the model (target)."""


def answering() -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(ANSWER)])

    return FunctionModel(answer)


def number(i: int) -> str:
    return f"+8210555{i:05d}"


async def measure(rate: float | None, args: argparse.Namespace) -> dict[str, list[float]]:
    """Seconds from each webhook to its answer at Twilio: one after another, then in a burst."""
    overrides: dict[str, Any] = {
        "sms": "twilio",
        "twilio_account_sid": ACCOUNT_SID,
        "twilio_auth_token": AUTH_TOKEN,
        "twilio_from": FROM_NUMBER,
        "public_url": PUBLIC,
        "queue_name": "bench-sms",
    }
    if rate is not None:
        overrides["twilio_rate"] = rate
    async with (
        redis_under_test("standalone") as redis,
        served(FakeSendbird()) as sendbird,
        served(FakeTwilio()) as twilio,
    ):
        settings = make_settings(redis.url, sendbird.url, twilio_api_url=twilio.url, **overrides)
        app = create_app(settings, embedded_worker=True, model=answering())
        port = free_port()
        async with (
            serve(app, port),
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http,
        ):
            events = RedisEventStore(redis.nodes[0])
            start = datetime.now(UTC) + timedelta(days=3)
            guests = {f"tel:{number(i)}": "ko" for i in range(args.texts + args.burst + 1)}
            await events.create(
                "jeff",
                title="저녁 모임",
                start_time=start,
                end_time=start + timedelta(hours=2),
                guests=guests,
            )

            async def text(i: int, body: str) -> float:
                before = sum(m["to"] == number(i) for m in twilio.messages)
                sent = time.monotonic()
                inbound = twilio.inbound(f"{PUBLIC}/api/v1/webhooks/twilio", sender=number(i), body=body)
                (await post_signed(http, inbound)).raise_for_status()
                await twilio.wait_for_messages(before + 1, to=number(i), timeout=60)
                return time.monotonic() - sent

            await text(0, "안녕하세요")  # warm-up: imports, connections, the worker's first job
            await asyncio.sleep(1.1)
            one_by_one = []
            for i in range(1, args.texts + 1):
                one_by_one.append(await text(i, "금요일 괜찮아요"))
                await asyncio.sleep(args.spacing)
            burst = list(
                await asyncio.gather(
                    *(text(i, "금요일 괜찮아요") for i in range(args.texts + 1, len(guests)))
                )
            )
    return {"one_by_one": one_by_one, "burst": burst}


def invitation_segments() -> dict[str, tuple[int, str, int]]:
    """Language -> (segments, encoding, characters) of a typical invitation by SMS, with its link."""
    now = datetime.now(ZoneInfo("Asia/Seoul")).replace(microsecond=0)
    event = Event(
        event_id="ev_" + "0" * 16,
        owner_id="jeff",
        title="Design lunch",
        start_time=now + timedelta(days=3),
        end_time=now + timedelta(days=3, hours=1),
        location="Cafe 5F",
        availability_deadline=now + timedelta(days=2),
        created_at=now,
        updated_at=now,
    )
    link = f"{PUBLIC}/g/{'A' * 32}"  # a guest page's link: 32 characters of token
    found = {}
    for language in ("ko", "en"):
        text = sms_invitation(
            event,
            organizer="Jeff Kim" if language == "en" else "김지훈",
            language=language,
            zone=ZoneInfo("Asia/Seoul"),
            number="+821055501234",
            link=link,
        )
        found[language] = (count_segments(text), encoding(text), len(text))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=10, help="texts one after another")
    parser.add_argument("--spacing", type=float, default=1.1, help="seconds between those texts")
    parser.add_argument("--burst", type=int, default=5, help="guests texting at the same moment")
    parser.add_argument("--rate", type=float, default=10.0, help="TRULOOP_TWILIO_RATE of the tuned run")
    args = parser.parse_args()
    for language, (segments, enc, chars) in invitation_segments().items():
        print(f"invitation by SMS ({language}): {segments} segments ({enc}, {chars} characters); target <= 3")
    runs = (
        ("defaults (TRULOOP_TWILIO_RATE=1)", None),
        (f"tuned (TRULOOP_TWILIO_RATE={args.rate:g})", args.rate),
    )
    for label, rate in runs:
        figures = asyncio.run(measure(rate, args))
        one, burst = figures["one_by_one"], figures["burst"]
        print(
            f"{label}: webhook to the answer at Twilio, one after another:"
            f" median {median(one) * 1000:.0f} ms,"
            f" p90 {percentile(one, 0.9) * 1000:.0f} ms (target < {TARGET_S * 1000:.0f} ms);"
            f" {len(burst)} at once: median {median(burst):.2f} s, last {max(burst):.2f} s"
        )


if __name__ == "__main__":
    main()
