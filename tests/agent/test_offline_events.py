"""The offline model with app events: inviting guests, cancelling, and a guest answering with dates.

Driven through the real member and guest agents, with the event store in the test Redis and an
inviter that records what each person would read in their chat.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied, models
from pydantic_ai.messages import ModelMessage
from redis.asyncio import Redis

from tests.tools.support import RecordingInviter, fixed
from truloop_assistant.agent.agents import MemberAgent, build_guest_agent, build_member_agent
from truloop_assistant.agent.offline import build_offline_model
from truloop_assistant.backends import Backends
from truloop_assistant.backends.events import Event, RedisEventStore
from truloop_assistant.backends.users import SAMPLE_USERS_FILE, RedisUserDirectory, load_users_file
from truloop_assistant.tools.agent_deps import AgentDeps

models.ALLOW_MODEL_REQUESTS = False

SEOUL = ZoneInfo("Asia/Seoul")
GUEST = "kim"
"""A chat user outside the directory."""
# The clock is Thursday 2026-11-26 10:49 in Seoul: "tomorrow" is Friday 27 November.


@pytest.fixture
def store(redis: Redis) -> RedisEventStore:
    return RedisEventStore(redis, clock=fixed)


@pytest.fixture
def inviter() -> RecordingInviter:
    return RecordingInviter()


@pytest.fixture
async def backends(redis: Redis, store: RedisEventStore) -> Backends:
    directory = RedisUserDirectory(redis)
    await directory.import_users(load_users_file(SAMPLE_USERS_FILE))
    return Backends(
        users=directory,
        events=store,
        knowledge=None,
        memory=None,
        places=None,
    )


@pytest.fixture
def member() -> MemberAgent:
    return build_member_agent(build_offline_model(timezone=SEOUL, clock=fixed), tool_timeout_s=10)


@pytest.fixture
def guest() -> MemberAgent:
    return build_guest_agent(build_offline_model(timezone=SEOUL, clock=fixed), tool_timeout_s=10)


def deps_of(user: str, backends: Backends, inviter: RecordingInviter) -> AgentDeps:
    return AgentDeps(
        user_id=user, channel_url=f"c-{user}", timezone=SEOUL, clock=fixed, backends=backends, inviter=inviter
    )


@pytest.fixture
def jeff(backends: Backends, inviter: RecordingInviter) -> AgentDeps:
    return deps_of("jeff", backends, inviter)


@pytest.fixture
def kim(backends: Backends, inviter: RecordingInviter) -> AgentDeps:
    return deps_of(GUEST, backends, inviter)


class Turn:
    """One message to an agent: the confirmation it asks for (if any), then its answer."""

    def __init__(self, agent: MemberAgent, deps: AgentDeps) -> None:
        self.agent, self.deps = agent, deps
        self.history: list[ModelMessage] = []

    async def say(self, prompt: str) -> Any:
        result = await self.agent.run(prompt, deps=self.deps, message_history=self.history)
        self.history = result.all_messages()
        return result.output

    def confirmation(self, output: Any) -> tuple[str, dict[str, Any]]:
        """The one call waiting for the user's confirmation: its tool and arguments."""
        assert isinstance(output, DeferredToolRequests), output
        [call] = output.approvals
        return call.tool_name, call.args_as_dict()

    async def answer(self, output: Any, *, confirmed: bool = True) -> Any:
        assert isinstance(output, DeferredToolRequests), output
        approvals: dict[str, bool | ToolApproved | ToolDenied] = {
            call.tool_call_id: confirmed for call in output.approvals
        }
        result = await self.agent.run(
            message_history=self.history,
            deferred_tool_results=DeferredToolResults(approvals=approvals),
            deps=self.deps,
        )
        self.history = result.all_messages()
        return result.output


async def cancelled(store: RedisEventStore, events: list[Event]) -> list[str]:
    """The titles of those events that are cancelled now."""
    return [e.title for e in [await store.get(e.event_id) for e in events] if e and e.cancelled_at]


async def organized(store: RedisEventStore, title: str, start: str, end: str, **people: Any) -> Event:
    start_time, end_time = datetime.fromisoformat(start), datetime.fromisoformat(end)
    if isinstance(deadline := people.get("availability_deadline"), str):
        people["availability_deadline"] = datetime.fromisoformat(deadline)
    return await store.create("jeff", title=title, start_time=start_time, end_time=end_time, **people)


