"""App event tools through an agent: create, list, change and invite as the user would notice."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from pydantic_ai import models
from redis.asyncio import Redis

from tests.tools.support import content, fixed, retried, run_tool
from truloop_assistant.backends import Backends
from truloop_assistant.backends.events import Event, RedisEventStore
from truloop_assistant.backends.users import SAMPLE_USERS_FILE, RedisUserDirectory, load_users_file
from truloop_assistant.tools.event_tools import event_server_toolset

models.ALLOW_MODEL_REQUESTS = False

WEEK = {"start_date": "2026-11-30T00:00:00+09:00", "end_date": "2026-12-06T23:59:59+09:00"}
LUNCH = {
    "title": "디자인 점심",
    "start_time": "2026-12-02T12:00:00+09:00",
    "end_time": "2026-12-02T13:00:00+09:00",
}


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


async def ask(backends: Backends, tool: str, user: str = "jeff", **args: Any) -> str:
    return await run_tool(event_server_toolset, backends, tool, user=user, **args)


NOBODY_TO_MESSAGE = "not delivered: messaging people is not available on this server"


def event_of(answer: str) -> dict[str, Any]:
    """The event a create or update call returned, without whom it was to tell (here the tools have
    no way to message people: the invitees are invited all the same)."""
    event = content(answer)
    for told in (event.pop("invitations"), event.pop("told", {})):
        assert set(told.values()) <= {NOBODY_TO_MESSAGE}, told
    assert set(event["invitee_user_ids"]) >= set(content(answer)["invitations"])
    return event


async def create(backends: Backends, **args: Any) -> dict[str, Any]:
    return event_of(await ask(backends, "create_event", **{**LUNCH, **args}))


async def listed(backends: Backends, user: str = "jeff") -> list[dict[str, Any]]:
    return content(await ask(backends, "get_events", user=user, **WEEK))["events"]


async def test_created_event_is_listed_back(backends: Backends) -> None:
    event = await create(
        backends,
        location="판교 오피스",
        invitee_user_ids=["mina", "jiwoo", "mina", "jeff"],
        availability_deadline="2026-11-30T18:00:00+09:00",
    )
    assert event["event_id"].startswith("evt_") and event["owner_id"] == "jeff"
    assert event["invitee_user_ids"] == ["mina", "jiwoo"]  # once each; the organizer is not a guest
    [stored] = await listed(backends)
    assert stored == event
    assert stored["title"] == "디자인 점심" and stored["location"] == "판교 오피스"
    assert await listed(backends, user="mina") == []  # the week of someone who organizes nothing


async def test_unknown_invitee_is_rejected_by_name_and_nothing_is_created(backends: Backends) -> None:
    answer = await ask(backends, "create_event", **LUNCH, invitee_user_ids=["mina", "ghost", "phantom"])
    assert answer.startswith("failed: ")
    assert "'ghost', 'phantom'" in answer and "'mina'" not in answer and "search_users" in answer
    assert await listed(backends) == []


@pytest.mark.parametrize(
    ("args", "field", "message"),
    [
        (
            {"availability_deadline": "2026-12-02T12:30:00+09:00"},
            "",
            "availability_deadline 2026-12-02T12:30:00+09:00 is after the event starts",
        ),
        (
            {"availability_deadline": "2026-12-01"},
            "availability_deadline",
            "'2026-12-01' has no UTC offset; add the user's offset, e.g. 2026-12-01T00:00:00+09:00",
        ),
        (
            {"end_time": "2026-12-02T11:00:00+09:00"},
            "",
            "end_time 2026-12-02T11:00:00+09:00 is not after start_time 2026-12-02T12:00:00+09:00",
        ),
        (
            {"start_time": "2026-12-02T12:00:00"},
            "start_time",
            "'2026-12-02T12:00:00' has no UTC offset; add the user's offset, e.g. 2026-12-02T12:00:00+09:00",
        ),
        ({"start_time": "next tuesday"}, "start_time", "is not an ISO 8601 date-time; use e.g. 2026-"),
        ({"start_time": 1764644400}, "start_time", "give an ISO 8601 date-time string with a UTC offset"),
        ({"title": " "}, "title", "String should have at least 1 character"),
        ({"title": "x" * 201}, "title", "String should have at most 200 characters"),
        ({"location": "x" * 301}, "location", "String should have at most 300 characters"),
        (
            {"invitee_user_ids": ["mina", " "]},
            "invitee_user_ids.1",
            "String should have at least 1 character",
        ),
        (
            {"invitee_user_ids": [f"user{i}" for i in range(101)]},
            "invitee_user_ids",
            "List should have at most 100 items",
        ),
    ],
)
async def test_bad_event_arguments_ask_for_a_fix(
    backends: Backends, args: dict[str, Any], field: str, message: str
) -> None:
    problems = retried(await ask(backends, "create_event", **{**LUNCH, **args}))
    assert list(problems) == [field] and message in problems[field]
    assert await listed(backends) == []


async def test_times_are_stored_as_iso_8601_with_their_offset(backends: Backends) -> None:
    event = await create(
        backends,
        start_time=" 2026-12-02T03:00Z ",
        end_time="2026-12-02T13:00:00.5+09:00",
        availability_deadline="2026-12-01T18:00+09:00",
    )
    assert (event["start_time"], event["end_time"], event["availability_deadline"]) == (
        "2026-12-02T03:00:00+00:00",
        "2026-12-02T13:00:00.500000+09:00",
        "2026-12-01T18:00:00+09:00",
    )
    # The store's own stamps: UTC to the second, written with "+00:00" (never "Z").
    assert event["created_at"] == event["updated_at"] == fixed().replace(microsecond=0).isoformat()
    assert event["created_at"].endswith("+00:00")
    [stored] = await listed(backends)
    assert stored == event


async def test_blank_optional_text_means_none(backends: Backends) -> None:
    event = await create(backends, location="  ", description="", availability_deadline=" ", title=" 점심 ")
    assert (event["title"], event["location"], event["description"], event["availability_deadline"]) == (
        "점심",
        None,
        None,
        None,
    )


async def test_get_events_checks_its_range(backends: Backends) -> None:
    swapped = await ask(backends, "get_events", start_date=WEEK["end_date"], end_date=WEEK["start_date"])
    assert "swap them" in retried(swapped)[""]
    too_long = await ask(
        backends, "get_events", start_date=WEEK["start_date"], end_date="2028-01-01T00:00:00+09:00"
    )
    assert "longer than 366 days" in retried(too_long)[""]
    naive = await ask(backends, "get_events", start_date="2026-11-30T09:00", end_date=WEEK["end_date"])
    assert "has no UTC offset" in retried(naive)["start_date"]
    backwards = await ask(backends, "get_events", start_date="2026-12-03", end_date="2026-12-02")
    assert "swap them" in retried(backwards)[""]


async def test_plain_dates_are_whole_days_in_the_users_zone_and_the_end_is_exclusive(
    backends: Backends,
) -> None:
    late = await create(  # from 23:30 on the 1st to 00:30 on the 2nd (Seoul): it overlaps the 2nd
        backends,
        title="late call",
        start_time="2026-12-01T23:30:00+09:00",
        end_time="2026-12-02T00:30:00+09:00",
    )
    lunch = await create(backends)  # 12:00 on the 2nd
    dawn = await create(  # midnight of the 3rd: past a range that ends with the 2nd
        backends, title="dawn", start_time="2026-12-03T00:00:00+09:00", end_time="2026-12-03T01:00:00+09:00"
    )
    day = content(await ask(backends, "get_events", start_date="2026-12-02", end_date="2026-12-02"))
    assert [e["event_id"] for e in day["events"]] == [late["event_id"], lunch["event_id"]]
    # A date beside a date-time: the date is its whole day.
    both = content(
        await ask(backends, "get_events", start_date="2026-12-02T12:30:00+09:00", end_date="2026-12-03")
    )
    assert [e["event_id"] for e in both["events"]] == [lunch["event_id"], dawn["event_id"]]
    bad = await ask(backends, "get_events", start_date="2026-02-30", end_date="2026-03-01")
    assert "not an ISO date; use YYYY-MM-DD" in retried(bad)["start_date"]


async def test_invite_adds_a_person_once(backends: Backends) -> None:
    event = await create(backends, invitee_user_ids=["mina"])
    first = content(
        await ask(
            backends, "invite_to_event", event_id=event["event_id"], invitee_user_ids=["seojun", "mina"]
        )
    )
    assert first["added"] == ["seojun"] and first["already_invited"] == ["mina"]
    again = content(
        await ask(backends, "invite_to_event", event_id=event["event_id"], invitee_user_ids=["seojun"])
    )
    assert again["added"] == [] and again["already_invited"] == ["seojun"]
    [stored] = await listed(backends)
    assert stored["invitee_user_ids"] == ["mina", "seojun"]


async def test_inviting_an_unknown_person_names_them(backends: Backends) -> None:
    event = await create(backends)
    answer = await ask(backends, "invite_to_event", event_id=event["event_id"], invitee_user_ids=["ghost"])
    assert answer.startswith("failed: ") and "'ghost'" in answer
    assert (await listed(backends))[0]["invitee_user_ids"] == []


async def test_only_the_organizer_can_change_or_invite(backends: Backends) -> None:
    event = await create(backends, invitee_user_ids=["mina"])
    for tool, args in (
        ("update_event", {"title": "hijacked"}),
        ("invite_to_event", {"invitee_user_ids": ["david"]}),
    ):
        answer = await ask(backends, tool, user="mina", event_id=event["event_id"], **args)
        assert answer.startswith(f"failed: only the organizer can change event '{event['event_id']}'")
    [stored] = await listed(backends)
    assert stored["title"] == "디자인 점심" and stored["invitee_user_ids"] == ["mina"]


async def test_unknown_event_fails(backends: Backends) -> None:
    answer = await ask(backends, "update_event", event_id="evt_000000000000", title="x")
    assert answer == "failed: there is no event with id 'evt_000000000000'"


async def test_update_changes_only_what_is_given(backends: Backends) -> None:
    event = await create(backends, location="판교", description="메뉴는 당일에", invitee_user_ids=["mina"])
    updated = event_of(
        await ask(
            backends,
            "update_event",
            event_id=event["event_id"],
            start_time="2026-12-03T12:00:00+09:00",
            end_time="2026-12-03T13:30:00+09:00",
            clear=["location"],
            add_invitee_user_ids=["jiwoo", "yuna"],
            remove_invitee_user_ids=["mina"],
        )
    )
    [stored] = await listed(backends)
    assert stored == updated
    assert updated["title"] == "디자인 점심" and updated["description"] == "메뉴는 당일에"
    assert updated["location"] is None
    assert (updated["start_time"], updated["end_time"]) == (
        "2026-12-03T12:00:00+09:00",
        "2026-12-03T13:30:00+09:00",
    )
    assert updated["invitee_user_ids"] == ["jiwoo", "yuna"]


async def test_update_keeps_the_deadline_before_the_start(backends: Backends) -> None:
    event = await create(backends, availability_deadline="2026-12-01T18:00:00+09:00")
    earlier = {"start_time": "2026-12-01T12:00:00+09:00", "end_time": "2026-12-01T13:00:00+09:00"}
    answer = await ask(backends, "update_event", event_id=event["event_id"], **earlier)
    assert "also give an availability_deadline on or before the new start" in retried(answer)[""]
    late = await ask(
        backends,
        "update_event",
        event_id=event["event_id"],
        availability_deadline="2026-12-05T00:00:00+09:00",
    )
    assert "availability_deadline 2026-12-05T00:00:00+09:00 is after the event starts" in retried(late)[""]
    moved = content(
        await ask(
            backends,
            "update_event",
            event_id=event["event_id"],
            availability_deadline="2026-11-30T18:00:00+09:00",
            **earlier,
        )
    )
    assert moved["availability_deadline"] == "2026-11-30T18:00:00+09:00"
    assert moved["start_time"] == earlier["start_time"]  # shown as given
    assert Event.model_validate(moved).start_time == datetime.fromisoformat(earlier["start_time"])


async def test_update_without_changes_asks_for_one(backends: Backends) -> None:
    event = await create(backends)
    answer = await ask(backends, "update_event", event_id=event["event_id"])
    assert "give at least one field" in retried(answer)[""]


async def test_update_left_empty_keeps_and_clear_removes(backends: Backends) -> None:
    event = await create(
        backends,
        location="판교",
        description="메뉴는 당일에",
        availability_deadline="2026-12-01T18:00:00+09:00",
        invitee_user_ids=["mina"],
    )
    # A model that fills every argument it sees, with nothing to say in most of them.
    empty: dict[str, Any] = {
        "start_time": None,
        "end_time": "",
        "location": "",
        "description": " ",
        "availability_deadline": "",
        "add_invitee_user_ids": [],
        "remove_invitee_user_ids": None,
        "add_guest_user_ids": [],
        "remove_guest_user_ids": [],
        "clear": [],
    }
    kept = event_of(
        await ask(backends, "update_event", event_id=event["event_id"], title="디자인 점심 2", **empty)
    )
    assert kept == {**event, "title": "디자인 점심 2", "updated_at": kept["updated_at"]}
    nothing = await ask(backends, "update_event", event_id=event["event_id"], title="", **empty)
    assert "nothing to change" in retried(nothing)[""]
    removed = content(
        await ask(
            backends,
            "update_event",
            event_id=event["event_id"],
            clear=["location", "description", "availability_deadline"],
        )
    )
    assert (removed["location"], removed["description"], removed["availability_deadline"]) == (
        None,
        None,
        None,
    )
    assert removed["title"] == "디자인 점심 2"


async def test_empty_arguments_in_a_providers_json_change_nothing(backends: Backends) -> None:
    event = await create(backends, location="판교", invitee_user_ids=["mina"])
    empty = {"location": "", "clear": None, "add_guest_user_ids": [], "remove_invitee_user_ids": []}
    answer = await run_tool(
        event_server_toolset,
        backends,
        "update_event",
        user="jeff",
        as_json=True,
        event_id=event["event_id"],
        title="디자인 점심 2",
        **empty,
    )
    updated = event_of(answer)
    assert (updated["title"], updated["location"], updated["invitee_user_ids"]) == (
        "디자인 점심 2",
        "판교",
        ["mina"],
    )
    nothing = {"location": "", "description": None, "invitee_user_ids": [], "guest_user_ids": []}
    created = content(
        await run_tool(
            event_server_toolset, backends, "create_event", user="jeff", as_json=True, **LUNCH, **nothing
        )
    )
    assert created["location"] is None and created["invitee_user_ids"] == []


async def test_update_moving_only_the_end_keeps_the_start(backends: Backends) -> None:
    event = await create(backends)
    updated = content(
        await ask(backends, "update_event", event_id=event["event_id"], end_time="2026-12-02T14:00:00+09:00")
    )
    assert (updated["start_time"], updated["end_time"]) == (LUNCH["start_time"], "2026-12-02T14:00:00+09:00")
    before = await ask(
        backends, "update_event", event_id=event["event_id"], end_time="2026-12-02T11:00:00+09:00"
    )
    assert "end_time 2026-12-02T11:00:00+09:00 is not after start_time" in retried(before)[""]


@pytest.mark.parametrize(
    ("tool", "args", "field", "message"),
    [
        ("update_event", {"event_id": "lunch", "title": "x"}, "event_id", "should match pattern '^evt_"),
        ("update_event", {"title": ""}, "", "nothing to change"),  # empty: not given
        ("update_event", {"remove_invitee_user_ids": ["yuna"]}, "", "'yuna' not invited to this event"),
        ("update_event", {"add_invitee_user_ids": ["mina"], "remove_invitee_user_ids": ["mina"]}, "", "both"),
        ("update_event", {"location": "판교", "clear": ["location"]}, "", "given a new value and cleared"),
        ("update_event", {"clear": ["title"]}, "clear.0", "'location', 'description' or"),
        ("update_event", {"start_time": "2026-12-03 12:00"}, "start_time", "has no UTC offset"),
        ("update_event", {"availability_deadline": "tomorrow"}, "availability_deadline", "not an ISO 8601"),
        ("invite_to_event", {"invitee_user_ids": []}, "", "give the ids of other people to invite"),
        ("invite_to_event", {"invitee_user_ids": ["jeff"]}, "", "give the ids of other people to invite"),
    ],
)
async def test_bad_change_arguments_ask_for_a_fix(
    backends: Backends, tool: str, args: dict[str, Any], field: str, message: str
) -> None:
    event = await create(backends, invitee_user_ids=["mina"])
    problems = retried(await ask(backends, tool, **{"event_id": event["event_id"], **args}))
    assert list(problems) == [field] and message in problems[field]
    [stored] = await listed(backends)
    assert stored == event


async def test_moving_the_start_alone_keeps_the_length(backends: Backends) -> None:
    event = await create(backends, end_time="2026-12-02T13:30:00+09:00")  # 90 minutes
    moved = event_of(
        await ask(
            backends, "update_event", event_id=event["event_id"], start_time="2026-12-02T16:00:00+09:00"
        )
    )
    assert (moved["start_time"], moved["end_time"]) == (
        "2026-12-02T16:00:00+09:00",
        "2026-12-02T17:30:00+09:00",
    )


async def test_events_are_found_without_a_range_by_their_title_with_the_invitations(
    backends: Backends,
) -> None:
    """ "The review I set up last time": a month back to a year ahead; the user's invitations too."""
    last_week = await create(
        backends,
        title="Design review",
        start_time="2026-11-20T15:00:00+09:00",
        end_time="2026-11-20T16:00:00+09:00",
    )
    await create(
        backends,
        title="Budget sync",
        start_time="2027-06-01T10:00:00+09:00",
        end_time="2027-06-01T11:00:00+09:00",
    )
    await create(
        backends,
        title="Old review",
        start_time="2026-09-01T10:00:00+09:00",
        end_time="2026-09-01T11:00:00+09:00",
    )
    invited = content(await ask(backends, "create_event", user="mina", **LUNCH, invitee_user_ids=["jeff"]))

    found = content(await ask(backends, "get_events", query="review"))
    assert [e["event_id"] for e in found["events"]] == [last_week["event_id"]]  # not the one 3 months ago
    everything = content(await ask(backends, "get_events"))
    assert [e["title"] for e in everything["events"]] == ["Design review", "Budget sync"]
    [mine] = everything["invited"]
    assert (mine["event_id"], mine["organizer_name"]) == (invited["event_id"], "박민아")
    assert mine["availability"] is None and mine["invitee_user_ids"] is None  # the organizer's only
    assert content(await ask(backends, "get_events", query="점심"))["invited"][0]["title"] == "디자인 점심"


async def test_a_misnamed_argument_is_refused_by_name_never_dropped(backends: Backends) -> None:
    event = await create(backends)
    answer = await ask(backends, "invite_to_event", event_id=event["event_id"], invitees=["mina"])
    assert "Extra inputs are not permitted" in retried(answer)["invitees"]
    alone = await ask(backends, "invite_to_event", event_id=event["event_id"])
    assert "give the ids of other people to invite (invitee_user_ids" in retried(alone)[""]
    [stored] = await listed(backends)
    assert stored["invitee_user_ids"] == []  # nobody was invited by either call
