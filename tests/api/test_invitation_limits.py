"""How many people one person's events may invite, and at what cost to everyone else: at most 20 new
people a call, 100 an event and 100 an hour; a guest must be a chat user (a read, before the dialog);
no channel is made to learn anyone's language; and an event with many people never times its tool out.
"""

from __future__ import annotations

import time
from typing import Any

from tests.api.test_guest_journey import Script, call, confirmed, lunch, rpcs_in
from tests.fakes.sendbird import FakeSendbird
from tests.support import BOT


def retried(script: Script, words: str) -> list[str]:
    return [s.text for s in script.results.get(words, []) if s.outcome == "retried"]


async def test_a_hundred_invitees_and_a_hundred_made_up_guests_get_no_dialog_and_cost_sendbird_nothing(
    start_server: Any, directory: Any, sendbird: FakeSendbird
) -> None:
    script = Script()
    guests = [f"made-up-{n:03d}" for n in range(100)]
    invitees = ["mina", "seojun", "jiwoo"]
    async with start_server(model=script.model()) as h:
        words = "invite the whole company"
        script.plans[words] = [
            call("create_event", **lunch(invitee_user_ids=invitees, guest_user_ids=guests))
        ]
        await h.user_says(words, channel="jeff-1")
        await h.replies(1, channel="jeff-1")
        await h.idle()
        [told] = retried(script, words) or [str(script.results.get(words))]
        assert "invite at most 20 at a time" in told
        assert rpcs_in(h, "jeff-1") == []  # no confirmation dialog
    # Not one Platform API call for the people: no look-up, no channel, no message.
    assert sendbird.calls.get("creation", 0) == 0 and sendbird.calls.get("user", 0) == 0
    assert sendbird.channels_created == 0


async def test_a_guest_who_is_no_chat_user_is_refused_before_the_dialog_with_one_read_and_no_channel(
    start_server: Any, directory: Any, sendbird: FakeSendbird
) -> None:
    script = Script()
    sendbird.application.known_users = {BOT, "jeff", "guest-kim"}
    async with start_server(model=script.model()) as h:
        words = "lunch with kim and ghost"
        script.plans[words] = [call("create_event", **lunch(guest_user_ids=["guest-ghost", "guest-kim"]))]
        await h.user_says(words, channel="jeff-1")
        await h.replies(1, channel="jeff-1")
        await h.idle()
        [told] = retried(script, words)
        assert "no chat user has the id 'guest-ghost'" in told and "guest-kim" not in told
        assert rpcs_in(h, "jeff-1") == []
    assert sendbird.calls.get("user", 0) == 2  # one read per guest
    assert sendbird.channels_created == 0 and sendbird.calls.get("creation", 0) == 0


async def test_an_organizer_invites_at_most_a_hundred_people_an_hour(
    start_server: Any, directory: Any, sendbird: FakeSendbird
) -> None:
    script = Script()
    async with start_server(model=script.model()) as h:
        for n in range(5):  # five lunches of twenty guests each: a hundred people
            guests = [f"guest-{n}-{g:02d}" for g in range(20)]
            _, reply = await confirmed(
                h, script, f"lunch {n}", call("create_event", **lunch(guest_user_ids=guests))
            )
            [created] = script.results[f"lunch {n}"]
            assert created.outcome == "success", reply.text
        words = "one more lunch"
        script.plans[words] = [call("create_event", **lunch(guest_user_ids=["guest-one-more"]))]
        await h.user_says(words, channel="jeff-1")
        await h.replies(6, channel="jeff-1")
        [refused] = script.results[words]
        assert refused.outcome == "failed" and "at most 100 may be invited an hour" in refused.text
        await h.idle(timeout=60)
    assert h.direct_channel("guest-one-more") is None


async def test_twenty_people_invited_at_once_never_time_the_tool_out_and_each_is_told_once(
    start_server: Any, directory: Any, sendbird: FakeSendbird
) -> None:
    sendbird.enforce_plan("free-trial")
    script = Script()
    guests = [f"guest-{g:02d}" for g in range(20)]
    async with start_server(model=script.model(), sendbird_rates=None) as h:
        started = time.monotonic()
        _, reply = await confirmed(
            h, script, "a big lunch", call("create_event", **lunch(guest_user_ids=guests))
        )
        answered = time.monotonic() - started
        [created] = script.results["a big lunch"]
        assert created.outcome == "success", reply.text  # not timed out: stored, and it says whom it told
        invitations = created.json()["invitations"]
        assert set(invitations) == set(guests)
        assert all(v == "sent" or v.startswith("queued") for v in invitations.values()), invitations
        await h.each_told_once(guests)
    assert answered < 15, answered