@pytest.fixture
async def tomorrow(store: RedisEventStore) -> list[Event]:
    """Jeff's two events tomorrow: the team meeting (mina invited, kim a guest) and a design review."""
    return [
        await organized(
            store,
            "팀 회의",
            "2026-11-27T10:00:00+09:00",
            "2026-11-27T11:00:00+09:00",
            invitee_user_ids=["mina"],
            guests={GUEST: "ko"},
        ),
        await organized(store, "Design review", "2026-11-27T15:00:00+09:00", "2026-11-27T16:00:00+09:00"),
    ]


@pytest.fixture
async def dinner(store: RedisEventStore) -> Event:
    """An event kim is a guest of, with a deadline for their dates."""
    return await organized(
        store,
        "연말 디너",
        "2026-12-18T19:00:00+09:00",
        "2026-12-18T21:00:00+09:00",
        location="성수동",
        guests={GUEST: "ko"},
        availability_deadline="2026-12-10T18:00:00+09:00",
    )


# -- the organizer invites guests


async def test_a_korean_lunch_with_an_invitee_and_a_guest(
    member: MemberAgent, jeff: AgentDeps, store: RedisEventStore, inviter: RecordingInviter
) -> None:
    turn = Turn(member, jeff)
    asked = await turn.say("내일 12시에 점심 잡아줘 @mina 게스트 @kim")
    assert turn.confirmation(asked) == (
        "create_event",
        {
            "title": "점심",
            "start_time": "2026-11-27T12:00:00+09:00",
            "end_time": "2026-11-27T13:00:00+09:00",
            "invitee_user_ids": ["mina"],
            "guest_user_ids": [GUEST],
        },
    )
    assert await turn.answer(asked) == (
        "일정을 만들었어요: “점심” 11월 27일 (금) 12:00–13:00. 게스트 kim님에게 대화방으로 초대장을 보냈어요."
    )
    [invitation] = inviter.to(GUEST)
    assert "점심" in invitation
    [event] = await store.list_invited(GUEST)
    assert event.invitee_user_ids == ["mina"] and event.guest_user_ids == [GUEST]


async def test_an_english_lunch_with_guests_and_a_deadline_addressed_to_the_assistant(
    member: MemberAgent, jeff: AgentDeps, inviter: RecordingInviter
) -> None:
    turn = Turn(member, jeff)
    asked = await turn.say(
        "@truloop-assistant schedule a lunch next wednesday at noon with @mina and guests @kim and @lee, "
        "answers by monday"
    )
    tool, args = turn.confirmation(asked)
    assert tool == "create_event"
    assert args == {
        "title": "Lunch",
        "start_time": "2026-12-02T12:00:00+09:00",
        "end_time": "2026-12-02T13:00:00+09:00",
        "invitee_user_ids": ["mina"],  # the assistant, addressed first, is not invited
        "guest_user_ids": [GUEST, "lee"],
        "availability_deadline": "2026-11-30T23:59:59+09:00",
    }
    assert await turn.answer(asked) == (
        "Done: “Lunch” on Wed 2 Dec, 12:00–13:00. Guests kim and lee each got an invitation "
        "in their chat with me (they answer with their dates by Mon 30 Nov 23:59)."
    )
    assert len(inviter.to(GUEST)) == len(inviter.to("lee")) == 1


@pytest.mark.parametrize(
    ("prompt", "invitees", "guests", "deadline"),
    [
        ("@truloop-assistant 내일 점심 잡아줘", None, None, None),
        ("@mina 게스트 @kim 내일 점심 잡아줘", None, [GUEST], None),
        ("다음 주 수요일 저녁 7시에 회식 잡아줘 @mina @kim은 게스트로", ["mina"], [GUEST], None),
        ("게스트 @kim이랑 @lee 초대해서 12월 3일 오후 2시에 미팅 잡아줘", None, [GUEST, "lee"], None),
        ("Set up a meeting next friday with @mina and @kim as a guest", ["mina"], [GUEST], None),
        (
            "다음 주 수요일 12시에 점심 잡아줘 @mina 게스트 @kim 금요일까지 답",
            ["mina"],
            [GUEST],
            "2026-11-27T23:59:59+09:00",
        ),
        # A deadline after the start is the start itself.
        (
            "내일 12시에 점심 잡아줘 게스트 @kim 다음 주 월요일까지 답 받아줘",
            None,
            [GUEST],
            "2026-11-27T12:00:00+09:00",
        ),
    ],
)
async def test_who_is_invited_and_who_is_a_guest(
    member: MemberAgent,
    jeff: AgentDeps,
    prompt: str,
    invitees: list[str] | None,
    guests: list[str] | None,
    deadline: str | None,
) -> None:
    _, args = Turn(member, jeff).confirmation(await Turn(member, jeff).say(prompt))
    assert args.get("invitee_user_ids") == invitees
    assert args.get("guest_user_ids") == guests
    assert args.get("availability_deadline") == deadline


