"""Guest tools through an agent: an invited guest sees their events and gives their available dates."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai import models
from redis.asyncio import Redis

from tests.tools.support import content, fixed, retried, run_tool
from truloop_assistant.backends import Backends
from truloop_assistant.backends.events import Event, RedisEventStore
from truloop_assistant.backends.users import SAMPLE_USERS_FILE, RedisUserDirectory, load_users_file
from truloop_assistant.tools.guest_tools import guest_toolset, invitee_toolset

models.ALLOW_MODEL_REQUESTS = False

GUEST = "guest-hana"
"""An invited guest who is not in the user directory."""


@pytest.fixture
def store(redis: Redis) -> RedisEventStore:
    return RedisEventStore(redis, clock=fixed)


@pytest.fixture
async def backends(redis: Redis, store: RedisEventStore) -> Backends:
    directory = RedisUserDirectory(redis)
    await directory.import_users(load_users_file(SAMPLE_USERS_FILE))
    return Backends(
        users=directory,
        events=store,
        knowledge=None,  # type: ignore[arg-type]
        memory=None,  # type: ignore[arg-type]
        places=None,  # type: ignore[arg-type]
    )


@pytest.fixture
async def dinner(store: RedisEventStore) -> Event:
    event = await store.create(
        "jeff",
        title="연말 디너",
        start_time="2026-12-18T19:00:00+09:00",
        end_time="2026-12-18T21:00:00+09:00",
        location="성수동",
        invitee_user_ids=["mina"],
        guests={GUEST: "ko"},
        availability_deadline="2026-12-10T18:00:00+09:00",
    )
    return await store.set_availability(event.event_id, "mina", ["2026-12-01", "2026-12-02"])


async def ask(backends: Backends, tool: str, user: str = GUEST, **args: Any) -> str:
    return await run_tool(guest_toolset, backends, tool, user=user, **args)


async def test_availability_is_saved_sorted_and_deduplicated(
    backends: Backends, store: RedisEventStore, dinner: Event
) -> None:
    dates = ["2026-12-05", "2026-11-26", "2026-12-05", "2026-12-01"]
    saved = content(
        await ask(backends, "update_guest_availability", event_id=dinner.event_id, available_dates=dates)
    )
    assert saved == {
        "event_id": dinner.event_id,
        "title": "연말 디너",
        "available_dates": ["2026-11-26", "2026-12-01", "2026-12-05"],
    }
    stored = await store.get(dinner.event_id)
    assert stored is not None
    assert stored.guest_availability[GUEST] == ["2026-11-26", "2026-12-01", "2026-12-05"]
    assert stored.guest_availability["mina"] == ["2026-12-01", "2026-12-02"]  # others' answers untouched


@pytest.mark.parametrize(
    ("dates", "field", "message"),
    [
        (
            ["2026-11-25", "2026-12-01"],
            "",
            "available_dates: 2026-11-25 is in the past (today is 2026-11-26)",
        ),
        (["2026-12-11"], "", "available_dates: 2026-12-11 is after the last allowed date 2026-12-10"),
        (["2026-12-01", "12/01"], "available_dates.1", "'12/01' is not an ISO date; use YYYY-MM-DD"),
        (["2026-12-01T10:00:00+09:00"], "available_dates.0", "is not an ISO date; use YYYY-MM-DD"),
        ([20261201], "available_dates.0", "is not an ISO date; use YYYY-MM-DD"),
    ],
)
async def test_bad_dates_ask_for_a_fix_and_nothing_is_saved(
    backends: Backends, store: RedisEventStore, dinner: Event, dates: list[Any], field: str, message: str
) -> None:
    answer = await ask(backends, "update_guest_availability", event_id=dinner.event_id, available_dates=dates)
    problems = retried(answer)
    assert list(problems) == [field] and message in problems[field]
    stored = await store.get(dinner.event_id)
    assert stored is not None and GUEST not in stored.guest_availability


async def test_at_most_31_dates(backends: Backends, store: RedisEventStore) -> None:
    event = await store.create(
        "jeff",
        title="retreat",
        start_time="2027-03-01T09:00:00+09:00",
        end_time="2027-03-01T18:00:00+09:00",
        invitee_user_ids=[GUEST],
    )
    dates = [f"2026-12-{d:02d}" for d in range(1, 32)]
    saved = await ask(backends, "update_guest_availability", event_id=event.event_id, available_dates=dates)
    assert content(saved)["available_dates"] == dates
    answer = await ask(
        backends, "update_guest_availability", event_id=event.event_id, available_dates=[*dates, "2027-01-01"]
    )
    assert "List should have at most 31 items" in retried(answer)["available_dates"]
    stored = await store.get(event.event_id)
    assert stored is not None and stored.guest_availability[GUEST] == dates


async def test_a_malformed_event_id_asks_for_a_fix(backends: Backends) -> None:
    answer = await ask(backends, "get_event_details", event_id="연말 디너")
    assert "should match pattern '^evt_[0-9a-f]{12}$'" in retried(answer)["event_id"]


@pytest.mark.parametrize(
    "deadline",
    ["2026-11-25T18:00:00+09:00", "2026-11-26T09:00:00+09:00"],  # yesterday; this morning (it is 10:49)
    ids=["a-day-ago", "hours-ago-today"],
)
async def test_after_the_deadline_the_guest_is_told_so(
    backends: Backends, store: RedisEventStore, deadline: str
) -> None:
    event = await store.create(
        "jeff",
        title="kickoff",
        start_time="2026-11-27T09:00:00+09:00",
        end_time="2026-11-27T10:00:00+09:00",
        guests={GUEST: "ko"},
        availability_deadline=deadline,
    )
    answer = await ask(
        backends, "update_guest_availability", event_id=event.event_id, available_dates=["2026-11-27"]
    )
    assert answer.startswith("failed: ") and "has passed" in answer
    assert (await store.get(event.event_id)).guest_availability == {}  # type: ignore[union-attr]


async def test_details_leave_out_other_guests_and_contacts(backends: Backends, dinner: Event) -> None:
    await ask(backends, "update_guest_availability", event_id=dinner.event_id, available_dates=["2026-12-03"])
    answer = await ask(backends, "get_event_details", event_id=dinner.event_id)
    details = content(answer)
    assert details["title"] == "연말 디너" and details["location"] == "성수동"
    assert details["organizer_name"] == "Jeff Kim"
    assert details["your_available_dates"] == ["2026-12-03"]
    assert "mina" not in answer and "2026-12-02" not in answer  # nothing about the other guest
    assert "@example.com" not in answer and "010-" not in answer  # nobody's contacts


async def test_a_guest_cannot_see_or_answer_an_event_they_are_not_invited_to(
    backends: Backends, dinner: Event
) -> None:
    expected = f"failed: you are not invited to an event with id '{dinner.event_id}' (or it does not exist)"
    assert await ask(backends, "get_event_details", user="stranger", event_id=dinner.event_id) == expected
    answer = await ask(
        backends, "update_guest_availability", user="stranger", event_id=dinner.event_id, available_dates=[]
    )
    assert answer == expected
    missing = await ask(backends, "get_event_details", event_id="evt_000000000000")
    assert missing.startswith("failed: you are not invited")


async def test_list_invited_events(backends: Backends, store: RedisEventStore, dinner: Event) -> None:
    earlier = await store.create(
        "mina",
        title="스케치 리뷰",
        start_time="2026-12-01T10:00:00+09:00",
        end_time="2026-12-01T11:00:00+09:00",
        guests={GUEST: "en"},
    )
    events = content(await ask(backends, "list_invited_events"))["events"]
    assert [(e["event_id"], e["organizer_name"]) for e in events] == [
        (earlier.event_id, "박민아"),
        (dinner.event_id, "Jeff Kim"),
    ]
    assert content(await ask(backends, "list_invited_events", user="stranger")) == {"events": []}


async def test_someone_invited_as_an_invitee_answers_the_same_way(
    backends: Backends, store: RedisEventStore
) -> None:
    event = await store.create(
        "jeff",
        title="1:1",
        start_time="2026-12-01T10:00:00+09:00",
        end_time="2026-12-01T11:00:00+09:00",
        invitee_user_ids=[GUEST],
    )
    saved = await ask(
        backends, "update_guest_availability", event_id=event.event_id, available_dates=["2026-11-30"]
    )
    assert content(saved)["available_dates"] == ["2026-11-30"]
    assert [e["event_id"] for e in content(await ask(backends, "list_invited_events"))["events"]] == [
        event.event_id
    ]


async def test_the_organizer_sees_every_guest_and_their_dates(backends: Backends, dinner: Event) -> None:
    await ask(backends, "update_guest_availability", event_id=dinner.event_id, available_dates=["2026-12-03"])
    details = content(await ask(backends, "get_event_details", user="jeff", event_id=dinner.event_id))
    assert details["guest_user_ids"] == [GUEST]
    assert details["availability"] == {"mina": ["2026-12-01", "2026-12-02"], GUEST: ["2026-12-03"]}
    assert details["invitee_user_ids"] == ["mina"] and details["not_answered"] == []
    guest_view = content(await ask(backends, "get_event_details", event_id=dinner.event_id))
    assert guest_view["guest_user_ids"] is None and guest_view["availability"] is None
    assert guest_view["invitee_user_ids"] is None and guest_view["not_answered"] is None
    answer = await ask(
        backends, "update_guest_availability", user="jeff", event_id=dinner.event_id, available_dates=[]
    )
    assert answer.startswith("failed: you are not invited")  # the organizer does not answer their own event


async def test_a_cancelled_event_takes_no_answers(
    backends: Backends, store: RedisEventStore, dinner: Event
) -> None:
    await store.cancel(dinner.event_id, reason="장소 사정")
    answer = await ask(
        backends, "update_guest_availability", event_id=dinner.event_id, available_dates=["2026-12-03"]
    )
    assert (
        answer == "failed: '연말 디너' was cancelled by its organizer (장소 사정); it no longer takes answers"
    )
    assert content(await ask(backends, "list_invited_events")) == {"events": []}


async def test_dates_are_added_and_taken_away_without_repeating_the_rest(
    backends: Backends, store: RedisEventStore, dinner: Event
) -> None:
    async def saved(**args: Any) -> list[str]:
        answer = await ask(backends, "update_guest_availability", event_id=dinner.event_id, **args)
        return content(answer)["available_dates"]

    assert await saved(available_dates=["2026-12-01", "2026-12-03"]) == ["2026-12-01", "2026-12-03"]
    assert await saved(add_dates=["2026-12-05"]) == ["2026-12-01", "2026-12-03", "2026-12-05"]  # "Friday too"
    assert await saved(remove_dates=["2026-12-03"]) == ["2026-12-01", "2026-12-05"]
    # A model that fills every argument sends the replacing list empty: it says nothing beside the others.
    assert await saved(available_dates=[], add_dates=["2026-12-08"], remove_dates=[]) == [
        "2026-12-01",
        "2026-12-05",
        "2026-12-08",
    ]
    assert await saved(available_dates=["2026-12-09"]) == ["2026-12-09"]  # the whole list still replaces
    stored = await store.get(dinner.event_id)
    assert stored is not None and stored.guest_availability["mina"] == ["2026-12-01", "2026-12-02"]


async def test_none_of_the_dates_is_an_answer_and_no_dates_at_all_asks_which(
    backends: Backends, store: RedisEventStore, dinner: Event
) -> None:
    nothing = await ask(backends, "update_guest_availability", event_id=dinner.event_id)
    assert "say which dates" in retried(nothing)[""]
    none = await ask(backends, "update_guest_availability", event_id=dinner.event_id, available_dates=[])
    assert content(none)["available_dates"] == []
    details = content(await ask(backends, "get_event_details", user="jeff", event_id=dinner.event_id))
    assert details["availability"][GUEST] == [] and GUEST not in details["not_answered"]  # they answered


async def test_an_invitee_adds_a_date_to_what_they_said_before(backends: Backends, dinner: Event) -> None:
    answer = await run_tool(
        invitee_toolset,
        backends,
        "update_availability",
        user="mina",
        event_id=dinner.event_id,
        add_dates=["2026-12-04"],
    )
    assert content(answer)["available_dates"] == ["2026-12-01", "2026-12-02", "2026-12-04"]
