"""An event's time is bounded (at most 14 days long, starting from 2000 up to two years ahead), and
the dialog says the year where it could be mistaken: through the server, as the model and phone see it.

Dates are relative to now, as the server's clock is real.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.api.test_tools_gate import scripted
from tests.support import JWT_SECRET, Harness
from truloop_assistant.auth import issue_token
from truloop_assistant.backends.events import RedisEventStore
from truloop_assistant.i18n.dates import short_day

SEOUL = ZoneInfo("Asia/Seoul")
JEFF = {"authorization": f"Bearer {issue_token(JWT_SECRET, 'jeff')}"}
TITLES = ("Kickoff", "Trip", "Sync")


def days_ahead(days: int, hour: int = 10) -> datetime:
    """``days`` from today at ``hour``:00 in Seoul (jeff's zone)."""
    today = datetime.now(SEOUL).replace(hour=hour, minute=0, second=0, microsecond=0)
    return today + timedelta(days=days)


def event(start: datetime | str, end: datetime | str, **more: Any) -> dict[str, Any]:
    def iso(value: datetime | str) -> str:
        return value if isinstance(value, str) else value.isoformat()

    return {"title": "Year-end trip", "start_time": iso(start), "end_time": iso(end), **more}


async def all_events(h: Harness, owner: str = "jeff") -> list[Any]:
    start, end = datetime(2000, 1, 1, tzinfo=UTC), datetime(9999, 1, 1, tzinfo=UTC)
    return await RedisEventStore(h.redis).list_events(owner, start, end)


async def no_dialog(h: Harness) -> None:
    """After the answer: nothing was asked of the phone."""
    assert [m for m in h.sendbird.messages if m.is_rpc] == []


@pytest.mark.parametrize(
    ("end", "said"),
    [("9000-12-31T18:00:00+09:00", "check the year"), (days_ahead(19 + 20), "at most 14 days")],
    ids=["year-9000", "20-days"],
)
async def test_an_event_ending_years_or_weeks_later_is_sent_back_before_any_dialog(
    start_server: Any, directory: Any, end: datetime | str, said: str
) -> None:
    trip = event(days_ahead(19), end)
    async with start_server(model=scripted(("create_event", trip))) as h:
        await h.user_says("book the year-end trip")
        [reply] = await h.replies(1)
        assert reply.text.startswith("create_event retried") and said in reply.text, reply.text
        await no_dialog(h)
        assert await all_events(h) == []


@pytest.mark.parametrize(
    ("start", "end"),
    [
        ("9999-12-31T23:00:00-14:00", "9999-12-31T23:30:00-14:00"),
        ("0001-01-01T00:00:00+14:00", "0001-01-01T01:00:00+14:00"),
        ("0001-01-01T00:00:00-14:00", "0001-01-01T01:00:00-14:00"),
        ("1999-12-31T10:00:00+09:00", "1999-12-31T11:00:00+09:00"),
    ],
)
async def test_times_at_the_edges_of_the_calendar_are_a_tool_error_not_a_crash(
    start_server: Any, directory: Any, start: str, end: str
) -> None:
    async with start_server(model=scripted(("create_event", event(start, end)))) as h:
        await h.user_says("book it")
        [reply] = await h.replies(1)
        assert reply.text.startswith("create_event retried"), reply.text
        await no_dialog(h)
        assert await all_events(h) == []


async def test_date_ranges_at_the_edges_of_the_calendar_are_a_tool_error_not_a_crash(
    start_server: Any, directory: Any
) -> None:
    edge = {"start_date": "9999-12-31T23:00:00-14:00"}
    phone = {"notification_message": "Reading", "start_date": "0001-01-01T00:00:00+14:00"}
    model = scripted(
        ("get_events", edge), ("get_calendar_events", {**phone, "end_date": phone["start_date"]})
    )
    async with start_server(model=model) as h:
        await h.user_says("what is on then")
        [reply] = await h.replies(1)
        assert "get_events retried" in reply.text and "get_calendar_events retried" in reply.text, reply.text
        await no_dialog(h)


async def test_an_event_further_than_two_years_ahead_is_sent_back(start_server: Any, directory: Any) -> None:
    later = days_ahead(2 * 366 + 2)
    far = event(later, later + timedelta(hours=1))
    async with start_server(model=scripted(("create_event", far))) as h:
        await h.user_says("book it")
        [reply] = await h.replies(1)
        assert reply.text.startswith("create_event retried") and "2 years" in reply.text, reply.text
        await no_dialog(h)


async def test_an_update_to_an_event_longer_than_14_days_is_sent_back(
    start_server: Any, directory: Any, redis: Any
) -> None:
    start = days_ahead(3)
    trip = await RedisEventStore(redis).create(
        "jeff", title="Trip", start_time=start, end_time=start + timedelta(days=2)
    )
    longer = {"event_id": trip.event_id, "end_time": (start + timedelta(days=20)).isoformat()}
    async with start_server(model=scripted(("update_event", longer))) as h:
        await h.user_says("make the trip longer")
        [reply] = await h.replies(1)
        assert reply.text.startswith("update_event retried") and "14 days" in reply.text, reply.text
        await no_dialog(h)
        assert (await RedisEventStore(redis).get(trip.event_id)) == trip


async def test_an_edit_in_the_dialog_to_a_20_day_event_is_422_and_the_call_waits(
    start_server: Any, directory: Any
) -> None:
    start = days_ahead(5)
    async with start_server(model=scripted(("create_event", event(start, start + timedelta(hours=2))))) as h:
        await h.user_says("book it")
        [rpc] = await h.rpc_requests(1)
        longer = {"confirmed": True, "edited": {"end_time": (start + timedelta(days=20)).isoformat()}}
        r = await h.answer(rpc["id"], result=longer)
        assert r.status_code == 422 and "14 days" in r.json()["error"]["message"], r.text
        for edge in ("9999-12-31T23:00:00-14:00", "0001-01-01T00:00:00+14:00"):
            edit = {"confirmed": True, "edited": {"start_time": edge}}
            assert (await h.answer(rpc["id"], result=edit)).status_code == 422, edge
        state = await h.http.get(f"/api/v1/agent/calls/{rpc['id']}", headers=JEFF)
        assert state.json()["state"] == "pending"
        assert await all_events(h) == []

        assert (await h.answer(rpc["id"], result={"confirmed": True})).json() == {"status": "resuming"}
        [reply] = await h.replies(1)
        assert reply.text.startswith("create_event success")
        [made] = await all_events(h)
        assert made.end_time == start + timedelta(hours=2)


async def test_the_dialog_says_the_year_of_an_event_in_another_year_or_over_several_days(
    start_server: Any, directory: Any
) -> None:
    next_year = datetime(datetime.now(SEOUL).year + 1, 1, 5, 10, tzinfo=SEOUL)
    trip_start = days_ahead(6)
    trip_end = trip_start + timedelta(days=3)
    soon = days_ahead(1)
    model = scripted(
        ("create_event", event(next_year, next_year + timedelta(hours=1), title="Kickoff")),
        ("create_event", event(trip_start, trip_end, title="Trip")),
        ("create_event", event(soon, soon + timedelta(hours=1), title="Sync")),
    )
    async with start_server(model=model) as h:
        await h.user_says("book them")
        rpcs = await h.rpc_requests(3)
        message = {
            t: next(r["params"]["message"] for r in rpcs if t in r["params"]["message"]) for t in TITLES
        }
        assert f"{short_day(next_year, 'en')} {next_year.year} 10:00–11:00" in message["Kickoff"]
        assert (
            f"{short_day(trip_start, 'en')} {trip_start.year} 10:00 – "
            f"{short_day(trip_end, 'en')} {trip_end.year} 10:00"
        ) in message["Trip"]
        if soon.year == datetime.now(SEOUL).year:  # this year, within a day: no year
            assert f"{short_day(soon, 'en')} 10:00–11:00" in message["Sync"]
            assert str(soon.year) not in message["Sync"]