@pytest.mark.parametrize("prompt", ["@truloop-assistant mina 연락처 알려줘", "@mina 연락처 알려줘"])
async def test_a_leading_mention_is_still_who_a_look_up_is_about(
    member: MemberAgent, jeff: AgentDeps, prompt: str
) -> None:
    turn = Turn(member, jeff)
    assert (await turn.say(prompt)).startswith("찾은 사람:\n- 박민아 (mina)")
    [call] = [p for m in turn.history for p in m.parts if p.part_kind == "tool-call"]
    assert (call.tool_name, call.args_as_dict()) == ("search_users", {"query": "mina"})


async def test_a_guest_word_the_directory_knows_better_is_explained(
    member: MemberAgent, jeff: AgentDeps
) -> None:
    turn = Turn(member, jeff)
    answer = await turn.say("schedule a lunch tomorrow at noon with guest @mina")
    assert answer == (
        "mina is in the directory, so they can't be a guest: ask again without 'guest' and I'll invite "
        "them directly."
    )


async def test_someone_outside_the_directory_invited_without_the_guest_word_gets_a_hint(
    member: MemberAgent, jeff: AgentDeps
) -> None:
    answer = await Turn(member, jeff).say("내일 12시에 점심 잡아줘 @kim")
    assert answer == (
        "일정을 만들지 못했어요: kim은(는) 사내 디렉터리에 없어요. "
        "외부 사람은 '게스트 @kim'처럼 게스트로 초대해 주세요."
    )


# -- the organizer cancels


async def test_cancelling_by_title_tells_everyone_invited(
    member: MemberAgent,
    jeff: AgentDeps,
    store: RedisEventStore,
    inviter: RecordingInviter,
    tomorrow: list[Event],
) -> None:
    turn = Turn(member, jeff)
    asked = await turn.say("@truloop-assistant 그 회의 취소해줘")
    assert turn.confirmation(asked) == ("cancel_event", {"event_id": tomorrow[0].event_id})
    assert (
        await turn.answer(asked)
        == "11월 27일 (금) 10:00–11:00 “팀 회의” 일정을 취소했어요. mina, kim님에게 알렸어요."
    )
    assert len(inviter.to("mina")) == len(inviter.to(GUEST)) == 1
    assert await cancelled(store, tomorrow) == ["팀 회의"]


async def test_cancelling_in_english_with_a_reason(
    member: MemberAgent,
    jeff: AgentDeps,
    store: RedisEventStore,
    inviter: RecordingInviter,
    tomorrow: list[Event],
) -> None:
    turn = Turn(member, jeff)
    asked = await turn.say("Cancel tomorrow's Design review because the client postponed")
    assert turn.confirmation(asked) == (
        "cancel_event",
        {"event_id": tomorrow[1].event_id, "reason": "the client postponed"},
    )
    assert (
        await turn.answer(asked)
        == "Cancelled “Design review” (Fri 27 Nov 15:00–16:00). Nobody else was invited."
    )
    design_review = await store.get(tomorrow[1].event_id)
    assert design_review is not None and design_review.cancel_reason == "the client postponed"


async def test_of_two_events_with_the_title_the_earlier_is_meant_whatever_their_offsets(
    member: MemberAgent, jeff: AgentDeps, store: RedisEventStore
) -> None:
    later = await organized(store, "Design review", "2026-11-27T06:00:00+00:00", "2026-11-27T07:00:00+00:00")
    earlier = await organized(
        store, "Design review", "2026-11-27T10:00:00+09:00", "2026-11-27T11:00:00+09:00"
    )
    turn = Turn(member, jeff)
    asked = await turn.say("cancel the design review")
    assert turn.confirmation(asked) == ("cancel_event", {"event_id": earlier.event_id})
    assert await cancelled(store, [later, earlier]) == []


