"""Invitees from the directory end to end: invited in their own chat, reminded once, answering there
with their dates, which the organizer sees; told when the event changes or is cancelled.

The same running server as the guests' journey (tests/api/test_guest_journey.py), whose helpers this
uses: the organizer's words arrive as webhooks, dialogs are answered as the phone would, and each
invitee talks to the member agent in their 1:1 channel with the assistant.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from tests.api.test_guest_journey import (
    Script,
    Seen,
    call,
    confirmed,
    create_lunch,
    remind,
    says,
    this_week,
    today,
)

MEMBER_INVITE_TOOLS = {"list_invited_events", "update_availability", "get_event_details"}


def my_dates(dates: list[str]) -> Any:
    """Save these dates for the one invitation the last tool result listed."""

    def step(seen: list[Seen]) -> list[tuple[str, dict[str, Any]]]:
        [event] = seen[-1].json()["events"]
        return [("update_availability", {"event_id": event["event_id"], "available_dates": dates})]

    return step


async def test_an_invitee_is_invited_reminded_answers_and_the_organizer_sees_it(
    start_server: Any, directory: Any
) -> None:
    script = Script()
    async with start_server(model=script.model()) as h:
        event = await create_lunch(h, script, invitee_user_ids=["mina", "sarah"])
        assert event["invitations"] == {"mina": "sent", "sarah": "sent"}
        await h.idle()

        # One invitation each in their own chat with the assistant, in their own time zone.
        mina, sarah = h.direct_channel("mina"), h.direct_channel("sarah")
        assert mina is not None and sarah is not None
        [invitation] = h.texts(mina)
        assert invitation.startswith("Jeff Kim invites you to “Design lunch”: ")
        assert "(Asia/Seoul)" in invitation and "Reply here with the dates you're available by" in invitation
        [sarahs] = h.texts(sarah)
        assert "(America/Los_Angeles)" in sarahs

        # Mina asks what she is invited to and gives her dates, in plain words, to the member agent.
        words = "what am I invited to?"
        await says(h, script, words, call("list_invited_events"), user="mina", channel=mina)
        assert MEMBER_INVITE_TOOLS <= set(script.tools[words])
        assert "create_event" in script.tools[words]  # a member keeps every other tool
        [listed] = script.results[words]
        [view] = listed.json()["events"]
        assert (view["event_id"], view["organizer_name"]) == (event["event_id"], "Jeff Kim")
        assert view["availability"] is None and view["not_answered"] is None  # the organizer's only

        dates = [(today() + timedelta(days=d)).isoformat() for d in (1, 2)]
        words = "the next two days both work for me"
        answer = await says(
            h, script, words, call("list_invited_events"), my_dates(dates), user="mina", channel=mina
        )
        assert answer.text.startswith("update_availability success")
        assert script.results[words][-1].json()["available_dates"] == dates

        # The reminder goes to who has not answered (Sarah), once; Mina answered and gets none.
        assert await remind(h, time.time() + timedelta(days=1, hours=1).total_seconds(), scanners=2) == 1
        assert await remind(h, time.time() + timedelta(days=1, hours=2).total_seconds()) == 0
        assert len(h.texts(mina)) == 3  # her invitation and the two answers to her
        [_, reminder] = h.texts(sarah)
        assert reminder.startswith("A reminder: Jeff Kim is waiting for the dates you're available")

        # The organizer sees everyone's answer, and who has not answered.
        words = "who can come to the design lunch?"
        await says(
            h,
            script,
            words,
            call("get_events", **this_week()),
            lambda seen: [("get_event_details", {"event_id": seen[-1].json()["events"][0]["event_id"]})],
            user="jeff",
            channel="jeff-1",
        )
        listed, details = script.results[words]
        assert listed.json()["events"][0]["guest_availability"] == {"mina": dates}
        assert details.json()["availability"] == {"mina": dates}
        assert details.json()["not_answered"] == ["sarah"]

        # Moving it: both are told in their chat, in their zone; their answers stay.
        moved = {"start_time": event["start_time"].replace("T12:00", "T13:00")}
        moved["end_time"] = event["end_time"].replace("T13:00", "T14:00")
        _, reply = await confirmed(
            h,
            script,
            "move the design lunch an hour later",
            call("update_event", event_id=event["event_id"], **moved),
        )
        [updated] = script.results["move the design lunch an hour later"]
        assert updated.json()["told"] == {"mina": "sent", "sarah": "sent"}, reply.text
        await h.idle()
        told_mina, told_sarah = h.texts(mina)[-1], h.texts(sarah)[-1]
        assert told_mina.startswith("Jeff Kim changed “Design lunch”: now ") and "13:00–14:00" in told_mina
        assert "(America/Los_Angeles)" in told_sarah
        assert updated.json()["guest_availability"] == {"mina": dates}

        # Cancelling: both are told, once.
        cancel = call("cancel_event", event_id=event["event_id"])
        _, reply = await confirmed(h, script, "cancel the design lunch", cancel)
        [cancelled] = script.results["cancel the design lunch"]
        assert cancelled.json()["told"] == {"mina": "sent", "sarah": "sent"}, reply.text
        await h.idle()
        assert h.texts(mina)[-1].startswith("Jeff Kim cancelled “Design lunch” (")
        assert h.texts(sarah)[-1].startswith("Jeff Kim cancelled “Design lunch” (")
        assert h.sendbird.requests == len(h.sendbird.messages)  # nothing was sent twice

        # The invitation is gone from Mina's list.
        words = "anything for me still?"
        await says(h, script, words, call("list_invited_events"), user="mina", channel=mina)
        assert script.results[words][0].json() == {"events": []}
