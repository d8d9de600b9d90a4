"""The confirmation dialog says who, what and when, in the user's language and time zone."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from pydantic_ai.messages import ToolCallPart

from truloop_assistant.backends import Backends
from truloop_assistant.backends.events import RedisEventStore
from truloop_assistant.deferred.approvals import ApprovalContext, describe_approval
from truloop_assistant.protocol.methods import ConfirmParams, EditableField

SEOUL = ZoneInfo("Asia/Seoul")
NOW = datetime(2026, 11, 26, 1, 49, tzinfo=UTC)
"""When the dialogs are written: December 2026 is this year."""


def q(text: str) -> str:
    """A name, id or text as the dialog quotes it: bidi-isolated (FSI … PDI)."""
    return f"\u2068{text}\u2069"


MEETING = {
    "title": "Design review",
    "start_time": "2026-12-02T03:00:00Z",
    "end_time": "2026-12-02T04:00:00Z",
    "invitee_user_ids": ["mina"],
}


async def test_create_event_in_korean_names_people_and_local_time(directory: Any) -> None:
    backends = Backends(users=directory, events=None, knowledge=None, memory=None, places=None)  # type: ignore[arg-type]
    context = ApprovalContext(language="ko", timezone=SEOUL, now=NOW, backends=backends, user_id="jeff")
    params = await describe_approval(ToolCallPart("create_event", MEETING), context)
    mina = await directory.get_profile("mina")
    assert params == ConfirmParams(
        title="일정을 만들까요?",
        message=f"“{q('Design review')}” 12월 2일 (수) 12:00–13:00 일정을 만들어요. "
        f"초대: {q(mina.name)} ({q('mina')}).",
        confirmLabel="확인",
        cancelLabel="취소",
        # What the person may change, labelled in their language, the times in their zone.
        editable=[
            EditableField(name="title", label="제목", type="text", value="Design review"),
            EditableField(
                name="start_time", label="시작", type="datetime", value="2026-12-02T12:00:00+09:00"
            ),
            EditableField(name="end_time", label="종료", type="datetime", value="2026-12-02T13:00:00+09:00"),
            EditableField(name="location", label="장소", type="text", value=""),
        ],
    )


async def test_create_event_in_english() -> None:
    context = ApprovalContext(language="en", timezone=SEOUL, now=NOW)
    params = await describe_approval(ToolCallPart("create_event", MEETING), context)
    assert params.title == "Create this event?"
    assert params.message == f"Create “{q('Design review')}” Wed 2 Dec 12:00–13:00. Invite {q('mina')}."
    assert (params.confirmLabel, params.cancelLabel) == ("Confirm", "Cancel")


async def test_a_failing_lookup_still_asks_with_the_plain_arguments() -> None:
    class Broken:
        async def get(self, event_id: str) -> None:
            raise ConnectionError("down")

    backends = Backends(users=None, events=Broken(), knowledge=None, memory=None, places=None)  # type: ignore[arg-type]
    context = ApprovalContext(language="en", timezone=SEOUL, now=NOW, backends=backends)
    params = await describe_approval(
        ToolCallPart("invite_to_event", {"event_id": "evt_1", "invitee_user_ids": ["mina"]}), context
    )
    assert params.title == "Allow invite to event?"
    assert "evt_1" in params.message and "mina" in params.message


async def test_an_update_says_what_it_removes_and_whom_it_adds_and_removes() -> None:
    context = ApprovalContext(language="en", timezone=SEOUL, now=NOW)
    change = {
        "event_id": "evt_1",
        "location": "",  # empty: changes nothing, and the dialog says nothing of it
        "clear": ["location"],
        "add_invitee_user_ids": ["mina"],
        "remove_invitee_user_ids": ["jiwoo"],
        "add_guest_user_ids": ["guest-kim"],
        "remove_guest_user_ids": ["guest-lee", "guest-park"],
    }
    params = await describe_approval(ToolCallPart("update_event", change), context)
    assert params.title == "Change this event?"
    assert params.message.endswith(
        f": remove the place; invite {q('mina')}; uninvite {q('jiwoo')}; add guests {q('guest-kim')} "
        f"(they get an invitation); remove guests {q('guest-lee')}, {q('guest-park')}."
    )
    korean = ApprovalContext(language="ko", timezone=SEOUL, now=NOW)
    deadline = {
        "event_id": "evt_1",
        "availability_deadline": "",
        "title": "점심",
        "clear": ["availability_deadline"],
    }
    params = await describe_approval(ToolCallPart("update_event", deadline), korean)
    assert params.message.endswith(f": 제목 → “{q('점심')}”; 응답 마감 삭제.")
    nothing = {"event_id": "evt_1", "location": "", "description": " ", "add_invitee_user_ids": []}
    params = await describe_approval(ToolCallPart("update_event", nothing), context)
    assert params.message.endswith(": no changes.")


async def test_guests_by_phone_number_are_shown_as_written() -> None:
    english = ApprovalContext(language="en", timezone=SEOUL, now=NOW)
    create = {**MEETING, "guest_phone_numbers": ["010-5550-1234"]}
    params = await describe_approval(ToolCallPart("create_event", create), english)
    assert params.message.endswith(f" The invitation also goes to the numbers {q('010-5550-1234')}.")
    change = {"event_id": "evt_1", "add_guest_phone_numbers": ["+821055505678"]}
    change["remove_guest_phone_numbers"] = ["010-5550-1234"]
    params = await describe_approval(ToolCallPart("update_event", change), english)
    assert params.message.endswith(
        f": add guests {q('+821055505678')} (they get an invitation); remove guests {q('010-5550-1234')}."
    )
    invite = {"event_id": "evt_1", "invitee_user_ids": ["mina"], "guest_phone_numbers": ["010-5550-1234"]}
    params = await describe_approval(ToolCallPart("invite_to_event", invite), english)
    assert params.message.startswith(f"Invite {q('mina')}, {q('010-5550-1234')} to ")
    remembering = ApprovalContext(language="en", timezone=SEOUL, now=NOW, may_remember=True)
    assert (await describe_approval(ToolCallPart("create_event", create), remembering)).always is None


async def test_moving_the_start_shows_where_the_end_goes(redis: Any) -> None:
    events = RedisEventStore(redis)
    event = await events.create(
        "jeff",
        title="Design review",
        start_time=datetime.fromisoformat(MEETING["start_time"]),
        end_time=datetime.fromisoformat("2026-12-02T04:30:00Z"),
    )
    backends = Backends(users=None, events=events, knowledge=None, memory=None, places=None)  # type: ignore[arg-type]
    context = ApprovalContext(language="en", timezone=SEOUL, now=NOW, backends=backends)
    moved = {"event_id": event.event_id, "start_time": "2026-12-02T07:00:00Z"}
    params = await describe_approval(ToolCallPart("update_event", moved), context)
    assert params.message == (
        f"Change “{q('Design review')}” Wed 2 Dec 12:00–13:30: time → Wed 2 Dec 16:00–17:30."
    )  # the event keeps its 90 minutes


async def test_the_dialog_shows_the_description_the_event_will_carry() -> None:
    details = "Bring the Q3 slides.\nWe pay from the team budget, not yours."
    english = ApprovalContext(language="en", timezone=SEOUL, now=NOW)
    params = await describe_approval(
        ToolCallPart("create_event", {**MEETING, "description": details}), english
    )
    assert params.message == (
        f"Create “{q('Design review')}” Wed 2 Dec 12:00–13:00. Invite {q('mina')}. "
        f"Description: “{q(details)}”"
    )
    korean = ApprovalContext(language="ko", timezone=SEOUL, now=NOW)
    change = {"event_id": "evt_1", "description": f"  {details} "}
    params = await describe_approval(ToolCallPart("update_event", change), korean)
    assert params.message.endswith(f": 설명 → “{q(details)}”.")


async def test_always_says_what_it_covers_in_the_persons_language(directory: Any) -> None:
    backends = Backends(users=directory, events=None, knowledge=None, memory=None, places=None)  # type: ignore[arg-type]
    korean = ApprovalContext(language="ko", timezone=SEOUL, backends=backends, may_remember=True)
    params = await describe_approval(ToolCallPart("create_event", MEETING), korean)
    assert params.always is not None and params.always.scope == {"invitees": ["mina"], "description": None}
    assert params.always.covers == (
        "‘항상 허용’: 30일 동안 묻지 않고 일정을 만들어요. "
        f"{q('박민아')} ({q('mina')}) 님 외의 사람을 초대하거나 설명을 넣으면 다시 물어봐요. "
        "그룹 채팅에서는 항상 물어봐요."
    )
    english = ApprovalContext(language="en", timezone=SEOUL, backends=backends, may_remember=True)
    relay = ToolCallPart("send_message_to_user", {"user_id": "seojun", "message": "lunch at 1"})
    params = await describe_approval(relay, english, {"message": "Lunch is at 1.", "written": True})
    assert params.always is not None and params.always.covers.startswith(
        f"“Always”: for 30 days, messages to {q('이서준')} ({q('seojun')}) are written and sent "
        "without asking you"
    )


async def test_always_is_not_offered_for_invitations_guests_or_where_the_step_says_no() -> None:
    english = ApprovalContext(language="en", timezone=SEOUL, may_remember=True)
    for tool, args in [
        ("invite_to_event", {"event_id": "evt_1", "invitee_user_ids": ["mina"]}),
        ("create_event", {**MEETING, "guest_user_ids": ["guest-kim"]}),
        ("update_event", {"event_id": "evt_1", "add_guest_user_ids": ["guest-kim"]}),
        ("cancel_event", {"event_id": "evt_1"}),
    ]:
        assert (await describe_approval(ToolCallPart(tool, args), english)).always is None, tool
    group = ApprovalContext(language="en", timezone=SEOUL)  # a group chat, or a run quoting others
    assert (await describe_approval(ToolCallPart("create_event", MEETING), group)).always is None


async def test_a_time_shows_its_year_when_it_is_not_this_year_or_the_event_ends_on_another_day() -> None:
    korean = ApprovalContext(language="ko", timezone=SEOUL, now=NOW)
    next_year = {
        "title": "시무식",
        "start_time": "2027-01-05T10:00:00+09:00",
        "end_time": "2027-01-05T11:00:00+09:00",
    }
    params = await describe_approval(ToolCallPart("create_event", next_year), korean)
    assert "2027년 1월 5일 (화) 10:00–11:00" in params.message
    trip = {
        "title": "Trip",
        "start_time": "2026-12-20T10:00:00+09:00",
        "end_time": "2026-12-23T18:00:00+09:00",
    }
    english = ApprovalContext(language="en", timezone=SEOUL, now=NOW)
    params = await describe_approval(ToolCallPart("create_event", trip), english)
    assert "Sun 20 Dec 2026 10:00 – Wed 23 Dec 2026 18:00" in params.message
    # Over midnight into the next year, in the person's zone: both days with their years.
    late = {
        "title": "Party",
        "start_time": "2026-12-31T22:00:00+09:00",
        "end_time": "2027-01-01T02:00:00+09:00",
    }
    params = await describe_approval(ToolCallPart("create_event", late), english)
    assert "Thu 31 Dec 2026 22:00 – Fri 1 Jan 2027 02:00" in params.message