async def test_declining_the_cancellation_keeps_the_event(
    member: MemberAgent, jeff: AgentDeps, store: RedisEventStore, tomorrow: list[Event]
) -> None:
    turn = Turn(member, jeff)
    asked = await turn.say("cancel the design review")
    assert await turn.answer(asked, confirmed=False) == "OK, I won't do that."
    assert await cancelled(store, tomorrow) == []


async def test_an_event_that_is_not_there_is_not_cancelled(
    member: MemberAgent, jeff: AgentDeps, store: RedisEventStore, tomorrow: list[Event]
) -> None:
    answer = await Turn(member, jeff).say("cancel the lunch")
    assert answer.splitlines() == [
        "I couldn't tell which event you mean. Your upcoming events:",
        "- Fri 27 Nov 10:00–11:00 팀 회의",
        "- Fri 27 Nov 15:00–16:00 Design review",
        "Tell me the title of the one to cancel.",
    ]
    assert await cancelled(store, tomorrow) == []


@pytest.mark.parametrize("prompt", ["How do I cancel a vacation request?", "휴가 신청 취소는 어떻게 해?"])
async def test_asking_how_cancelling_works_cancels_nothing(
    member: MemberAgent, jeff: AgentDeps, store: RedisEventStore, tomorrow: list[Event], prompt: str
) -> None:
    turn = Turn(member, jeff)
    await turn.say(prompt)
    calls = [p.tool_name for m in turn.history for p in m.parts if p.part_kind == "tool-call"]
    assert calls == ["search_knowledge_base"]
    assert await cancelled(store, tomorrow) == []


async def test_nothing_to_cancel(member: MemberAgent, jeff: AgentDeps) -> None:
    assert (
        await Turn(member, jeff).say("점심 약속 취소해줘")
        == "취소할 일정이 없어요: 앞으로 예정된 일정이 없어요."
    )


async def test_it_cancels_the_event_just_made_when_the_request_names_none(
    member: MemberAgent, jeff: AgentDeps, store: RedisEventStore, tomorrow: list[Event]
) -> None:
    turn = Turn(member, jeff)
    await turn.answer(await turn.say("schedule a team sync on 2026-12-01 at 9:00 am"))
    asked = await turn.say("actually, cancel it")
    tool, args = turn.confirmation(asked)
    event = await store.get(args["event_id"])
    assert tool == "cancel_event" and event is not None and event.title == "Team sync"
    assert (
        await turn.answer(asked) == "Cancelled “Team sync” (Tue 1 Dec 09:00–10:00). Nobody else was invited."
    )


# -- the organizer looks at an event's guests


async def test_the_organizer_sees_which_dates_each_invited_person_gave(
    member: MemberAgent, jeff: AgentDeps, store: RedisEventStore, tomorrow: list[Event]
) -> None:
    await store.invite(tomorrow[0].event_id, [], {"lee": "en"})
    await store.set_availability(tomorrow[0].event_id, GUEST, ["2026-12-02", "2026-12-03"])
    answer = await Turn(member, jeff).say("내일 팀 회의 자세히 보여줘. 게스트들이 가능하다고 한 날짜도")
    assert answer.splitlines() == [
        "“팀 회의” 11월 27일 (금) 10:00–11:00",
        "주최: Jeff Kim",
        "초대한 사람들이 가능하다고 한 날짜:",
        "- mina: 아직 답하지 않았어요",  # an invitee from the directory
        "- lee: 아직 답하지 않았어요",
        "- kim: 12월 2일 (수), 12월 3일 (목)",
    ]
    english = await Turn(member, jeff).say("Show me the details of tomorrow's Design review")
    assert english.splitlines() == [
        "“Design review”, Fri 27 Nov 15:00–16:00",
        "Organizer: Jeff Kim",
        "Nobody is invited.",
    ]


# -- a guest in their chat with the assistant


