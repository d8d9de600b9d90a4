"""Guests invited by phone number: numbers as people write them, one text invitation with the link to
their guest page, members found by their number, and numbers kept from everyone but the organizer."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic_ai import models
from redis.asyncio import Redis

from tests.tools.support import RecordingInviter, content, fixed, retried, run_tool
from truloop_assistant.backends import Backends
from truloop_assistant.backends.events import Event, RedisEventStore
from truloop_assistant.backends.users import SAMPLE_USERS_FILE, RedisUserDirectory, load_users_file
from truloop_assistant.tools.agent_deps import PhoneInvites
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
WEEK = {"start_date": "2026-11-30T00:00:00+09:00", "end_date": "2026-12-06T23:59:59+09:00"}
KIM = "tel:+821055501234"
"""The guest whose number is 010-5550-1234, in Korea."""


@dataclass
class GuestPages:
    """Makes guest page links as a server would (a long signed token), keeping whom it made them for."""

    made: list[tuple[str, str]] = field(default_factory=list)
    """(event id, person) in order."""

    async def link(self, event: Event, person: str) -> str | None:
        self.made.append((event.event_id, person))
        return link_of(event.event_id, person)


def link_of(event_id: str, person: str) -> str:
    """The link of ``person``'s guest page for an event: 92 characters, as a signed token makes it."""
    token = hashlib.sha256(f"{event_id}:{person}".encode()).hexdigest()[:60]
    return f"https://assistant.example.com/g/{token}"


@pytest.fixture
def inviter() -> RecordingInviter:
    return RecordingInviter()


@pytest.fixture
def pages() -> GuestPages:
    return GuestPages()


@pytest.fixture
def sms(pages: GuestPages) -> PhoneInvites:
    return PhoneInvites(default_region="KR", link=pages.link)


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
    backends: Backends,
    inviter: RecordingInviter | None,
    sms: PhoneInvites | None,
    tool: str,
    user: str = "jeff",
    **args: Any,
) -> str:
    prompt = args.pop("prompt", "점심 잡아줘")
    return await run_tool(
        event_server_toolset,
        backends,
        tool,
        user=user,
        prompt=prompt,
        inviter=inviter,
        phone_invites=sms,
        **args,
    )


async def stored(backends: Backends, inviter: RecordingInviter, user: str = "jeff") -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = content(
        await ask(backends, inviter, None, "get_events", user=user, **WEEK)
    )["events"]
    return events


