"""A friend without the app: invited by phone number, they get one SMS with a link, mark days on their
guest page and by SMS, and the organizer sees every day; their SMS is answered by SMS."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from tests.api.test_guest_journey import Script, Seen, call, confirmed, lunch, today
from tests.api.test_twilio_webhook import INBOUND, PUBLIC
from tests.fakes.twilio import ACCOUNT_SID, AUTH_TOKEN, FROM_NUMBER, FakeTwilio, count_segments, post_signed
from tests.support import served
from truloop_assistant.tools.device_tools import DEVICE_TOOLS

NUMBER = "+821055501234"
GUEST = f"tel:{NUMBER}"


@pytest.fixture
async def twilio() -> AsyncIterator[FakeTwilio]:
    async with served(FakeTwilio()) as fake:
        yield fake


def sms_settings(twilio: FakeTwilio) -> dict[str, Any]:
    return {
        "sms": "twilio",
        "twilio_account_sid": ACCOUNT_SID,
        "twilio_auth_token": AUTH_TOKEN,
        "twilio_from": FROM_NUMBER,
        "twilio_api_url": twilio.url,
        "twilio_rate": 50,
        "public_url": PUBLIC,
    }


def day(n: int) -> str:
    return (today() + timedelta(days=n)).isoformat()


def add_a_day(extra: str) -> Any:
    """The guest's model: read their invitation, then save the dates they gave plus ``extra``."""

    def step(seen: list[Seen]) -> list[tuple[str, dict[str, Any]]]:
        [event] = seen[-1].json()["events"]
        dates = [*event["your_available_dates"], extra]
        return [("update_guest_availability", {"event_id": event["event_id"], "available_dates": dates})]

    return step


async def test_a_friend_invited_by_number_answers_by_link_and_by_sms(
    start_server: Any, directory: Any, twilio: FakeTwilio
) -> None:
    script = Script()
    async with start_server(model=script.model(), **sms_settings(twilio)) as h:
        # Jeff (in Korea) invites a friend by the number as people write it there.
        params, reply = await confirmed(
            h,
            script,
            "lunch with my friend",
            call("create_event", **lunch(guest_phone_numbers=["010-5550-1234"])),
        )
        assert "010-5550-1234" in params["message"]  # the dialog shows the number he typed
        [created] = script.results["lunch with my friend"]
        event = created.json()
        assert (created.tool, created.outcome) == ("create_event", "success"), reply.text
        assert event["guest_user_ids"] == [GUEST]

        # One SMS, with the event and a link under the public URL.
        [invitation] = await twilio.wait_for_messages(1, to=NUMBER, timeout=15)
        await h.idle()
        assert len(twilio.messages) == 1
        assert "Design lunch" in invitation["body"] and count_segments(invitation["body"]) <= 3
        [link] = re.findall(rf"{re.escape(PUBLIC)}/g/\S+", invitation["body"])
        path = link.removeprefix(PUBLIC)

        # The page names the event, and its JSON lists the days to pick up to the deadline.
        page = await h.http.get(path)
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        view = (await h.http.get(f"{path}/api")).json()
        assert view["event"]["title"] == "Design lunch" and view["mine"] == []
        assert view["dates"][0] == day(0) and day(2) in view["dates"] and day(3) not in view["dates"]
        saved = await h.http.put(f"{path}/api/availability", json={"dates": [day(0), day(1)]})
        assert saved.status_code == 200, saved.text

        # A third day by SMS: the guest agent, with no device tool, answers by SMS.
        words = "모레도 괜찮아요"
        script.plans[words] = [call("list_invited_events"), add_a_day(day(2))]
        signed = twilio.inbound(INBOUND, sender=NUMBER, body=words)
        assert (await post_signed(h.http, signed)).status_code == 200
        [_, answer] = await twilio.wait_for_messages(2, to=NUMBER, timeout=15)
        assert count_segments(answer["body"]) <= 3 and "update_guest_availability success" in answer["body"]
        assert not set(script.tools[words]) & set(DEVICE_TOOLS)

        # Jeff sees all three days.
        mine = "who can come to the lunch?"
        script.plans[mine] = [call("get_event_details", event_id=event["event_id"])]
        await h.user_says(mine, user="jeff", channel="jeff-1")
        await h.replies(2, channel="jeff-1")
        [details] = script.results[mine]
        assert details.json()["availability"] == {GUEST: sorted([day(0), day(1), day(2)])}
        assert (await h.http.get(f"{path}/api")).json()["mine"] == sorted([day(0), day(1), day(2)])

        # STOP: nothing more goes to that number.
        stop = twilio.inbound(INBOUND, sender=NUMBER, body="STOP")
        assert (await post_signed(h.http, stop)).status_code == 200
        script.plans["more?"] = [call("list_invited_events")]
        await post_signed(h.http, twilio.inbound(INBOUND, sender=NUMBER, body="more?"))
        await h.idle()
        assert len(twilio.messages) == 2 and "more?" not in script.tools

        # Jeff sees that texts no longer reach the friend.
        again = "is my friend still reachable?"
        script.plans[again] = [call("get_event_details", event_id=event["event_id"])]
        await h.user_says(again, user="jeff", channel="jeff-1")
        await h.replies(3, channel="jeff-1")
        [details] = script.results[again]
        assert "STOP" in details.json()["not_texted"][GUEST]


async def test_a_twilio_outage_delays_the_invitation_without_losing_or_doubling_it(
    start_server: Any, directory: Any, twilio: FakeTwilio
) -> None:
    script = Script()
    twilio.failures.extend([(503, 0.0)] * 12)  # down for longer than one send's own retries
    async with start_server(model=script.model(), **sms_settings(twilio)) as h:
        invite = call("create_event", **lunch(guest_phone_numbers=["+821055501234"]))
        _, reply = await confirmed(h, script, "lunch with my friend", invite)
        [created] = script.results["lunch with my friend"]
        assert created.json()["invitations"][GUEST].startswith("queued"), reply.text  # told, not lost
        assert twilio.messages == []
        # Twilio is back: the queued invitation goes out by itself, once.
        [invitation] = await twilio.wait_for_messages(1, to=NUMBER, timeout=30)
        await h.idle()
        assert "Design lunch" in invitation["body"] and len(twilio.messages) == 1
        assert twilio.failures == []