async def test_a_guest_sees_their_invitations(guest: MemberAgent, kim: AgentDeps, dinner: Event) -> None:
    answer = await Turn(guest, kim).say("초대받은 거 뭐 있어?")
    assert answer.splitlines() == [
        "초대받은 일정이에요:",
        "- 12월 18일 (금) 19:00–21:00 연말 디너 · 성수동 · 주최 Jeff Kim · 12월 10일 (목) 18:00까지 답변",
        "가능한 날짜를 말씀해 주세요 (예: '12월 2일, 3일 가능해요').",
    ]
    english = await Turn(guest, kim).say("what am I invited to?")
    assert english.splitlines()[1] == (
        "- Fri 18 Dec 19:00–21:00 연말 디너 · 성수동 · organized by Jeff Kim · answer by Thu 10 Dec 18:00"
    )


async def test_a_guest_with_no_invitations(guest: MemberAgent, kim: AgentDeps) -> None:
    assert (
        await Turn(guest, kim).say("what am I invited to?") == "You're not invited to any events right now."
    )
    assert await Turn(guest, kim).say("tuesday works") == (
        "You're not invited to any events right now, so there's nothing to save those dates for."
    )


@pytest.mark.parametrize(
    ("prompt", "dates", "reply"),
    [
        (
            "12월 2일, 3일 가능해요",
            ["2026-12-02", "2026-12-03"],
            "“연말 디너”에 가능한 날짜를 저장했어요: 12월 2일 (수), 12월 3일 (목). "
            "주최자가 확인할 수 있어요.",
        ),
        (
            "I can make it on 2026-12-02 and 2026-12-03",
            ["2026-12-02", "2026-12-03"],
            "Saved your dates for “연말 디너”: Wed 2 Dec, Thu 3 Dec. The organizer can see them.",
        ),
        (
            "tuesday works",
            ["2026-12-01"],
            "Saved your dates for “연말 디너”: Tue 1 Dec. The organizer can see them.",
        ),
        (
            "다음 주 화요일이랑 수요일 괜찮아요",
            ["2026-12-01", "2026-12-02"],
            "“연말 디너”에 가능한 날짜를 저장했어요: 12월 1일 (화), 12월 2일 (수). "
            "주최자가 확인할 수 있어요.",
        ),
        (
            "Dec 4 and 7 work for me",
            ["2026-12-04", "2026-12-07"],
            "Saved your dates for “연말 디너”: Fri 4 Dec, Mon 7 Dec. The organizer can see them.",
        ),
    ],
)
async def test_a_guest_gives_their_dates_in_one_message(
    guest: MemberAgent,
    kim: AgentDeps,
    store: RedisEventStore,
    dinner: Event,
    prompt: str,
    dates: list[str],
    reply: str,
) -> None:
    assert await Turn(guest, kim).say(prompt) == reply
    saved = await store.get(dinner.event_id)
    assert saved is not None and saved.guest_availability == {GUEST: dates}


async def test_a_guest_names_the_event_among_several(
    guest: MemberAgent, kim: AgentDeps, store: RedisEventStore, dinner: Event
) -> None:
    kickoff = await organized(
        store, "Kickoff", "2026-12-14T09:00:00+09:00", "2026-12-14T10:00:00+09:00", guests={GUEST: "en"}
    )
    turn = Turn(guest, kim)
    assert (await turn.say("what am I invited to?")).startswith("You're invited to:\n")
    asked = await turn.say("tuesday works")
    assert asked.splitlines() == [
        "Which event are those dates for?",
        "- Mon 14 Dec 09:00–10:00 Kickoff",
        "- Fri 18 Dec 19:00–21:00 연말 디너",
        "Please tell me again with the event's title.",
    ]
    assert await turn.say("tuesday works for the kickoff") == (
        "Saved your dates for “Kickoff”: Tue 1 Dec. The organizer can see them."
    )
    saved, untouched = await store.get(kickoff.event_id), await store.get(dinner.event_id)
    assert saved is not None and saved.guest_availability == {GUEST: ["2026-12-01"]}
    assert untouched is not None and untouched.guest_availability == {}


