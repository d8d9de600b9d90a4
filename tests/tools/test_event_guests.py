"""Guests and cancellations through the event tools: who is told what, in which language, and once."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pydantic_ai import models
from redis.asyncio import Redis

from tests.tools.support import RecordingInviter, content, fixed, retried, run_tool
from truloop_assistant.backends import Backends
from truloop_assistant.backends.events import RedisEventStore
from truloop_assistant.backends.users import SAMPLE_USERS_FILE, RedisUserDirectory, load_users_file
from truloop_assistant.store import keys
from truloop_assistant.tools.event_tools import event_server_toolset
from truloop_assistant.tools.guest_tools import guest_toolset

models.ALLOW_MODEL_REQUESTS = False

LUNCH = {
    "title": "디자인 점심",
    "start_time": "2026-12-02T12:00:00+09:00",
    "end_time": "2026-12-02T13:00:00+09:00",
    "location": "판교 오피스",
    "availability_deadline": "2026-11-30T18:00:00+09:00",
}
SEOUL = ZoneInfo("Asia/Seoul")
WEEK = {"start_date": "2026-11-30T00:00:00+09:00", "end_date": "2026-12-06T23:59:59+09:00"}


@pytest.fixture
def inviter() -> RecordingInviter:
    return RecordingInviter()


@pytest.fixture
async def backends(redis: Redis) -> Backends:
    directory = RedisUserDirectory(redis)
    await directory.import_users(load_users_file(SAMPLE_USERS_FILE))
    return Backends(
        users=directory,
        events=RedisEventStore(redis, clock=fixed),
        knowledge=None,  # type: ignore[arg-type]
        memory=None,  # type: ignore[arg-type]
        places=None,  # type: ignore[arg-type]
    )


async def ask(
    backends: Backends, inviter: RecordingInviter | None, tool: str, user: str = "jeff", **args: Any
) -> str:
    prompt = args.pop("prompt", "점심 잡아줘")
    return await run_tool(
        event_server_toolset, backends, tool, user=user, prompt=prompt, inviter=inviter, **args
    )


async def lunch_with_guests(backends: Backends, inviter: RecordingInviter, **args: Any) -> dict[str, Any]:
    return content(await ask(backends, inviter, "create_event", **{**LUNCH, **args}))


async def reminders(redis: Redis) -> dict[str, datetime]:
    entries = await redis.zrange(keys.guest_reminders(), 0, -1, withscores=True)
    return {m.decode(): datetime.fromtimestamp(s, SEOUL) for m, s in entries}


async def test_each_invited_person_is_invited_once_in_their_chat_in_the_organizers_language(
    backends: Backends, inviter: RecordingInviter
) -> None:
    event = await lunch_with_guests(
        backends, inviter, invitee_user_ids=["mina"], guest_user_ids=["guest-kim", "guest-lee", "guest-kim"]
    )
    assert event["invitee_user_ids"] == ["mina"] and event["guest_user_ids"] == ["guest-kim", "guest-lee"]
    assert event["invitations"] == {"mina": "sent", "guest-kim": "sent", "guest-lee": "sent"}
    assert sorted((to, dedup) for to, _, dedup in inviter.sent) == [  # sent side by side
        ("guest-kim", f"invite:{event['event_id']}:guest-kim"),
        ("guest-lee", f"invite:{event['event_id']}:guest-lee"),
        ("mina", f"invite:{event['event_id']}:mina"),
    ]
    [text] = inviter.to("guest-kim")
    assert text == (
        "Jeff Kim 님이 “디자인 점심” 일정에 초대했어요: "
        "12월 2일 (수) 12:00–13:00 (Asia/Seoul), 장소 판교 오피스. "
        "참석할 수 있는 날짜를 이 채팅에 답장으로 알려 주세요 (11월 30일 (월) 18:00까지)."
    )
    # An invitee from the directory gets the same invitation, in their own time zone.
    assert inviter.to("mina") == [text]  # mina's zone is the organizer's (Asia/Seoul)

    [listed] = content(await ask(backends, inviter, "get_events", **WEEK))["events"]
    assert listed["guest_user_ids"] == ["guest-kim", "guest-lee"] and listed["guest_availability"] == {}
    invited = content(await run_tool(guest_toolset, backends, "list_invited_events", user="guest-lee"))
    assert [e["event_id"] for e in invited["events"]] == [event["event_id"]]


async def test_a_guest_who_wrote_to_the_assistant_before_is_invited_in_their_language(
    backends: Backends, inviter: RecordingInviter
) -> None:
    inviter.languages["guest-ann"] = "en"
    event = await lunch_with_guests(backends, inviter, guest_user_ids=["guest-ann", "guest-kim"])
    assert inviter.to("guest-ann") == [
        "Jeff Kim invites you to “디자인 점심”: Wed 2 Dec 12:00–13:00 (Asia/Seoul), at 판교 오피스. "
        "Reply here with the dates you're available by Mon 30 Nov 18:00."
    ]
    assert inviter.to("guest-kim")[0].startswith("Jeff Kim 님이")
    assert event["guest_languages"] == {"guest-ann": "en", "guest-kim": "ko"}


@pytest.mark.parametrize(
    ("tool", "args", "hint"),
    [
        ("create_event", {**LUNCH, "guest_user_ids": ["guest-kim", "mina", "sarah"]}, "invitee_user_ids"),
        ("invite_to_event", {"guest_user_ids": ["mina"]}, "invitee_user_ids"),
        ("update_event", {"add_guest_user_ids": ["guest-park", "mina"]}, "add_invitee_user_ids"),
    ],
)
async def test_directory_users_are_not_guests(
    backends: Backends, inviter: RecordingInviter, tool: str, args: dict[str, Any], hint: str
) -> None:
    event = await lunch_with_guests(backends, inviter)
    if tool != "create_event":
        args = {"event_id": event["event_id"], **args}
    problems = retried(await ask(backends, inviter, tool, **args))
    assert list(problems) == [""] and "in the directory; put directory users in" in problems[""]
    assert f"put directory users in {hint}" in problems[""] and "guest-kim" not in problems[""]
    assert inviter.sent == []
    [stored] = content(await ask(backends, inviter, "get_events", **WEEK))["events"]
    assert stored["guest_user_ids"] == []


async def test_guest_limits_and_the_organizer(backends: Backends, inviter: RecordingInviter) -> None:
    too_many = await ask(
        backends, inviter, "create_event", **LUNCH, guest_user_ids=[f"g{i}" for i in range(101)]
    )
    assert "List should have at most 100 items" in retried(too_many)["guest_user_ids"]
    event = await lunch_with_guests(backends, inviter, guest_user_ids=["jeff", "guest-kim"])
    assert event["guest_user_ids"] == ["guest-kim"]  # the organizer is never their own guest


async def test_without_an_inviter_guests_cannot_be_invited(backends: Backends) -> None:
    answer = await ask(backends, None, "create_event", **LUNCH, guest_user_ids=["guest-kim"])
    assert answer.startswith("failed: inviting guests is not available")
    assert content(await ask(backends, None, "get_events", **WEEK))["events"] == []
    assert content(await ask(backends, None, "create_event", **LUNCH))["guest_user_ids"] == []


async def test_a_guest_out_of_reach_is_named_and_the_others_are_invited(
    backends: Backends, inviter: RecordingInviter
) -> None:
    inviter.refused.add("guest-gone")
    event = await lunch_with_guests(backends, inviter, guest_user_ids=["guest-gone", "guest-kim"])
    assert event["invitations"]["guest-kim"] == "sent"
    assert event["invitations"]["guest-gone"].startswith("not delivered: Sendbird refused the direct channel")
    assert event["guest_user_ids"] == ["guest-gone", "guest-kim"]  # invited all the same


async def test_inviting_guests_later_invites_only_the_new_ones(
    backends: Backends, inviter: RecordingInviter
) -> None:
    event = await lunch_with_guests(backends, inviter, guest_user_ids=["guest-kim"])
    result = content(
        await ask(
            backends,
            inviter,
            "invite_to_event",
            event_id=event["event_id"],
            guest_user_ids=["guest-kim", "guest-lee"],
            prompt="also invite lee",
        )
    )
    assert (result["added"], result["guests_added"], result["guests_already_invited"]) == (
        [],
        ["guest-lee"],
        ["guest-kim"],
    )
    assert result["invitations"] == {"guest-lee": "sent"}
    assert [to for to, _, _ in inviter.sent] == ["guest-kim", "guest-lee"]
    assert inviter.to("guest-lee")[0].startswith("Jeff Kim invites you")  # this request was in English
    nobody = await ask(backends, inviter, "invite_to_event", event_id=event["event_id"], guest_user_ids=[])
    assert "give the ids of other people to invite" in retried(nobody)[""]


async def test_adding_and_removing_guests_invites_the_new_and_drops_the_removed(
    backends: Backends, inviter: RecordingInviter, redis: Redis
) -> None:
    event = await lunch_with_guests(backends, inviter, guest_user_ids=["guest-kim", "guest-lee"])
    answered = await run_tool(
        guest_toolset,
        backends,
        "update_guest_availability",
        user="guest-lee",
        event_id=event["event_id"],
        available_dates=["2026-11-27"],
    )
    assert content(answered)["available_dates"] == ["2026-11-27"]
    updated = content(
        await ask(
            backends,
            inviter,
            "update_event",
            event_id=event["event_id"],
            add_guest_user_ids=["guest-park"],
            remove_guest_user_ids=["guest-lee"],
        )
    )
    assert updated["guest_user_ids"] == ["guest-kim", "guest-park"]
    assert updated["invitations"] == {"guest-park": "sent"}
    assert updated["guest_availability"] == {}  # guest-lee left with their answer
    assert updated["guest_languages"] == {"guest-kim": "ko", "guest-park": "ko"}
    assert [to for to, _, _ in inviter.sent] == ["guest-kim", "guest-lee", "guest-park"]
    assert content(await run_tool(guest_toolset, backends, "list_invited_events", user="guest-lee")) == {
        "events": []
    }
    assert set(await reminders(redis)) == {
        f"{event['event_id']}:guest-kim",
        f"{event['event_id']}:guest-park",
    }


async def test_a_reminder_is_due_a_day_before_the_deadline_until_the_guest_answers(
    backends: Backends, inviter: RecordingInviter, redis: Redis
) -> None:
    event = await lunch_with_guests(backends, inviter, guest_user_ids=["guest-kim", "guest-lee"])
    kim, lee = (f"{event['event_id']}:{g}" for g in ("guest-kim", "guest-lee"))
    due = await reminders(redis)
    assert due[kim].isoformat() == due[lee].isoformat() == "2026-11-29T18:00:00+09:00"

    await run_tool(
        guest_toolset,
        backends,
        "update_guest_availability",
        user="guest-kim",
        event_id=event["event_id"],
        available_dates=[],  # none of the dates work: an answer all the same
    )
    assert set(await reminders(redis)) == {lee}

    # A moved deadline reminds anew; one less than a day away reminds halfway to it.
    await ask(
        backends,
        inviter,
        "update_event",
        event_id=event["event_id"],
        availability_deadline="2026-11-26T18:49:00+09:00",
    )
    assert (await reminders(redis))[lee].isoformat() == "2026-11-26T14:49:00+09:00"
    await ask(backends, inviter, "update_event", event_id=event["event_id"], availability_deadline="")
    assert len(await reminders(redis)) == 1  # left empty: the deadline stays
    await ask(backends, inviter, "update_event", event_id=event["event_id"], clear=["availability_deadline"])
    assert await reminders(redis) == {}


async def test_cancelling_tells_everyone_invited_once_and_the_event_is_gone(
    backends: Backends, inviter: RecordingInviter, redis: Redis
) -> None:
    event = await lunch_with_guests(
        backends, inviter, invitee_user_ids=["mina", "sarah"], guest_user_ids=["guest-kim"]
    )
    inviter.sent.clear()
    not_theirs = await ask(backends, inviter, "cancel_event", user="mina", event_id=event["event_id"])
    assert not_theirs.startswith(f"failed: only the organizer can change event '{event['event_id']}'")

    result = content(
        await ask(
            backends, inviter, "cancel_event", event_id=event["event_id"], reason="클라이언트 일정 변경"
        )
    )
    assert result["told"] == {"mina": "sent", "sarah": "sent", "guest-kim": "sent"}
    assert result["event"]["cancelled_at"] == "2026-11-26T01:49:00+00:00"
    assert sorted(dedup for _, _, dedup in inviter.sent) == sorted(
        f"cancel:{event['event_id']}:{who}" for who in ("mina", "sarah", "guest-kim")
    )
    assert inviter.to("guest-kim") == [
        "Jeff Kim 님이 “디자인 점심” (12월 2일 (수) 12:00–13:00 (Asia/Seoul)) 일정을 취소했어요. "
        "사유: 클라이언트 일정 변경"
    ]
    assert await reminders(redis) == {}
    assert content(await ask(backends, inviter, "get_events", **WEEK))["events"] == []
    assert content(await run_tool(guest_toolset, backends, "list_invited_events", user="guest-kim")) == {
        "events": []
    }
    details = await run_tool(
        guest_toolset, backends, "get_event_details", user="guest-kim", event_id=event["event_id"]
    )
    assert (
        details == "failed: '디자인 점심' was cancelled by its organizer (클라이언트 일정 변경); "
        "it no longer takes answers"
    )

    again = await ask(backends, inviter, "cancel_event", event_id=event["event_id"])
    assert again.startswith(f"failed: event '{event['event_id']}' was cancelled at")
    moved = await ask(backends, inviter, "update_event", event_id=event["event_id"], title="다시")
    assert moved.startswith(f"failed: event '{event['event_id']}' was cancelled at")
    assert len(inviter.sent) == 3


async def test_cancel_arguments(backends: Backends, inviter: RecordingInviter) -> None:
    assert (
        "should match pattern"
        in retried(await ask(backends, inviter, "cancel_event", event_id="lunch"))["event_id"]
    )
    missing = await ask(backends, inviter, "cancel_event", event_id="evt_000000000000")
    assert missing == "failed: there is no event with id 'evt_000000000000'"
    event = await lunch_with_guests(backends, inviter)
    long = await ask(backends, inviter, "cancel_event", event_id=event["event_id"], reason="x" * 501)
    assert "at most 500 characters" in retried(long)["reason"]
    alone = content(await ask(backends, None, "cancel_event", event_id=event["event_id"]))
    assert (
        alone["told"] == {} and alone["event"]["cancel_reason"] is None
    )  # nobody to tell, no inviter needed


async def test_invitees_added_later_are_invited_in_their_own_time_zone(
    backends: Backends, inviter: RecordingInviter, redis: Redis
) -> None:
    event = await lunch_with_guests(backends, inviter, invitee_user_ids=["mina"])
    added = content(
        await ask(
            backends,
            inviter,
            "invite_to_event",
            event_id=event["event_id"],
            invitee_user_ids=["mina", "sarah"],
        )
    )
    assert (added["added"], added["already_invited"]) == (["sarah"], ["mina"])
    assert added["invitations"] == {"sarah": "sent"}  # mina was invited once, at the start
    [text] = inviter.to("sarah")
    assert "12월 1일 (화) 19:00–20:00 (America/Los_Angeles)" in text  # noon in Seoul, in her zone
    assert len(inviter.to("mina")) == 1
    # Both owe their dates by the deadline: each has one reminder coming.
    due = await reminders(redis)
    assert set(due) == {f"{event['event_id']}:mina", f"{event['event_id']}:sarah"}


async def test_a_change_is_told_to_everyone_invited_and_new_people_are_invited(
    backends: Backends, inviter: RecordingInviter
) -> None:
    event = await lunch_with_guests(
        backends, inviter, invitee_user_ids=["mina"], guest_user_ids=["guest-kim"]
    )
    inviter.sent.clear()
    moved = content(
        await ask(
            backends,
            inviter,
            "update_event",
            event_id=event["event_id"],
            location="판교 2층",
            add_invitee_user_ids=["sarah"],
        )
    )
    assert moved["invitations"] == {"sarah": "sent"}
    assert moved["told"] == {"mina": "sent", "guest-kim": "sent"}
    [told] = inviter.to("mina")
    assert told.startswith("Jeff Kim 님이 “디자인 점심” 일정을 바꿨어요: ") and "장소 판교 2층" in told
    # A change nobody needs to hear of (the description) tells nobody.
    inviter.sent.clear()
    quiet = content(
        await ask(backends, inviter, "update_event", event_id=event["event_id"], description="메뉴는 비빔밥")
    )
    assert quiet["told"] == {} and inviter.sent == []