def segments(text: str) -> int:
    """SMS segments as carriers count them: 153 septets a part when GSM-7 carries every character
    (the extension table's take two), else 67 UTF-16 code units a part (one part: 160 / 70)."""
    basic = (
        "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡"
        "ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
    )
    extended = "^{}\\[~]|€\f"
    if all(c in basic or c in extended for c in text):
        size, single, part = len(text) + sum(c in extended for c in text), 160, 153
    else:
        size, single, part = len(text.encode("utf-16-le")) // 2, 70, 67
    return 1 if size <= single else -(-size // part)


async def test_a_number_written_as_in_korea_invites_a_guest_once_by_text_with_their_link(
    backends: Backends, inviter: RecordingInviter, sms: PhoneInvites, pages: GuestPages
) -> None:
    inviter.unknown.add(KIM)  # no chat user: nobody asks the chat service about a phone guest
    event = content(
        await ask(backends, inviter, sms, "create_event", **LUNCH, guest_phone_numbers=["010-5550-1234"])
    )
    assert event["guest_user_ids"] == [KIM] and event["invitee_user_ids"] == []
    assert event["invitations"] == {KIM: "sent"} and event["guest_languages"] == {KIM: "ko"}
    assert pages.made == [(event["event_id"], KIM)]
    [(to, text, dedup)] = inviter.sent
    assert (to, dedup) == (KIM, f"invite:{event['event_id']}:{KIM}")
    link = link_of(event["event_id"], KIM)
    assert text == (
        'Jeff Kim 님의 초대: "디자인 점심" 12월 2일 (수) 12:00-13:00. '  # a Korean number: Seoul's time
        f"11월 30일 (월) 18:00까지 가능한 날짜를 알려 주세요: {link}"
    )

    again = content(
        await ask(
            backends,
            inviter,
            sms,
            "invite_to_event",
            event_id=event["event_id"],
            guest_phone_numbers=["+821055501234", "+82 10 5550 1234"],
        )
    )
    assert (again["guests_added"], again["guests_already_invited"]) == ([], [KIM])
    assert again["invitations"] == {} and len(inviter.sent) == 1  # the same person: not invited twice
    assert inviter.invited == {"jeff": 1}  # counted once against the organizer's hourly allowance


async def test_the_organizers_own_international_number_says_their_country(
    backends: Backends, inviter: RecordingInviter, sms: PhoneInvites
) -> None:
    # sarah's number is +1-415-555-0134: what she writes is read in the US, not in the default KR.
    event = content(
        await ask(
            backends,
            inviter,
            sms,
            "create_event",
            user="sarah",
            prompt="lunch with my friend",
            **{**LUNCH, "title": "Design lunch"},
            guest_phone_numbers=["(415) 555-0199"],
        )
    )
    assert event["guest_user_ids"] == ["tel:+14155550199"]
    [text] = inviter.to("tel:+14155550199")
    # A US number may be in any of its zones: the organizer's is named.
    assert text == (
        'Sarah Johnson invites you to "Design lunch": Wed 2 Dec 12:00-13:00 (Asia/Seoul). '
        f"Pick your dates by Mon 30 Nov 18:00: {link_of(event['event_id'], 'tel:+14155550199')}"
    )


async def test_a_members_number_invites_the_member_and_the_organizers_own_invites_nobody(
    backends: Backends, inviter: RecordingInviter, sms: PhoneInvites, pages: GuestPages
) -> None:
    # mina's number is 010-2345-6789 in the directory; jeff's own is 010-1234-5678.
    event = content(
        await ask(
            backends,
            inviter,
            sms,
            "create_event",
            **LUNCH,
            guest_phone_numbers=["+82 10-2345-6789", "01012345678"],
        )
    )
    assert (event["invitee_user_ids"], event["guest_user_ids"]) == (["mina"], [])
    assert event["invitations"] == {"mina": "sent"} and pages.made == []
    [text] = inviter.to("mina")
    assert text.startswith("Jeff Kim 님이 “디자인 점심” 일정에 초대했어요")  # in her chat, as any invitee

    # A number two members share names them both: the user says whom they mean.
    directory = backends.users
    assert isinstance(directory, RedisUserDirectory)
    yuna = await directory.get_profile("yuna")
    assert yuna is not None and yuna.phone == "02-555-0199"
    await directory.import_users([yuna.model_copy(update={"user_id": "yuna-desk"})])
    shared = await ask(backends, inviter, sms, "create_event", **LUNCH, guest_phone_numbers=["02 555 0199"])
    assert retried(shared)[""] == (
        "guest_phone_numbers: +8225550199 is the number of yuna, yuna-desk; ask the user whom they mean "
        "and invite them by user id"
    )


@pytest.mark.parametrize(
    ("tool", "args", "name"),
    [
        (
            "create_event",
            {**LUNCH, "guest_phone_numbers": ["12", "010-5550-1234", "010-555"]},
            "guest_phone_numbers",
        ),
        ("invite_to_event", {"guest_phone_numbers": ["12", "010-555"]}, "guest_phone_numbers"),
        ("update_event", {"add_guest_phone_numbers": ["12", "010-555"]}, "add_guest_phone_numbers"),
    ],
)
async def test_a_number_that_is_no_number_is_named_and_nothing_is_stored_or_sent(
    backends: Backends,
    inviter: RecordingInviter,
    sms: PhoneInvites,
    tool: str,
    args: dict[str, Any],
    name: str,
) -> None:
    before = []
    if tool != "create_event":
        before = [content(await ask(backends, inviter, sms, "create_event", **LUNCH))]
        args = {"event_id": before[0]["event_id"], **args}
    problem = retried(await ask(backends, inviter, sms, tool, **args))[""]
    assert problem.startswith(f"{name}: '12', '010-555' are not valid phone numbers; give whole numbers")
    assert "010-2000-0000 (as written in KR) or +821020000000" in problem
    assert inviter.sent == []
    assert [e["guest_user_ids"] for e in await stored(backends, inviter)] == [[] for _ in before]


async def test_adding_and_removing_numbers_invites_the_new_and_drops_the_removed(
    backends: Backends, inviter: RecordingInviter, sms: PhoneInvites
) -> None:
    event = content(
        await ask(backends, inviter, sms, "create_event", **LUNCH, guest_phone_numbers=["010-5550-1234"])
    )
    updated = content(
        await ask(
            backends,
            inviter,
            sms,
            "update_event",
            event_id=event["event_id"],
            add_guest_phone_numbers=["010 5550 5678"],
            remove_guest_phone_numbers=["+82 10-5550-1234"],
        )
    )
    assert updated["guest_user_ids"] == ["tel:+821055505678"]
    assert updated["invitations"] == {"tel:+821055505678": "sent"} and updated["told"] == {}
    assert [to for to, _, _ in inviter.sent] == [KIM, "tel:+821055505678"]
    assert content(await run_tool(guest_toolset, backends, "list_invited_events", user=KIM)) == {"events": []}

    stranger = await ask(
        backends,
        inviter,
        sms,
        "update_event",
        event_id=event["event_id"],
        remove_guest_phone_numbers=["010-5550-9999"],
    )
    assert retried(stranger)[""].startswith("remove_guest_phone_numbers: 'tel:+821055509999' not invited")


async def test_phone_guests_count_against_the_organizers_limits(
    backends: Backends, inviter: RecordingInviter, sms: PhoneInvites
) -> None:
    inviter.invited["jeff"] = 99
    answer = await ask(
        backends,
        inviter,
        sms,
        "create_event",
        **LUNCH,
        guest_phone_numbers=["010-5550-1234", "010-5550-5678"],
    )
    assert answer.startswith("failed: the user's events invited 99 people in the last hour")
    assert inviter.sent == [] and await stored(backends, inviter) == []


async def test_without_sms_a_number_is_a_clear_error_and_ids_still_work(
    backends: Backends, inviter: RecordingInviter
) -> None:
    answer = await ask(
        backends, inviter, None, "create_event", **LUNCH, guest_phone_numbers=["010-5550-1234"]
    )
    assert answer == (
        "failed: inviting guests by phone number needs SMS on this server, which is off; "
        "invite chat users by id"
    )
    assert inviter.sent == [] and await stored(backends, inviter) == []
    event = content(await ask(backends, inviter, None, "create_event", **LUNCH, guest_user_ids=["guest-kim"]))
    assert event["invitations"] == {"guest-kim": "sent"}


async def broken_link(event: Event, person: str) -> str | None:
    raise ConnectionError("the guest page service is down")


@pytest.mark.parametrize("link", [None, broken_link])
async def test_without_a_guest_page_the_text_asks_for_a_reply(
    backends: Backends, inviter: RecordingInviter, link: Any
) -> None:
    sms = PhoneInvites(default_region="KR", link=link)
    event = content(
        await ask(backends, inviter, sms, "create_event", **LUNCH, guest_phone_numbers=["010-5550-1234"])
    )
    assert event["invitations"] == {KIM: "sent"}
    assert inviter.to(KIM) == [
        'Jeff Kim 님의 초대: "디자인 점심" 12월 2일 (수) 12:00-13:00. '
        "11월 30일 (월) 18:00까지 가능한 날짜를 답장으로 알려 주세요."
    ]


@pytest.mark.parametrize(
    ("prompt", "title"),
    [
        ("점심 잡아줘", "디자인 점심"),
        ("lunch with my friend", "Design lunch"),
        ("점심 잡아줘", "2026년 하반기 디자인 시스템 리뷰와 팀 회고, 그리고 신규 입사자 환영 점심 " * 4),
        ("lunch with my friend", "Second-half design system review, team retro and a welcome lunch " * 3),
    ],
)
async def test_a_text_invitation_fits_in_three_segments_in_korean_and_english(
    backends: Backends, inviter: RecordingInviter, sms: PhoneInvites, prompt: str, title: str
) -> None:
    event = {**LUNCH, "title": title[:200], "end_time": "2026-12-03T13:00:00+09:00"}  # ends the next day
    created = content(
        await ask(
            backends,
            inviter,
            sms,
            "create_event",
            prompt=prompt,
            **event,
            guest_phone_numbers=["010-5550-1234", "+1 415 555 0199"],  # Seoul's zone goes unnamed to KR only
        )
    )
    english = prompt.startswith("lunch")
    assert created["guest_languages"] == dict.fromkeys([KIM, "tel:+14155550199"], "en" if english else "ko")
    for number in (KIM, "tel:+14155550199"):
        [text] = inviter.to(number)
        assert segments(text) <= 3, (segments(text), text)
        assert link_of(created["event_id"], number) in text and "18:00" in text  # the link, the deadline
        assert title[:8] in text  # a long title is cut, never dropped
        if english:
            assert text.isascii()  # GSM-7 carries it: 153 characters a segment, not 67


async def test_numbers_are_shown_to_the_organizer_only(
    backends: Backends, inviter: RecordingInviter, sms: PhoneInvites
) -> None:
    event = content(
        await ask(
            backends,
            inviter,
            sms,
            "create_event",
            **LUNCH,
            invitee_user_ids=["mina"],
            guest_user_ids=["guest-lee"],
            guest_phone_numbers=["010-5550-1234", "010-5550-5678"],
        )
    )
    details = content(
        await run_tool(guest_toolset, backends, "get_event_details", user="jeff", event_id=event["event_id"])
    )
    assert details["guest_user_ids"] == ["guest-lee", KIM, "tel:+821055505678"]
    assert details["not_answered"] == ["mina", "guest-lee", KIM, "tel:+821055505678"]

    # Each invited person sees the event, and never anyone's number (nor the guests at all).
    for who in ("mina", "guest-lee", KIM):
        invited = content(await run_tool(guest_toolset, backends, "list_invited_events", user=who))
        own = content(
            await run_tool(guest_toolset, backends, "get_event_details", user=who, event_id=event["event_id"])
        )
        assert [e["event_id"] for e in invited["events"]] == [own["event_id"]] == [event["event_id"]]
        assert own["guest_user_ids"] is None and own["not_answered"] is None
        for body in (json.dumps(invited, ensure_ascii=False), json.dumps(own, ensure_ascii=False)):
            assert "5550" not in body and "tel:" not in body, body
    listed = content(await ask(backends, inviter, sms, "get_events", user="mina", **WEEK))
    assert listed["events"] == [] and [e["title"] for e in listed["invited"]] == ["디자인 점심"]
    assert "5550" not in json.dumps(listed)