async def test_a_guest_answering_about_the_event_in_view_needs_no_new_look_up(
    guest: MemberAgent, kim: AgentDeps, store: RedisEventStore, dinner: Event
) -> None:
    turn = Turn(guest, kim)
    await turn.say("초대받은 거 뭐 있어?")
    assert (await turn.say("자세히 알려줘")).splitlines() == [
        "“연말 디너” 12월 18일 (금) 19:00–21:00",
        "장소: 성수동",
        "주최: Jeff Kim",
        "답변 마감: 12월 10일 (목) 18:00",
        "가능한 날짜를 말씀해 주세요 (예: '12월 2일, 3일 가능해요').",
    ]
    before = len(turn.history)
    assert (await turn.say("금요일 가능해요")).startswith(
        "“연말 디너”에 가능한 날짜를 저장했어요: 11월 27일 (금)"
    )
    calls = [p.tool_name for m in turn.history[before:] for p in m.parts if p.part_kind == "tool-call"]
    assert calls == ["update_guest_availability"]
    # "Saturday works too": a date added to the Friday said before, not put in its place.
    before = len(turn.history)
    said = await turn.say("토요일도 괜찮아요")
    assert said.startswith("“연말 디너”에 가능한 날짜를 저장했어요: 11월 27일 (금), 11월 28일 (토)")
    saved = await store.get(dinner.event_id)
    assert saved is not None and saved.guest_availability == {GUEST: ["2026-11-27", "2026-11-28"]}


async def test_dates_after_the_deadline_are_explained(
    guest: MemberAgent, kim: AgentDeps, store: RedisEventStore, dinner: Event
) -> None:
    answer = await Turn(guest, kim).say("12월 15일 가능해요")
    assert answer == (
        "가능한 날짜는 답변 마감일인 12월 10일 (목)까지만 받을 수 있어요. "
        "그때까지의 날짜로 다시 말씀해 주세요."
    )
    saved = await store.get(dinner.event_id)
    assert saved is not None and saved.guest_availability == {}


@pytest.mark.parametrize("prompt", ["does tuesday work?", "내일 일정 어떻게 돼", "tuesday doesn't work"])
async def test_a_question_or_a_no_saves_no_dates(
    guest: MemberAgent, kim: AgentDeps, store: RedisEventStore, dinner: Event, prompt: str
) -> None:
    turn = Turn(guest, kim)
    await turn.say(prompt)
    assert not [p for m in turn.history for p in m.parts if p.part_kind == "tool-call"]
    saved = await store.get(dinner.event_id)
    assert saved is not None and saved.guest_availability == {}


async def test_a_guest_cannot_schedule_or_cancel(
    guest: MemberAgent, kim: AgentDeps, store: RedisEventStore, dinner: Event
) -> None:
    for prompt in ("cancel the dinner", "내일 12시에 점심 잡아줘 @mina", "tuesday doesn't work"):
        answer = await Turn(guest, kim).say(prompt)
        assert "the events you're invited to" in answer or "초대받은 일정 보기" in answer
    assert await cancelled(store, [dinner]) == []


# -- an invitee from the directory, with the member agent


@pytest.fixture
def mina(backends: Backends, inviter: RecordingInviter) -> AgentDeps:
    return deps_of("mina", backends, inviter)


async def test_a_member_asks_what_they_are_invited_to_and_gives_their_dates(
    member: MemberAgent, mina: AgentDeps, store: RedisEventStore
) -> None:
    dinner = await organized(
        store,
        "연말 디너",
        "2026-12-18T19:00:00+09:00",
        "2026-12-18T21:00:00+09:00",
        invitee_user_ids=["mina"],
        availability_deadline="2026-12-10T18:00:00+09:00",
    )
    turn = Turn(member, mina)
    listed = await turn.say("what am I invited to?")
    assert listed.splitlines()[:2] == [
        "You're invited to:",
        "- Fri 18 Dec 19:00–21:00 연말 디너 · organized by Jeff Kim · answer by Thu 10 Dec 18:00",
    ]
    saved = await turn.say("Tuesday and Wednesday work for me")
    assert saved == "Saved your dates for “연말 디너”: Tue 1 Dec, Wed 2 Dec. The organizer can see them."
    stored = await store.get(dinner.event_id)
    assert stored is not None and stored.guest_availability == {"mina": ["2026-12-01", "2026-12-02"]}
    # In one message, without looking first, in Korean.
    again = await Turn(member, mina).say("다음 주 목요일도 괜찮아요")  # Thursday too: added to the rest
    assert again.startswith(
        "“연말 디너”에 가능한 날짜를 저장했어요: 12월 1일 (화), 12월 2일 (수), 12월 3일 (목)"
    )
