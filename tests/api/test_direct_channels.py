"""A person's 1:1 chat with the assistant, through the running server: the one they already have is
used, whatever the app named its type, and one made for them is made once, however many messages it
carries and whichever worker sends them."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest

from tests.api.test_guest_journey import Script, call, confirmed, create_lunch, remind, says
from tests.support import BOT, Harness

pytestmark = pytest.mark.parametrize("redis_url", ["standalone", "cluster"], indirect=True)


def lookups_for(h: Harness, user_id: str) -> int:
    """How many times the server listed the bot's channels with ``user_id`` on Sendbird."""
    return sum(
        listing.params.get("members_exactly_in") == user_id for listing in h.sendbird.user_channels.listings
    )


async def test_a_guest_with_a_chat_the_app_made_is_invited_there_and_no_channel_is_made(
    start_server: Any, directory: Any
) -> None:
    script = Script()
    async with start_server(model=script.model()) as h:
        h.sendbird.add_app_direct_channel("app-chat-kim", "guest-kim", custom_type="assistant-chat", bot=BOT)
        event = await create_lunch(h, script, guest_user_ids=["guest-kim"])
        assert event["invitations"] == {"guest-kim": "sent"}
        await h.idle()

        [invitation] = h.texts("app-chat-kim")
        assert invitation.startswith("Jeff Kim invites you to “Design lunch”: ")
        assert h.sendbird.channels_created == 0
        assert {m.channel_url for m in h.sendbird.messages} == {"jeff-1", "app-chat-kim"}

        # The guest answers in that chat, as in any 1:1 chat with the assistant.
        answer = await says(
            h,
            script,
            "which events am I invited to?",
            call("list_invited_events"),
            user="guest-kim",
            channel="app-chat-kim",
        )
        assert "Design lunch" in answer.text
        assert h.sendbird.channels_created == 0


async def test_a_guest_without_a_chat_gets_one_made_once_for_every_message_from_any_worker(
    start_server: Any, directory: Any
) -> None:
    script = Script()
    async with start_server(model=script.model()) as h:
        event = await create_lunch(h, script, guest_user_ids=["guest-lee"])
        assert event["invitations"] == {"guest-lee": "sent"}
        rename = call("update_event", event_id=event["event_id"], title="Team lunch")
        await confirmed(h, script, "call it the team lunch", rename)
        # A day later two other workers scan for reminders; one reminds the guest.
        later = time.time() + timedelta(days=1, hours=1).total_seconds()
        assert await remind(h, later, scanners=2) == 1
        await h.idle()

        lee = h.direct_channel("guest-lee")
        invitation, change, reminder = h.texts(lee)
        assert "Design lunch" in invitation and "Team lunch" in change and reminder.startswith("A reminder: ")
        assert h.sendbird.channels_created == 1
        # The channel was looked up once and created once, for all three messages.
        assert lookups_for(h, "guest-lee") == 1 and h.sendbird.calls["creation"] == 1
